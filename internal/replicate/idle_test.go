package replicate

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
)

// countingStore counts the writes a run sends to its store.
type countingStore struct {
	checkpoint.Store
	writes atomic.Int64
}

func (s *countingStore) Acquire(ctx context.Context, pipeline string, p catchup.Partition, owner string, ttl time.Duration) (checkpoint.Lease, checkpoint.Checkpoint, error) {
	s.writes.Add(1)
	return s.Store.Acquire(ctx, pipeline, p, owner, ttl)
}

func (s *countingStore) Renew(ctx context.Context, l checkpoint.Lease, ttl time.Duration) (checkpoint.Lease, error) {
	s.writes.Add(1)
	return s.Store.Renew(ctx, l, ttl)
}

func (s *countingStore) Release(ctx context.Context, l checkpoint.Lease) error {
	s.writes.Add(1)
	return s.Store.Release(ctx, l)
}

func (s *countingStore) Commit(ctx context.Context, l checkpoint.Lease, c checkpoint.Commit) error {
	s.writes.Add(1)
	return s.Store.Commit(ctx, l, c)
}

// countingTarget counts the target's end-offset queries (reconciliation).
type countingTarget struct {
	Target
	endOffsets atomic.Int64
}

func (t *countingTarget) EndOffsets(ctx context.Context, ps []catchup.Partition) (map[catchup.Partition]int64, error) {
	t.endOffsets.Add(1)
	return t.Target.EndOffsets(ctx, ps)
}

// appendRecords adds n records to the source log of p.
func (r *rig) appendRecords(p catchup.Partition, n int) {
	l := r.src.logs[p]
	for range n {
		off := l.start + int64(len(l.recs))
		l.recs = append(l.recs, catchup.Record{Offset: off, Value: []byte("more"), Timestamp: time.UnixMilli(1_700_000_000_000 + off)})
	}
}

func TestIdlePartitionsCostNoStoreWriteNorTargetRequest(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 5, pB: 5})
	store := &countingStore{Store: r.store}
	r.store = store
	r.run(t, t.Context(), r.options("first"))

	for _, tc := range []struct {
		name       string
		appendToA  int
		maxWrites  int64
		wantCopied map[catchup.Partition]int64
	}{
		{name: "idle", maxWrites: 0, wantCopied: map[catchup.Partition]int64{pA: 0, pB: 0}},
		// One active partition: acquire, commit-with-release (and at most
		// one renew or intermediate commit), the idle one nothing.
		{name: "one active", appendToA: 4, maxWrites: 3, wantCopied: map[catchup.Partition]int64{pA: 4, pB: 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r.appendRecords(pA, tc.appendToA)
			store.writes.Store(0)
			target := &countingTarget{Target: r.dst}
			o := r.options("again")
			o.Target = target
			rep := r.run(t, t.Context(), o)
			got := map[catchup.Partition]int64{}
			for _, res := range rep.Partitions {
				if res.Status != StatusDone {
					t.Errorf("%s: status %s err %v, want done", res.Partition, res.Status, res.Err)
				}
				got[res.Partition] = res.Copied
			}
			if diff := cmp.Diff(tc.wantCopied, got); diff != "" {
				t.Errorf("records copied (-want +got):\n%s", diff)
			}
			if n := store.writes.Load(); n > tc.maxWrites {
				t.Errorf("store writes = %d, want at most %d", n, tc.maxWrites)
			}
			if tc.appendToA == 0 && target.endOffsets.Load() != 0 {
				t.Errorf("idle run asked the target for end offsets %d times, want 0", target.endOffsets.Load())
			}
		})
	}
	r.checkExactCopy(t)
}

// TestIdleSkipStillCatches: a partition with an empty window is skipped
// only when its checkpoint is clean; each of these must still be seen.
func TestIdleSkipStillCatches(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, r *rig)
		check func(t *testing.T, r *rig, res Result)
	}{{
		name: "a dead run's expired lease is taken over and released",
		setup: func(t *testing.T, r *rig) {
			if _, _, err := r.store.Acquire(t.Context(), "p1", pA, "dead", time.Minute); err != nil {
				t.Fatal(err)
			}
			r.clock.add(time.Hour)
		},
		check: func(t *testing.T, r *rig, res Result) {
			if c := r.checkpoints(t)[pA]; res.Status != StatusDone || c.Owner != "" {
				t.Errorf("status %s owner %q; want done with the dead run's lease released", res.Status, c.Owner)
			}
		},
	}, {
		name: "a checkpoint in doubt, its lease kept by a live run, is reported leased",
		setup: func(t *testing.T, r *rig) {
			if _, _, err := r.store.Acquire(t.Context(), "p1", pA, "in-doubt", time.Hour); err != nil {
				t.Fatal(err)
			}
		},
		check: func(t *testing.T, _ *rig, res Result) {
			if res.Status != StatusLeased {
				t.Errorf("status %s, want leased", res.Status)
			}
		},
	}, {
		name: "a partition with an error recorded by the last commit is leased again",
		setup: func(t *testing.T, r *rig) {
			l, _, err := r.store.Acquire(t.Context(), "p1", pA, "failed", time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.store.Commit(t.Context(), l, checkpoint.Commit{Next: 5, TargetEnd: 5, Error: "boom", Release: true}); err != nil {
				t.Fatal(err)
			}
		},
		check: func(t *testing.T, r *rig, res Result) {
			// first run, the failed run, this run: three acquires.
			if c := r.checkpoints(t)[pA]; res.Status != StatusDone || c.Epoch != 3 {
				t.Errorf("status %s epoch %d; want done and leased by this run (epoch 3)", res.Status, c.Epoch)
			}
		},
	}, {
		name: "a gap below new records",
		setup: func(t *testing.T, r *rig) {
			r.appendRecords(pA, 5)
			l := r.src.logs[pA]
			l.start, l.recs = 7, l.recs[7:] // retention deletes [0,7)
		},
		check: func(t *testing.T, _ *rig, res Result) {
			if diff := cmp.Diff(&catchup.GapError{Partition: pA, From: 5, To: 7}, res.Gap); diff != "" || res.Status != StatusFailed {
				t.Errorf("status %s, gap (-want +got):\n%s", res.Status, diff)
			}
		},
	}, {
		name: "a recreated topic whose log end is below the checkpoint",
		setup: func(t *testing.T, r *rig) {
			r.src.logs[pA] = newFakeCluster(map[catchup.Partition]int{pA: 2}).logs[pA]
		},
		check: func(t *testing.T, _ *rig, res Result) {
			if res.Status != StatusFailed {
				t.Errorf("status %s err %v, want failed", res.Status, res.Err)
			}
		},
	}, {
		name: "a recreated topic refilled past the checkpoint, once it has new records",
		setup: func(t *testing.T, r *rig) {
			fresh := newFakeCluster(map[catchup.Partition]int{pA: 5}).logs[pA]
			for i := range fresh.recs {
				fresh.recs[i].Value = []byte("new topic")
			}
			r.src.logs[pA] = fresh
			// Refilled to exactly the checkpoint: the window is empty, nothing
			// is copied, and the partition is skipped this run.
			rep := r.run(t, t.Context(), r.options("between"))
			if res := rep.Partitions[0]; res.Status != StatusDone || res.Copied != 0 {
				t.Fatalf("refilled to the checkpoint: status %s copied %d, want done and nothing copied", res.Status, res.Copied)
			}
			r.appendRecords(pA, 3)
		},
		check: func(t *testing.T, r *rig, res Result) {
			if res.Status != StatusFailed || !errors.Is(res.Err, catchup.ErrTopicRecreated) || len(r.dst.logs[pA].recs) != 5 {
				t.Errorf("status %s err %v target %d; want failed with ErrTopicRecreated, target left at 5", res.Status, res.Err, len(r.dst.logs[pA].recs))
			}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(map[catchup.Partition]int{pA: 5})
			r.run(t, t.Context(), r.options("first"))
			tc.setup(t, r)
			rep := r.run(t, t.Context(), r.options("second"))
			tc.check(t, r, rep.Partitions[0])
		})
	}
}
