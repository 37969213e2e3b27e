package translate

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

var (
	srcP = catchup.Partition{Topic: "orders", Partition: 2}
	dstP = catchup.Partition{Topic: "orders.mirror", Partition: 2}
)

// entry is one offset of the fake target partition.
type entry struct {
	src    int64  // provenance source offset; -1: a record without provenance
	from   string // provenance cluster, default "src"
	marker bool   // a transaction marker: an offset without a data record
}

// fakeTarget is a target partition: entries at offsets start, start+1, ...,
// with holes where hole says (compacted away). Fetch returns perFetch
// offsets at a time.
type fakeTarget struct {
	start    int64
	entries  map[int64]entry
	end      int64
	perFetch int
	fetches  int
}

func (f *fakeTarget) ListOffsets(_ context.Context, ps []catchup.Partition) ([]catchup.Offsets, error) {
	return []catchup.Offsets{{Partition: ps[0], LogStart: f.start, HighWatermark: f.end, LastStable: f.end}}, nil
}

func (f *fakeTarget) Fetch(_ context.Context, p catchup.Partition, from int64, _ int32) (catchup.Fetched, error) {
	f.fetches++
	var out catchup.Fetched
	out.Next = from
	n := 0
	for off := max(from, f.start); off < f.end && n < f.perFetch; off++ {
		out.Next = off + 1
		e, ok := f.entries[off]
		if !ok {
			continue // a compacted hole: covered, not counted
		}
		n++
		if e.marker {
			continue
		}
		rec := catchup.Record{Offset: off}
		if e.src >= 0 {
			cluster := e.from
			if cluster == "" {
				cluster = "src"
			}
			rec.Headers = []catchup.Header{{Key: catchup.ProvenanceHeader,
				Value: catchup.AppendProvenance(nil, catchup.Provenance{Cluster: cluster, Partition: srcP, Offset: e.src})}}
		}
		out.Records = append(out.Records, rec)
	}
	return out, nil
}

// build lays out entries from offset start on.
func build(start int64, es ...entry) *fakeTarget {
	f := &fakeTarget{start: start, entries: map[int64]entry{}, perFetch: 3}
	for i, e := range es {
		f.entries[start+int64(i)] = e
	}
	f.end = start + int64(len(es))
	return f
}

func cp(src int64) entry           { return entry{src: src} }
func foreign() entry               { return entry{src: -1} }
func marker() entry                { return entry{marker: true} }
func otherCluster(src int64) entry { return entry{src: src, from: "elsewhere"} }

// oracle finds the answer by reading every offset.
func oracle(f *fakeTarget, committed int64) (status Status, offset, source, last int64) {
	last, lastAt := int64(-1), int64(-1)
	for off := f.start; off < f.end; off++ {
		e, ok := f.entries[off]
		if !ok || e.marker || e.src < 0 || e.from != "" {
			continue
		}
		if e.src >= committed {
			return StatusExact, off, e.src, -1
		}
		last, lastAt = e.src, off
	}
	switch {
	case last < 0:
		return StatusNotCopied, -1, -1, -1
	case committed > last+1:
		return StatusLagging, lastAt + 1, -1, last
	}
	return StatusEnd, lastAt + 1, -1, last
}

func TestFind(t *testing.T) {
	// Target offsets 10..: copies of source offsets 0, 1, 2, 5, 6 (3 and 4
	// compacted away on the source before the copy), a record another
	// producer wrote, a marker, copies of 7 and 8, a record from another
	// cluster's pipeline, a copy of 9, then two foreign records.
	f := build(10, cp(0), cp(1), cp(2), cp(5), foreign(), cp(6), marker(), cp(7), cp(8), otherCluster(100), cp(9), foreign(), foreign())
	tests := []struct {
		name      string
		committed int64
		status    Status
		offset    int64
		source    int64
		lag       int64
	}{
		{"from the start", 0, StatusExact, 10, 0, 0},
		{"in the middle", 2, StatusExact, 12, 2, 0},
		{"in a compacted gap", 3, StatusExact, 13, 5, 0},
		{"after a foreign record", 6, StatusExact, 15, 6, 0},
		{"after a marker", 7, StatusExact, 17, 7, 0},
		{"past another cluster's copy", 9, StatusExact, 20, 9, 0},
		{"at the end of what was copied", 10, StatusEnd, 21, -1, 0},
		{"beyond what was copied", 15, StatusLagging, 21, -1, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Find(t.Context(), f, srcP, dstP, tt.committed, Options{Cluster: "src"})
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tt.status || got.Offset != tt.offset || got.SourceOffset != tt.source || got.Lag != tt.lag {
				t.Errorf("Find(committed %d) = %s at %d (source %d, lag %d); want %s at %d (source %d, lag %d)",
					tt.committed, got.Status, got.Offset, got.SourceOffset, got.Lag, tt.status, tt.offset, tt.source, tt.lag)
			}
			if got.Source != srcP || got.Target != dstP || got.Committed != tt.committed {
				t.Errorf("Find names %s→%s committed %d", got.Source, got.Target, got.Committed)
			}
		})
	}
}

func TestFindWithoutCopies(t *testing.T) {
	for name, f := range map[string]*fakeTarget{
		"empty target":    build(0),
		"foreign records": build(5, foreign(), marker(), foreign()),
		"another cluster": build(0, otherCluster(0), otherCluster(1)),
		"all deleted":     {start: 40, end: 40, entries: map[int64]entry{}, perFetch: 3},
	} {
		got, err := Find(t.Context(), f, srcP, dstP, 3, Options{Cluster: "src"})
		if err != nil || got.Status != StatusNotCopied || got.Offset != -1 {
			t.Errorf("%s: Find = %+v, %v; want not_copied at -1", name, got, err)
		}
	}
}

func TestFindAgreesWithReadingEverything(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		var es []entry
		src := int64(rng.IntN(5))
		for range rng.IntN(60) {
			switch rng.IntN(6) {
			case 0:
				es = append(es, foreign())
			case 1:
				es = append(es, marker())
			case 2:
				es = append(es, otherCluster(int64(rng.IntN(100))))
			default:
				es = append(es, cp(src))
				src += 1 + int64(rng.IntN(3)) // holes on the source
			}
		}
		f := build(int64(rng.IntN(20)), es...)
		for off := range f.end { // compacted holes on the target
			if rng.IntN(8) == 0 {
				delete(f.entries, off)
			}
		}
		f.perFetch = 1 + rng.IntN(4)
		for committed := range src + 3 {
			got, err := Find(t.Context(), f, srcP, dstP, committed, Options{Cluster: "src"})
			if err != nil {
				t.Fatalf("round %d committed %d: %v", round, committed, err)
			}
			status, offset, source, last := oracle(f, committed)
			if got.Status != status || got.Offset != offset || got.SourceOffset != source || got.LastCopied != last {
				t.Fatalf("round %d committed %d: Find = %s at %d (source %d, last %d); reading everything: %s at %d (source %d, last %d)",
					round, committed, got.Status, got.Offset, got.SourceOffset, got.LastCopied, status, offset, source, last)
			}
		}
	}
}

func TestFindProbesLogarithmically(t *testing.T) {
	const n = 1 << 16
	es := make([]entry, n)
	for i := range es {
		es[i] = cp(int64(i))
	}
	f := build(0, es...)
	f.perFetch = 100
	for _, committed := range []int64{0, 1, 12345, n - 1, n, n + 50} {
		f.fetches = 0
		got, err := Find(t.Context(), f, srcP, dstP, committed, Options{Cluster: "src"})
		if err != nil {
			t.Fatal(err)
		}
		if got.Probes != f.fetches || f.fetches > 20 {
			t.Errorf("committed %d: %d fetches (%d probes reported) over %d offsets; want at most 20", committed, f.fetches, got.Probes, n)
		}
	}
}
