package replicate

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/plan"
)

// A run stopped (a deadline, SIGTERM) while adopt settles commits nothing:
// a checkpoint at the start policy would make the next run read nothing
// back and copy everything again.
func TestInterruptedAdoptCommitsNothing(t *testing.T) {
	for _, at := range []string{"the shared settle", "the read-back"} {
		t.Run(at, func(t *testing.T) {
			r := newRig(map[catchup.Partition]int{pA: 10})
			r.run(t, t.Context(), r.options("first")) // copies 0..9
			r.src.grow(pA, 5)
			r.store = checkpoint.NewMemStore(r.clock.now) // the store is lost
			ctx, cancel := context.WithCancel(t.Context())
			o := r.options("second")
			if at == "the shared settle" {
				looks := 0
				r.dst.onLogEnd = func(catchup.Partition, *fakeLog) {
					if looks++; looks == 1 {
						cancel() // the deadline comes during settle
					}
				}
			} else {
				o.Target = cancelAtReadBack{Target: r.dst, cancel: cancel}
			}
			res := r.run(t, ctx, o).Partitions[0]
			if res.Status == StatusDone {
				t.Fatalf("interrupted run: status %s, want not done", res.Status)
			}
			r.dst.onLogEnd = nil
			res = r.run(t, t.Context(), r.options("third")).Partitions[0]
			if res.Status != StatusDone || res.Copied != 5 {
				t.Errorf("next run: status %s copied %d err %v; want done, the 5 new records", res.Status, res.Copied, res.Err)
			}
			r.checkCopiedOnce(t, pA, 0)
		})
	}
}

// cancelAtReadBack is a Target whose ReadBack stops the run (its deadline
// comes) and fails as a read cut off does.
type cancelAtReadBack struct {
	Target
	cancel context.CancelFunc
}

func (c cancelAtReadBack) ReadBack(ctx context.Context, _ catchup.Partition, _ int64) ([]catchup.Record, int64, error) {
	c.cancel()
	return nil, 0, fmt.Errorf("read back: %w", context.Cause(ctx))
}

// Without provenance, a run stopped while it reads the target's end
// commits nothing either, so that the next run still refuses the filled
// target instead of copying it all again.
func TestInterruptedRefuseCommitsNothing(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 10})
	o := r.options("first")
	o.Provenance = false
	r.run(t, t.Context(), o)
	r.store = checkpoint.NewMemStore(r.clock.now)
	ctx, cancel := context.WithCancel(t.Context())
	n := 0
	r.dst.readFault = func() error {
		if n++; n >= 2 {
			cancel()
		}
		return fmt.Errorf("leader moved: %w", catchup.ErrRetriable)
	}
	o = r.options("second")
	o.Provenance = false
	r.run(t, ctx, o)
	r.dst.readFault = nil
	o = r.options("third")
	o.Provenance = false
	res := r.run(t, t.Context(), o).Partitions[0]
	if res.Copied != 0 || !errors.Is(res.Err, catchup.ErrTargetAhead) {
		t.Errorf("next run: status %s copied %d err %v; want nothing copied, failed with ErrTargetAhead", res.Status, res.Copied, res.Err)
	}
}

// A backfill job that wrote an earlier range after the pipeline's copies
// leaves the target's tail out of source order: a lost store then fails
// the partition closed rather than resume after the job's last copy. (The
// job's copies fit in the batches adopt reads back: a longer one hides the
// pipeline's, as docs/lost-store.md says.)
func TestAdoptRefusesCopiesOutOfOrder(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 10})
	o := r.options("first")
	o.Policy.Start = plan.Latest
	r.run(t, t.Context(), o) // begins at 10
	r.src.grow(pA, 5)
	r.run(t, t.Context(), o) // copies 10..14
	j := r.options("job")
	j.Pipeline = "job1"
	j.Policy.StartOffsets = map[catchup.Partition]int64{pA: 8}
	j.Policy.StopOffsets = map[catchup.Partition]int64{pA: 10}
	if res := r.run(t, t.Context(), j).Partitions[0]; res.Copied != 2 {
		t.Fatalf("backfill job: status %s copied %d err %v; want 2", res.Status, res.Copied, res.Err)
	}
	r.store = checkpoint.NewMemStore(r.clock.now) // the store is lost
	o = r.options("again")
	o.Policy.Start = plan.Latest
	res := r.run(t, t.Context(), o).Partitions[0]
	if res.Status != StatusFailed || res.Copied != 0 || !errors.Is(res.Err, catchup.ErrTargetAhead) {
		t.Errorf("after the loss: status %s copied %d err %v; want failed with ErrTargetAhead, nothing copied", res.Status, res.Copied, res.Err)
	}
	r.checkCopiedOnce(t, pA, 8)
}

// Active-active: the target's own producers wrote more batches since the
// last copy than a tail read-back reads; a lost store still resumes after
// the last copy, found further back.
func TestAdoptActiveActiveReadsPastLocalRecords(t *testing.T) {
	for _, start := range []plan.StartKind{plan.Earliest, plan.Latest} {
		r := newRig(map[catchup.Partition]int{pA: 10})
		o := r.options("first")
		o.LoopCluster = "dst"
		o.Policy.Start = start
		r.run(t, t.Context(), o)
		r.src.grow(pA, 5)
		r.run(t, t.Context(), o)
		for range adoptBatches + 1 { // the target's own producers
			r.dst.mu.Lock()
			r.dst.logs[pA].batches = append(r.dst.logs[pA].batches, r.dst.end(pA))
			r.dst.mu.Unlock()
			r.dst.grow(pA, 2)
		}
		r.store = checkpoint.NewMemStore(r.clock.now) // the store is lost
		r.src.grow(pA, 3)
		o = r.options("again")
		o.LoopCluster = "dst"
		o.Policy.Start = start
		res := r.run(t, t.Context(), o).Partitions[0]
		if res.Status != StatusDone || res.Copied != 3 {
			t.Errorf("start %v after the loss: status %s copied %d err %v; want done, the 3 new records", start, res.Status, res.Copied, res.Err)
		}
		from := int64(0)
		if start == plan.Latest {
			from = 10
		}
		r.checkCopiedOnce(t, pA, from)
	}
}
