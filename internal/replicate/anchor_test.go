package replicate

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// fetchLog records the offsets a Source is fetched from.
type fetchLog struct {
	Source
	mu    sync.Mutex
	froms []int64
}

func (s *fetchLog) Fetch(ctx context.Context, p catchup.Partition, from int64, maxBytes int32) (catchup.Fetched, error) {
	s.mu.Lock()
	s.froms = append(s.froms, from)
	s.mu.Unlock()
	return s.Source.Fetch(ctx, p, from, maxBytes)
}

// TestAnchorCheckRidesOnTheFirstFetch pins the source fetches of a resumed
// partition (checkpoint at 5, the source fetching 3 records at a time): the
// anchor check of a recreated topic reads the record at next-1 from the
// partition's first data fetch, which starts there, not from a fetch of its
// own. The record at next-1 is compared, not copied again.
func TestAnchorCheckRidesOnTheFirstFetch(t *testing.T) {
	for _, tc := range []struct {
		name      string
		setup     func(r *rig)
		wantFroms []int64
		copied    int64
		recreated bool
	}{{
		name:      "two new records: one fetch",
		setup:     func(r *rig) { r.appendRecords(pA, 2) },
		wantFroms: []int64{4},
		copied:    2,
	}, {
		name:      "four new records: the first fetch holds the anchor and two of them",
		setup:     func(r *rig) { r.appendRecords(pA, 4) },
		wantFroms: []int64{4, 7},
		copied:    4,
	}, {
		name: "the anchor deleted by retention: fetched again at the checkpoint, nothing to compare",
		setup: func(r *rig) {
			r.appendRecords(pA, 2)
			l := r.src.logs[pA]
			l.start, l.recs = 5, l.recs[5:]
		},
		wantFroms: []int64{4, 5},
		copied:    2,
	}, {
		name: "recreated and refilled past the checkpoint: fails closed on the first fetch",
		setup: func(r *rig) {
			fresh := newFakeCluster(map[catchup.Partition]int{pA: 8}).logs[pA]
			for i := range fresh.recs {
				fresh.recs[i].Value = []byte("new topic")
			}
			r.src.logs[pA] = fresh
		},
		// Then the next batch may be fetched while the first is checked,
		// and the record age of the partition left with lag is sampled
		// at 5 (age.go): only the first fetch is pinned.
		wantFroms: []int64{4},
		recreated: true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(map[catchup.Partition]int{pA: 5})
			r.run(t, t.Context(), r.options("first"))
			before := r.checkpoints(t)[pA]
			tc.setup(r)
			src := &fetchLog{Source: r.src}
			o := r.options("second")
			o.Source = src
			res := r.run(t, t.Context(), o).Partitions[0]
			froms := src.froms
			if tc.recreated {
				froms = froms[:min(1, len(froms))]
			}
			if diff := cmp.Diff(tc.wantFroms, froms); diff != "" {
				t.Errorf("source fetched from offsets (-want +got):\n%s", diff)
			}
			if tc.recreated {
				after := r.checkpoints(t)[pA]
				if res.Status != StatusFailed || !errors.Is(res.Err, catchup.ErrTopicRecreated) || len(r.dst.logs[pA].recs) != 5 ||
					after.Next != before.Next || after.TargetEnd != before.TargetEnd {
					t.Errorf("status %s err %v, target %d records, checkpoint next %d target end %d; "+
						"want failed with ErrTopicRecreated, nothing produced, checkpoint at %d, %d",
						res.Status, res.Err, len(r.dst.logs[pA].recs), after.Next, after.TargetEnd, before.Next, before.TargetEnd)
				}
				return
			}
			if res.Status != StatusDone || res.Copied != tc.copied || len(r.dst.logs[pA].recs) != 5+int(tc.copied) {
				t.Errorf("status %s err %v, copied %d, target %d records; want done, %d copied once",
					res.Status, res.Err, res.Copied, len(r.dst.logs[pA].recs), tc.copied)
			}
		})
	}
}
