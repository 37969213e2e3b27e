// Package verify compares a source partition with its copy in the target,
// record for record, through the provenance headers. It streams both sides
// in offset order, so its memory does not grow with the partition.
package verify

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// Reader reads a partition; replicate.Source (kafkago.Source) is one.
type Reader interface {
	Fetch(ctx context.Context, p catchup.Partition, from int64, maxBytes int32) (replicate.Fetched, error)
	ListOffsets(ctx context.Context, ps []catchup.Partition) ([]catchup.Offsets, error)
}

// Result is the comparison of one partition's source range [From, To) with
// the target.
type Result struct {
	catchup.Partition
	From, To   int64
	Source     int64 // source records in [From, To)
	Matched    int64 // found once in the target, equal
	Missing    int64 // in the source, not in the target
	Duplicated int64 // extra copies in the target
	Differing  int64 // in the target with another key, value, headers or timestamp
	OutOfOrder int64 // in the target after a record of a later source offset
	// First names the first problem found, for the error message.
	First string
}

// OK reports whether the target holds an exact copy of the range.
func (r *Result) OK() bool {
	return r.Missing == 0 && r.Duplicated == 0 && r.Differing == 0 && r.OutOfOrder == 0
}

// Options say what to compare.
type Options struct {
	Cluster    string // source cluster name in the provenance headers
	FetchBytes int32  // default 1 MiB
}

// Partition compares source partition p over [from, to) with the records of
// target partition tp that carry provenance from p. Target records from
// other sources are ignored.
func Partition(ctx context.Context, src, dst Reader, p, tp catchup.Partition, from, to int64, o Options) (Result, error) {
	if o.FetchBytes <= 0 {
		o.FetchBytes = 1 << 20
	}
	res := Result{Partition: p, From: from, To: to}
	marks, err := dst.ListOffsets(ctx, []catchup.Partition{tp})
	if err != nil {
		return res, fmt.Errorf("verify %s: target offsets: %w", p, err)
	}
	s := &cursor{r: src, p: p, next: from, end: to, bytes: o.FetchBytes}
	t := &cursor{r: dst, p: tp, next: marks[0].LogStart, end: marks[0].HighWatermark, bytes: o.FetchBytes}
	maxSeen := int64(-1)
	note := func(format string, args ...any) {
		if res.First == "" {
			res.First = fmt.Sprintf(format, args...)
		}
	}
	// Both sides are walked in offset order: source offsets ascend, and so
	// do the provenance offsets of an exact copy.
	for {
		sr, err := s.peek(ctx)
		if err != nil {
			return res, fmt.Errorf("verify %s: source: %w", p, err)
		}
		tr, toff, err := t.peekFrom(ctx, o.Cluster, p, from, to)
		if err != nil {
			return res, fmt.Errorf("verify %s: target: %w", p, err)
		}
		switch {
		case sr == nil && tr == nil:
			return res, nil
		case tr == nil || sr != nil && sr.Offset < toff:
			res.Source++
			res.Missing++
			note("source offset %d is missing from the target", sr.Offset)
			s.advance()
		case sr == nil || toff < sr.Offset:
			if toff <= maxSeen {
				res.Duplicated++
				note("source offset %d is duplicated in the target at offset %d", toff, tr.Offset)
			} else {
				res.OutOfOrder++
				note("target offset %d holds source offset %d out of order", tr.Offset, toff)
			}
			t.advance()
		default: // same offset
			res.Source++
			if digest(sr, false) != digest(tr, true) {
				res.Differing++
				note("source offset %d differs from its copy at target offset %d", sr.Offset, tr.Offset)
			} else {
				res.Matched++
			}
			maxSeen = max(maxSeen, toff)
			s.advance()
			t.advance()
			// Later copies of the same source offset are duplicates.
			for {
				tr2, toff2, err := t.peekFrom(ctx, o.Cluster, p, from, to)
				if err != nil {
					return res, fmt.Errorf("verify %s: target: %w", p, err)
				}
				if tr2 == nil || toff2 != toff {
					break
				}
				res.Duplicated++
				note("source offset %d is duplicated in the target at offset %d", toff, tr2.Offset)
				t.advance()
			}
		}
	}
}

// cursor walks a partition's records in order, fetching as it goes.
type cursor struct {
	r     Reader
	p     catchup.Partition
	next  int64 // next offset to fetch
	end   int64 // stop before this offset
	bytes int32
	buf   []catchup.Record
}

func (c *cursor) peek(ctx context.Context) (*catchup.Record, error) {
	for len(c.buf) == 0 && c.next < c.end {
		f, err := c.r.Fetch(ctx, c.p, c.next, c.bytes)
		if err != nil {
			return nil, err
		}
		if f.Next <= c.next {
			return nil, fmt.Errorf("no records at offset %d below the end %d", c.next, c.end)
		}
		c.buf, c.next = f.Records, f.Next
		for len(c.buf) > 0 && c.buf[len(c.buf)-1].Offset >= c.end {
			c.buf = c.buf[:len(c.buf)-1]
		}
	}
	if len(c.buf) == 0 {
		return nil, nil
	}
	return &c.buf[0], nil
}

func (c *cursor) advance() { c.buf = c.buf[1:] }

// peekFrom returns the next target record whose provenance names cluster,
// source partition p and an offset in [from, to), skipping others.
func (c *cursor) peekFrom(ctx context.Context, cluster string, p catchup.Partition, from, to int64) (*catchup.Record, int64, error) {
	for {
		r, err := c.peek(ctx)
		if err != nil || r == nil {
			return nil, 0, err
		}
		if off, ok := catchup.SourceOffset(r, cluster, p); ok && off >= from && off < to {
			return r, off, nil
		}
		c.advance()
	}
}

// digest hashes what a copy must preserve: key and value (null apart from
// empty), headers in order, and the timestamp in milliseconds. With copied
// set it leaves out the last header, the provenance header catchup added.
func digest(r *catchup.Record, copied bool) [32]byte {
	h := sha256.New()
	var n [8]byte
	field := func(b []byte) {
		if b == nil {
			h.Write([]byte{0})
			return
		}
		h.Write([]byte{1})
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	field(r.Key)
	field(r.Value)
	hs := r.Headers
	if copied && len(hs) > 0 && hs[len(hs)-1].Key == catchup.ProvenanceHeader {
		hs = hs[:len(hs)-1]
	}
	for _, hd := range hs {
		field([]byte(hd.Key))
		field(hd.Value)
	}
	binary.BigEndian.PutUint64(n[:], uint64(r.Timestamp.UnixMilli()))
	h.Write(n[:])
	var out [32]byte
	h.Sum(out[:0])
	return out
}
