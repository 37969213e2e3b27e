package verify

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// log is a partition held in memory, served two records per fetch.
type log []catchup.Record

func (l log) Fetch(_ context.Context, _ catchup.Partition, from int64, _ int32) (replicate.Fetched, error) {
	var out []catchup.Record
	next := from
	for _, r := range l {
		if r.Offset >= from && len(out) < 2 {
			out = append(out, r)
			next = r.Offset + 1
		}
	}
	return replicate.Fetched{Records: out, Next: next}, nil
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

func TestPartition(t *testing.T) {
	src := source(6) // source offsets 0, 2, ..., 10
	tests := []struct {
		name string
		dst  log
		want Result
	}{
		{"exact copy", copyOf(src, nil), Result{Source: 6, Matched: 6}},
		{"a record removed", copyOf(src, func(l log) log { return append(l[:2:2], l[3:]...) }),
			Result{Source: 6, Matched: 5, Missing: 1, First: "source offset 4 is missing from the target"}},
		{"a record duplicated", copyOf(src, func(l log) log { return append(l[:3:3], l[2:]...) }),
			Result{Source: 6, Matched: 6, Duplicated: 1, First: "source offset 4 is duplicated in the target at offset 3"}},
		{"a record modified", copyOf(src, func(l log) log { l[1].Value = []byte("w"); return l }),
			Result{Source: 6, Matched: 5, Differing: 1, First: "source offset 2 differs from its copy at target offset 1"}},
		{"a null value became empty", copyOf(src, func(l log) log { l[1].Key = []byte{}; return l }),
			Result{Source: 6, Matched: 5, Differing: 1, First: "source offset 2 differs from its copy at target offset 1"}},
		{"foreign records are ignored", copyOf(src, func(l log) log {
			return append(l, catchup.Record{Key: []byte("other")})
		}), Result{Source: 6, Matched: 6}},
		{"order swapped", copyOf(src, func(l log) log { l[1], l[2] = l[2], l[1]; return l }),
			Result{Source: 6, Matched: 5, Missing: 1, Duplicated: 0, OutOfOrder: 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Partition(t.Context(), src, tt.dst, p, p, 0, 11, Options{Cluster: "src"})
			if err != nil {
				t.Fatal(err)
			}
			tt.want.Partition, tt.want.From, tt.want.To = p, 0, 11
			opts := []cmp.Option{}
			if tt.want.First == "" {
				opts = append(opts, cmpopts.IgnoreFields(Result{}, "First"))
			}
			if tt.name == "order swapped" {
				// Swapped records show up as one missing and one out of order or duplicated.
				if got.OK() {
					t.Errorf("Partition(swapped) = %+v; want a mismatch", got)
				}
				return
			}
			if diff := cmp.Diff(tt.want, got, opts...); diff != "" {
				t.Errorf("Partition (-want +got):\n%s", diff)
			}
			if got.OK() != (tt.want.Missing+tt.want.Duplicated+tt.want.Differing+tt.want.OutOfOrder == 0) {
				t.Errorf("OK() = %v for %+v", got.OK(), got)
			}
		})
	}
}

func TestPartitionSubrange(t *testing.T) {
	src := source(6)
	dst := copyOf(src[2:4], nil) // source offsets 4 and 6 only
	got, err := Partition(t.Context(), src, dst, p, p, 4, 8, Options{Cluster: "src"})
	if err != nil {
		t.Fatal(err)
	}
	if !got.OK() || got.Matched != 2 || got.Source != 2 {
		t.Errorf("Partition([4,8)) = %+v; want 2 matched", got)
	}
}
