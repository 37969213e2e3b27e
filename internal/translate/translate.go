// Package translate finds where a consumer group resumes on the target after
// a failover: for the offset the group committed on a source partition, the
// target offset of the first copy of a source record at or after it, found
// through the provenance headers by binary search over target offsets.
//
// The search relies on what the copy engine guarantees: a source partition is
// copied into the target partition of the same number in order, so the
// provenance source offsets of its copies rise with the target offset. Records
// of other origins (other producers, other pipelines, transaction markers,
// compacted holes) may sit between them and are stepped over.
package translate

import (
	"context"
	"fmt"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// Reader reads the target cluster; kafkago.Source over the target (with
// read_uncommitted) is one.
type Reader interface {
	// Fetch returns the data records of p from offset from on, in offset
	// order, and Next, the offset after the last offset the answer covered.
	Fetch(ctx context.Context, p catchup.Partition, from int64, maxBytes int32) (catchup.Fetched, error)
	// ListOffsets returns the watermarks of ps, in their order.
	ListOffsets(ctx context.Context, ps []catchup.Partition) ([]catchup.Offsets, error)
}

// Status says what a Position means.
type Status string

const (
	// StatusExact: Offset is the target offset of the first copy of a
	// source record at or after the committed offset. A consumer of the
	// group that starts there on the target reads what it would have read
	// next on the source.
	StatusExact Status = "exact"
	// StatusEnd: the group had consumed everything that was copied; Offset
	// is right after the last copy.
	StatusEnd Status = "end"
	// StatusLagging: the group had consumed source records that are not
	// copied yet (Lag of them, by offsets). Offset is right after the last
	// copy; a consumer there gets those records again once they are copied.
	StatusLagging Status = "lagging"
	// StatusNotCopied: the target holds no copy of the source partition.
	StatusNotCopied Status = "not_copied"
)

// Position is where a consumer group resumes on the target.
type Position struct {
	Source    catchup.Partition // source partition
	Committed int64             // the group's committed offset on it
	Target    catchup.Partition // target partition it was copied into
	Status    Status
	// Offset is the target offset to commit; -1 with StatusNotCopied.
	Offset int64
	// SourceOffset is the source offset of the copy at Offset
	// (StatusExact); above Committed when Committed fell on a record that
	// is not in the target (compacted away, or a transaction marker).
	SourceOffset int64
	// LastCopied is the source offset of the last copy in the target (not
	// StatusExact, -1 unknown there).
	LastCopied int64
	Lag        int64 // StatusLagging: Committed - (LastCopied + 1)
	Probes     int   // fetches the search made
}

// Options tune Find.
type Options struct {
	// Cluster is the source cluster name in the provenance headers; required.
	Cluster string
	// FetchBytes is what one probe asks for; the broker returns at least
	// one whole batch. Default 64 KiB.
	FetchBytes int32
}

// Find returns where a group that committed offset committed on source
// partition p resumes on target partition tp: the target offset of the first
// record that carries provenance from p with a source offset at or above
// committed. It reads the target between its log start and its end, about
// log2 of that many offsets probes, each one fetch (more where records of
// other origins sit between copies). If no copy has a source offset at or
// above committed, the position is right after the last copy.
func Find(ctx context.Context, r Reader, p, tp catchup.Partition, committed int64, o Options) (Position, error) {
	if o.FetchBytes <= 0 {
		o.FetchBytes = 64 << 10
	}
	pos := Position{Source: p, Committed: committed, Target: tp, Offset: -1, SourceOffset: -1, LastCopied: -1}
	marks, err := r.ListOffsets(ctx, []catchup.Partition{tp})
	if err != nil {
		return pos, fmt.Errorf("translate %s: target offsets of %s: %w", p, tp, err)
	}
	s := &search{r: r, p: p, tp: tp, end: marks[0].HighWatermark, o: o}
	// Invariant: the answer is in [lo, hi]; every probe below lo found a
	// copy of a source offset below committed; the probe at hi found one
	// at or above it (found) or hi is the end.
	lo, hi := marks[0].LogStart, marks[0].HighWatermark
	var found *copied
	for lo < hi {
		mid := lo + (hi-lo)/2
		c, err := s.probe(ctx, mid)
		if err != nil {
			return pos, err
		}
		switch {
		case c == nil || c.source >= committed:
			hi, found = mid, c
		default:
			pos.LastCopied = max(pos.LastCopied, c.source)
			lo = c.target + 1 // no copy at or above committed up to this one
		}
	}
	pos.Probes = s.probes
	switch {
	case found != nil:
		pos.Status, pos.Offset, pos.SourceOffset, pos.LastCopied = StatusExact, found.target, found.source, -1
		return pos, nil
	case pos.LastCopied < 0:
		pos.Status = StatusNotCopied
		return pos, nil
	}
	// lo is one past the last copy: the last probe that moved lo found it
	// (a probe after it finds nothing, so it only moves hi).
	pos.Offset = lo
	pos.Lag = committed - (pos.LastCopied + 1)
	if pos.Lag > 0 {
		pos.Status = StatusLagging
	} else {
		pos.Status, pos.Lag = StatusEnd, 0
	}
	return pos, nil
}

// copied is a record of the target that carries provenance from the source
// partition: its target and source offsets.
type copied struct{ target, source int64 }

type search struct {
	r      Reader
	p, tp  catchup.Partition
	end    int64
	o      Options
	probes int
}

// probe returns the first copy of a record of s.p at or after target offset
// at, or nil if there is none before the end.
func (s *search) probe(ctx context.Context, at int64) (*copied, error) {
	for from := at; from < s.end; {
		s.probes++
		f, err := s.r.Fetch(ctx, s.tp, from, s.o.FetchBytes)
		if err != nil {
			return nil, fmt.Errorf("translate %s: read %s at %d: %w", s.p, s.tp, from, err)
		}
		for i := range f.Records {
			rec := &f.Records[i]
			if rec.Offset < at {
				continue
			}
			if off, ok := catchup.SourceOffset(rec, s.o.Cluster, s.p); ok {
				return &copied{target: rec.Offset, source: off}, nil
			}
		}
		if f.Next <= from {
			return nil, fmt.Errorf("translate %s: read %s at %d: no progress below the end %d", s.p, s.tp, from, s.end)
		}
		from = f.Next
	}
	return nil, nil
}
