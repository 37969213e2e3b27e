package verify

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// log is a partition held in memory, served two records per fetch.
type log []catchup.Record

func (l log) Fetch(_ context.Context, _ catchup.Partition, from int64, _ int32) (catchup.Fetched, error) {
	var out []catchup.Record
	next := from
	for _, r := range l {
		if r.Offset >= from && len(out) < 2 {
			out = append(out, r)
			next = r.Offset + 1
		}
	}
	return catchup.Fetched{Records: out, Next: next}, nil
}

func (l log) ListOffsets(_ context.Context, ps []catchup.Partition) ([]catchup.Offsets, error) {
	end := int64(0)
	if len(l) > 0 {
		end = l[len(l)-1].Offset + 1
	}
	return []catchup.Offsets{{Partition: ps[0], HighWatermark: end, LastStable: end}}, nil
}

var p = catchup.Partition{Topic: "t", Partition: 1}

func source(n int) log {
	var l log
	for i := range n {
		l = append(l, catchup.Record{Offset: int64(i * 2), Key: []byte{byte(i)}, Value: []byte("v"), Timestamp: time.UnixMilli(int64(i))})
	}
	return l
}

// copyOf is the target an exact copy of src would be; edit changes it.
func copyOf(src log, edit func(log) log) log {
	var l log
	for _, r := range src {
		r.Headers = append(append([]catchup.Header(nil), r.Headers...), catchup.Header{
			Key: catchup.ProvenanceHeader, Value: catchup.AppendProvenance(nil, catchup.Provenance{Cluster: "src", Partition: p, Offset: r.Offset}),
		})
		l = append(l, r)
	}
	if edit != nil {
		l = edit(l)
	}
	for i := range l {
		l[i].Offset = int64(i)
	}
	return l
}

// looped returns src with the record at index i copied from cluster "dst":
// loop prevention skips it.
func looped(src log, i int) log {
	out := slices.Clone(src)
	out[i].Headers = []catchup.Header{{Key: catchup.ProvenanceHeader,
		Value: catchup.AppendProvenance(nil, catchup.Provenance{Cluster: "dst", Partition: p, Offset: 99})}}
	return out
}

// copyAt is a copy of the source record r claiming source offset off.
func copyAt(r catchup.Record, off int64) catchup.Record {
	r.Headers = append(slices.Clone(r.Headers), catchup.Header{
		Key: catchup.ProvenanceHeader, Value: catchup.AppendProvenance(nil, catchup.Provenance{Cluster: "src", Partition: p, Offset: off}),
	})
	return r
}

// TestPartition: every way a target can differ from its source, with the
// exact count of each class; the counts add up to the source and target
// record counts.
func TestPartition(t *testing.T) {
	src := source(6) // source offsets 0, 2, ..., 10; the odd offsets are holes
	tests := []struct {
		name  string
		src   log
		from  int64
		to    int64
		dst   log
		want  catchup.Verification
		first string
	}{
		{name: "exact copy", dst: copyOf(src, nil), want: catchup.Verification{Source: 6, Matched: 6, Target: 6}},
		{name: "a record removed", dst: copyOf(src, func(l log) log { return append(l[:2:2], l[3:]...) }),
			want:  catchup.Verification{Source: 6, Matched: 5, Missing: 1, Target: 5},
			first: "source offset 4 is missing from the target"},
		{name: "a record duplicated", dst: copyOf(src, func(l log) log { return append(l[:3:3], l[2:]...) }),
			want:  catchup.Verification{Source: 6, Matched: 6, Duplicated: 1, Target: 7},
			first: "source offset 4 is duplicated in the target at offset 3"},
		{name: "a record modified in place", dst: copyOf(src, func(l log) log { l[1].Value = []byte("w"); return l }),
			want:  catchup.Verification{Source: 6, Matched: 5, Differing: 1, Replaced: 1, Target: 6},
			first: "source offset 2 differs from its copy at target offset 1"},
		{name: "a null key became empty", dst: copyOf(src, func(l log) log { l[1].Key = []byte{}; return l }),
			want: catchup.Verification{Source: 6, Matched: 5, Differing: 1, Replaced: 1, Target: 6}},
		{name: "a tampered copy beside the true one", dst: copyOf(src, func(l log) log {
			bad := l[1]
			bad.Value = []byte("tampered")
			return append(l, bad)
		}), want: catchup.Verification{Source: 6, Matched: 6, Differing: 1, Target: 7},
			first: "source offset 2 differs from its copy at target offset 6"},
		{name: "a tampered copy before the true one", dst: copyOf(src, func(l log) log {
			bad := l[1]
			bad.Value = []byte("tampered")
			return slices.Concat(l[:1], log{bad}, l[1:])
		}), want: catchup.Verification{Source: 6, Matched: 6, Differing: 1, Target: 7}},
		{name: "foreign records", dst: copyOf(src, func(l log) log {
			other := copyAt(src[0], 0)
			other.Headers[0].Value = catchup.AppendProvenance(nil, catchup.Provenance{Cluster: "elsewhere", Partition: p, Offset: 0})
			return slices.Concat(log{{Key: []byte("native")}}, l, log{other})
		}), want: catchup.Verification{Source: 6, Matched: 6, Foreign: 2, Target: 8}},
		{name: "two records swapped", dst: copyOf(src, func(l log) log { l[1], l[2] = l[2], l[1]; return l }),
			want:  catchup.Verification{Source: 6, Matched: 5, OutOfOrder: 1, Target: 6},
			first: "target offset 2 holds source offset 2 after a copy of source offset 4"},
		{name: "second half before the first (a backfill before the first run)", dst: copyOf(src, func(l log) log {
			return slices.Concat(l[3:], l[:3])
		}), want: catchup.Verification{Source: 6, Matched: 3, OutOfOrder: 3, Target: 6}},
		{name: "reversed", dst: copyOf(src, func(l log) log { slices.Reverse(l); return l }),
			want: catchup.Verification{Source: 6, Matched: 1, OutOfOrder: 5, Target: 6}},
		{name: "loop-prevented record", src: looped(src, 2), dst: copyOf(src, func(l log) log { return append(l[:2:2], l[3:]...) }),
			want: catchup.Verification{Source: 6, Matched: 5, LoopSkipped: 1, Target: 5}},
		{name: "loop-prevented record copied all the same", src: looped(src, 2), dst: copyOf(looped(src, 2), nil),
			want: catchup.Verification{Source: 6, Matched: 6, Target: 6}},
		{name: "late start: copies before the range", from: 4, dst: copyOf(src, nil),
			want: catchup.Verification{Source: 4, Matched: 4, Outside: 2, Target: 6}},
		{name: "late start: nothing before the range", from: 4, dst: copyOf(src[2:], nil),
			want: catchup.Verification{Source: 4, Matched: 4, Target: 4}},
		{name: "range ends before the copies do", to: 6, dst: copyOf(src, nil),
			want: catchup.Verification{Source: 3, Matched: 3, Outside: 3, Target: 6}},
		{name: "a copy of an offset the source does not hold", dst: copyOf(src, func(l log) log {
			return append(l, copyAt(src[0], 3))
		}), want: catchup.Verification{Source: 6, Matched: 6, Outside: 1, Target: 7},
			first: "target offset 6 is a copy of source offset 3, which the source does not hold"},
		{name: "empty target", dst: nil,
			want: catchup.Verification{Source: 6, Missing: 6}, first: "source offset 0 is missing from the target"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.src
			if s == nil {
				s = src
			}
			to := tt.to
			if to == 0 {
				to = 11
			}
			got, err := Partition(t.Context(), s, tt.dst, p, p, tt.from, to, Options{Cluster: "src", LoopCluster: "dst"})
			if err != nil {
				t.Fatal(err)
			}
			want := Result{Partition: p, Verification: tt.want}
			want.From, want.To, want.First = tt.from, to, tt.first
			opts := []cmp.Option{}
			if tt.first == "" {
				opts = append(opts, cmpopts.IgnoreFields(catchup.Verification{}, "First"))
			}
			if diff := cmp.Diff(want, got, opts...); diff != "" {
				t.Errorf("Partition (-want +got):\n%s", diff)
			}
			if wantOK := tt.want.Missing+tt.want.Duplicated+tt.want.Differing+tt.want.OutOfOrder == 0; got.OK() != wantOK {
				t.Errorf("OK() = %v for %+v, want %v", got.OK(), got, wantOK)
			}
		})
	}
}

// TestPartitionLoopSkippedNeedsLoopCluster: without loop prevention, a
// record from the target cluster that is not in the target is missing.
func TestPartitionLoopSkippedNeedsLoopCluster(t *testing.T) {
	src := looped(source(3), 1)
	got, err := Partition(t.Context(), src, copyOf(source(3)[:1], nil), p, p, 0, 5, Options{Cluster: "src"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Missing != 2 || got.LoopSkipped != 0 {
		t.Errorf("Partition without LoopCluster = %+v; want 2 missing, none loop-skipped", got.Verification)
	}
}

// counting is a Reader that counts its fetches.
type counting struct {
	Reader
	fetches int
}

func (c *counting) Fetch(ctx context.Context, p catchup.Partition, from int64, maxBytes int32) (catchup.Fetched, error) {
	c.fetches++
	return c.Reader.Fetch(ctx, p, from, maxBytes)
}

// TestInOrderCopyReadsEachSideOnce pins what an exact copy in order costs:
// each side read once, one fetch per batch the log serves. A cursor that
// drops what it buffered after every matched record fetches again per
// record: on a compressed source that is the whole batch decompressed
// once per record (the crash harness's verify went from 3 s to 40 s).
func TestInOrderCopyReadsEachSideOnce(t *testing.T) {
	src := source(40) // offsets 0, 2, ..., 78: a hole after every record
	dst := copyOf(src, nil)
	s, d := &counting{Reader: src}, &counting{Reader: dst}
	r, err := Partition(t.Context(), s, d, p, p, 0, 79, Options{Cluster: "src"})
	if err != nil || r.Matched != 40 || !r.OK() {
		t.Fatalf("Partition: %+v, %v; want 40 matched", r, err)
	}
	// log serves two records a fetch: 20 fetches a side, and one more to
	// find the end.
	if s.fetches > 21 || d.fetches > 21 {
		t.Errorf("source fetched %d times, target %d times, for 40 records served 2 a fetch; want at most 21 each", s.fetches, d.fetches)
	}
}

// TestOnSourceReportsTheRange: OnSource is told, fetch by fetch, offsets
// that add up to the range verified (holes included) and the bytes of the
// source records in it, so a progress display reaches its total.
func TestOnSourceReportsTheRange(t *testing.T) {
	src := source(40) // offsets 0, 2, ..., 78
	var offsets, bytes int64
	calls := 0
	o := Options{Cluster: "src", OnSource: func(n, b int64) { offsets += n; bytes += b; calls++ }}
	if _, err := Partition(t.Context(), src, copyOf(src, nil), p, p, 10, 70, o); err != nil {
		t.Fatal(err)
	}
	var want int64
	for i := range src {
		if src[i].Offset >= 10 && src[i].Offset < 70 {
			want += int64(src[i].Size())
		}
	}
	if offsets != 60 || bytes != want || calls < 2 {
		t.Errorf("OnSource: %d offsets, %d bytes in %d calls; want 60 offsets (the range [10, 70)), %d bytes, a call per fetch", offsets, bytes, calls, want)
	}
}
