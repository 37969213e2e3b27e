// Package verify compares a source partition with its copy in the target,
// record for record, through the provenance headers.
//
// It reads the whole target partition once, in target order, and matches
// every copy to its source record by the source offset its provenance
// header names, whatever the order of the copies. The source is read along
// with the target: in source order while the copies are in source order
// (one pass over each side for a copy in order), with one fetch to seek
// back for each copy that comes after a copy of a later source offset.
//
// Memory: three bits per source offset in [From, To) (which offsets have an
// equal copy, a differing copy, or need none), so 37.5 MB for a range of
// 100 million offsets, plus one fetch per side. One partition is compared
// at a time.
package verify

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/bits-and-blooms/bitset"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// Reader reads a partition; replicate.Source (kafkago.Source) is one.
type Reader interface {
	Fetch(ctx context.Context, p catchup.Partition, from int64, maxBytes int32) (catchup.Fetched, error)
	ListOffsets(ctx context.Context, ps []catchup.Partition) ([]catchup.Offsets, error)
}

// Result is the comparison of one partition's source range [From, To) with
// the whole target partition: catchup.Verification says what each count
// holds and how they add up. Partition does not set Behind and Stuck: they
// come from the checkpoint, not from the records.
type Result struct {
	catchup.Partition
	catchup.Verification
}

// Options say what to compare.
type Options struct {
	Cluster string // source cluster name in the provenance headers
	// LoopCluster, if set, is the target cluster's name with loop
	// prevention on: a source record copied from it has no copy by design
	// and counts as LoopSkipped, not Missing.
	LoopCluster string
	FetchBytes  int32 // default 1 MiB
	// OnSource, if set, is called after each fetch from the source with the
	// offsets it moved the source read past and their records' bytes: a
	// progress display's feed. It is called from the goroutine of Partition.
	OnSource func(offsets, bytes int64)
}

// Partition compares source partition p over [from, to) with every record
// of target partition tp. It returns an error if a side cannot be read, or
// if the counts fail to add up (a bug: they add up by construction).
func Partition(ctx context.Context, src, dst Reader, p, tp catchup.Partition, from, to int64, o Options) (Result, error) {
	if o.FetchBytes <= 0 {
		o.FetchBytes = 1 << 20
	}
	to = max(to, from)
	res := Result{Partition: p, Verification: catchup.Verification{From: from, To: to}}
	marks, err := dst.ListOffsets(ctx, []catchup.Partition{tp})
	if err != nil {
		return res, fmt.Errorf("verify %s: target offsets: %w", p, err)
	}
	n := uint(to - from)
	m := &matcher{
		res: &res.Verification, o: o,
		src:   &cursor{r: src, p: p, next: from, end: to, bytes: o.FetchBytes, onFetch: o.OnSource},
		high:  from,
		equal: bitset.New(n), differed: bitset.New(n), skip: bitset.New(n),
		maxCopied: -1,
	}
	if o.LoopCluster != "" {
		m.loopPrefix = catchup.CopiedPrefix(o.LoopCluster)
	}
	t := &cursor{r: dst, p: tp, next: marks[0].LogStart, end: marks[0].HighWatermark, bytes: o.FetchBytes}
	for {
		tr, err := t.peek(ctx)
		if err != nil {
			return res, fmt.Errorf("verify %s: target %s: %w", p, tp, err)
		}
		if tr == nil {
			break
		}
		res.Target++
		if err := m.copyAt(ctx, p, tr); err != nil {
			return res, fmt.Errorf("verify %s: source: %w", p, err)
		}
		t.advance()
	}
	// The source records after the last copy.
	if _, err := m.sourceAt(ctx, to); err != nil {
		return res, fmt.Errorf("verify %s: source: %w", p, err)
	}
	return res, m.finish()
}

// matcher classifies the copies of one source partition's range.
type matcher struct {
	res *catchup.Verification
	o   Options
	src *cursor
	// high is the first source offset not yet counted: every source offset
	// in [From, high) was read once and counted in Source (or was a hole).
	high int64
	// By source offset - From: an equal copy was found; a differing copy
	// was found; the offset needs no copy (a hole in the source, or a
	// record that loop prevention skips).
	equal, differed, skip *bitset.BitSet
	looped, loopCopied    int64  // loop-skippable source records; those of them with a copy all the same
	maxCopied             int64  // highest source offset of a copy seen so far in the range; -1 before one
	loopPrefix            string // catchup.CopiedPrefix(o.LoopCluster); "" without loop prevention
}

// copyAt classifies target record tr.
func (m *matcher) copyAt(ctx context.Context, p catchup.Partition, tr *catchup.Record) error {
	res := m.res
	off, ok := catchup.SourceOffset(tr, m.o.Cluster, p)
	if !ok {
		res.Foreign++
		return nil
	}
	if off < res.From || off >= res.To {
		res.Outside++
		return nil
	}
	sr, err := m.sourceAt(ctx, off)
	if err != nil {
		return err
	}
	if sr == nil {
		res.Outside++
		m.note("target offset %d is a copy of source offset %d, which the source does not hold", tr.Offset, off)
		return nil
	}
	i := uint(off - res.From)
	if !m.equal.Test(i) && !m.differed.Test(i) && m.skip.Test(i) {
		m.loopCopied++ // a looped record that has a copy all the same
	}
	later := off < m.maxCopied
	m.maxCopied = max(m.maxCopied, off)
	switch {
	case digest(sr, false) != digest(tr, true):
		res.Differing++
		m.differed.Set(i)
		m.note("source offset %d differs from its copy at target offset %d", off, tr.Offset)
	case m.equal.Test(i):
		res.Duplicated++
		m.note("source offset %d is duplicated in the target at offset %d", off, tr.Offset)
	case later:
		res.OutOfOrder++
		m.equal.Set(i)
		m.note("target offset %d holds source offset %d after a copy of source offset %d", tr.Offset, off, m.maxCopied)
	default:
		res.Matched++
		m.equal.Set(i)
	}
	return nil
}

// sourceAt returns the source record at off, nil if the source holds none
// there (a hole, or off at or past To). Every source record it reads past
// high is counted once.
func (m *matcher) sourceAt(ctx context.Context, off int64) (*catchup.Record, error) {
	s := m.src
	switch {
	case off < s.pos():
		s.seek(off) // a copy after a copy of a later offset: read back
	case off >= m.high && s.pos() < m.high:
		s.skip(m.high) // back from reading back, or past the record just matched: skip what was counted
	}
	for {
		r, err := s.peek(ctx)
		if err != nil {
			return nil, err
		}
		if r == nil {
			m.pass(s.end)
			return nil, nil
		}
		m.pass(r.Offset)
		if r.Offset >= m.high {
			m.count(r)
		}
		switch {
		case r.Offset < off:
			s.advance()
		case r.Offset == off:
			return r, nil
		default:
			return nil, nil
		}
	}
}

// pass marks the source offsets in [high, off) as holes: the source read
// past them without a record.
func (m *matcher) pass(off int64) {
	for ; m.high < off; m.high++ {
		m.skip.Set(uint(m.high - m.res.From))
	}
}

// count counts source record r, at high.
func (m *matcher) count(r *catchup.Record) {
	m.res.Source++
	if m.loopPrefix != "" && catchup.CopiedWith(r, m.loopPrefix) {
		m.looped++
		m.skip.Set(uint(r.Offset - m.res.From))
	}
	m.high = r.Offset + 1
}

// finish derives the per-source-record counts and checks that every count
// adds up.
func (m *matcher) finish() error {
	res := m.res
	res.Replaced = int64(m.differed.DifferenceCardinality(m.equal))
	res.LoopSkipped = m.looped - m.loopCopied
	covered := m.skip // no longer needed on its own
	covered.InPlaceUnion(m.equal)
	covered.InPlaceUnion(m.differed)
	res.Missing = (res.To - res.From) - int64(covered.Count())
	if res.Missing > 0 {
		first, _ := covered.NextClear(0)
		m.note("source offset %d is missing from the target", res.From+int64(first))
	}
	sum := res.Matched + res.OutOfOrder + res.Missing + res.LoopSkipped + res.Replaced
	tsum := res.Matched + res.OutOfOrder + res.Differing + res.Duplicated + res.Foreign + res.Outside
	if sum != res.Source || tsum != res.Target {
		return fmt.Errorf("verify: counts do not add up: %+v", *res)
	}
	return nil
}

// note keeps the first problem found.
func (m *matcher) note(format string, args ...any) {
	if m.res.First == "" {
		m.res.First = fmt.Sprintf(format, args...)
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
	// onFetch, if set, gets the offsets and bytes of each fetch below end.
	onFetch func(offsets, bytes int64)
}

// pos is the offset the cursor reads from: that of its next buffered
// record, or the next to fetch.
func (c *cursor) pos() int64 {
	if len(c.buf) > 0 {
		return c.buf[0].Offset
	}
	return c.next
}

// seek makes the cursor read from off.
func (c *cursor) seek(off int64) { c.buf, c.next = nil, off }

// skip makes the cursor read from off, at or past its position, keeping
// what it buffered from there on: after each matched record the cursor
// stands on it, and a seek would fetch its whole batch again for the next.
func (c *cursor) skip(off int64) {
	for len(c.buf) > 0 && c.buf[0].Offset < off {
		c.buf = c.buf[1:]
	}
	if len(c.buf) == 0 && c.next < off {
		c.next = off
	}
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
		moved := min(f.Next, c.end) - c.next
		c.buf, c.next = f.Records, f.Next
		for len(c.buf) > 0 && c.buf[len(c.buf)-1].Offset >= c.end {
			c.buf = c.buf[:len(c.buf)-1]
		}
		if c.onFetch != nil {
			var n int64
			for i := range c.buf {
				n += int64(c.buf[i].Size())
			}
			c.onFetch(moved, n)
		}
	}
	if len(c.buf) == 0 {
		return nil, nil
	}
	return &c.buf[0], nil
}

func (c *cursor) advance() { c.buf = c.buf[1:] }

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
