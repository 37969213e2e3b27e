package replicate

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// TestShortRequestWaitsForTheNextFetch: a fetch's last records that would
// not fill a produce request go with the next fetch's first ones, so that
// 10 records in fetches of 3 take 5 requests of 2, not 7; the memory of
// each fetch is released only once its records are acknowledged (a
// released fetch's records are overwritten here, as a Source that reuses
// its memory does).
func TestShortRequestWaitsForTheNextFetch(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 10})
	r.src.poisonReleased = true
	res := r.run(t, t.Context(), r.options("run")).Partitions[0]
	if res.Status != StatusDone || res.Next != 10 {
		t.Fatalf("status %s next %d err %v; want done at 10", res.Status, res.Next, res.Err)
	}
	r.checkExactCopy(t)
	if got := r.dst.logs[pA].batches; !slices.Equal(got, []int64{0, 2, 4, 6, 8}) || r.src.releases != 4 {
		t.Errorf("produce requests at %v, %d fetches released; want requests at [0 2 4 6 8] and the 4 fetches released", got, r.src.releases)
	}
}

// gapAt is a Source whose partitions lack [from, to): retention deleted it
// while the copy ran.
type gapAt struct {
	Source
	from, to int64
}

func (g gapAt) Fetch(ctx context.Context, p catchup.Partition, from int64, maxBytes int32) (catchup.Fetched, error) {
	if from >= g.from && from < g.to {
		return catchup.Fetched{}, &catchup.GapError{Partition: p, From: from, To: g.to}
	}
	return g.Source.Fetch(ctx, p, from, maxBytes)
}

// TestHeldRecordsAreSentBeforeAGap: the record held back at the end of the
// fetch [0, 3) is written before the gap [3, 5) is skipped, not lost with it.
func TestHeldRecordsAreSentBeforeAGap(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 10})
	o := r.options("run")
	o.Source = gapAt{Source: r.src, from: 3, to: 5}
	o.Policy.SkipGaps = true
	res := r.run(t, t.Context(), o).Partitions[0]
	if res.Status != StatusDone || res.Next != 10 || res.Gap == nil || res.Gap.From != 3 || res.Gap.To != 5 {
		t.Fatalf("status %s next %d gap %v err %v; want done at 10 past the gap [3, 5)", res.Status, res.Next, res.Gap, res.Err)
	}
	var got []int64
	for _, rec := range r.dst.logs[pA].recs {
		off, _ := catchup.SourceOffset(&rec, "src", pA)
		got = append(got, off)
	}
	if want := []int64{0, 1, 2, 5, 6, 7, 8, 9}; !slices.Equal(got, want) {
		t.Errorf("target holds source offsets %v, want %v", got, want)
	}
	if c := r.checkpoints(t)[pA]; c.Next != 10 || len(c.Gaps) != 1 {
		t.Errorf("checkpoint next %d gaps %+v; want 10 and the gap recorded", c.Next, c.Gaps)
	}
}

// TestHeldRecordsAreCopied: the records held back keep null apart from
// empty and do not share memory with the fetch, which is released, and
// reused, as soon as they are held.
func TestHeldRecordsAreCopied(t *testing.T) {
	fetch := []catchup.Record{
		{Offset: 7, Key: nil, Value: []byte{}, Headers: []catchup.Header{{Key: "a", Value: nil}, {Key: "b", Value: []byte{}}}},
		{Offset: 8, Key: []byte("k"), Value: []byte("value"), Headers: []catchup.Header{{Key: "c", Value: []byte("v")}}},
		{Offset: 9, Key: []byte{}, Value: nil},
	}
	want := make([]catchup.Record, len(fetch))
	for i, r := range fetch {
		want[i] = r
		if r.Key != nil {
			want[i].Key = slices.Clone(r.Key)
		}
		if r.Value != nil {
			want[i].Value = slices.Clone(r.Value)
		}
		want[i].Headers = slices.Clone(r.Headers)
		for j, h := range r.Headers {
			if h.Value != nil {
				want[i].Headers[j].Value = slices.Clone(h.Value)
			}
		}
	}
	var h heldTail
	h.keep(fetch, 10)
	for _, r := range fetch { // the fetch's memory, reused
		copy(r.Key, "X")
		copy(r.Value, "XXXXX")
		for j := range r.Headers {
			copy(r.Headers[j].Value, "X")
			r.Headers[j].Key = "X"
		}
	}
	if diff := cmp.Diff(want, h.recs); diff != "" || h.next != 10 {
		t.Errorf("held next %d, want 10; records (-want +held):\n%s", h.next, diff)
	}
}
