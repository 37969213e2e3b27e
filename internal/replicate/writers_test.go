package replicate

import (
	"slices"
	"testing"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/plan"
)

// A backfill job and its pipeline write into the same target partition
// under two checkpoint namespaces. Reconciliation must recognise only its
// own writes: a resumed job that took the pipeline's copies of later source
// offsets for its own would skip the rest of its range.
func TestResumedJobIgnoresThePipelinesCopies(t *testing.T) {
	for _, commits := range []int{1, 2, 5} {
		r := newRig(map[catchup.Partition]int{pA: 100})
		job := r.options("job")
		job.Pipeline = "p1.job.j"
		job.Policy.Start = plan.Timestamp
		job.StartTime = time.UnixMilli(1_700_000_000_010)
		job.StopTime = time.UnixMilli(1_700_000_000_050) // offsets [10, 50)
		job.CommitInterval = time.Nanosecond
		// The clock moves with every produce, so that the job commits
		// after each; its store fails after a few commits, leaving a
		// written but uncommitted batch behind.
		r.dst.produceFault = func(catchup.Partition, int64) (bool, error) {
			r.clock.add(time.Millisecond)
			return false, nil
		}
		dying := job
		dying.Store = &crashingStore{Store: r.store, commits: commits}
		if res := r.run(t, t.Context(), dying).Partitions[0]; res.Status != StatusFailed || res.Copied >= 40 {
			t.Fatalf("after %d commits: the dying job: status %s, copied %d; want failed part way", commits, res.Status, res.Copied)
		}

		// The pipeline, started at offset 60, copies [60, 100) meanwhile.
		live := r.options("pipeline")
		live.Policy.StartOffsets = map[catchup.Partition]int64{pA: 60}
		r.run(t, t.Context(), live)

		r.clock.add(21 * time.Minute) // the dead job's lease expires
		rep := r.run(t, t.Context(), job)
		if res := rep.Partitions[0]; res.Status != StatusDone || res.Next != 50 {
			t.Errorf("after %d commits: resumed job: status %s next %d err %v; want done at 50", commits, res.Status, res.Next, res.Err)
		}
		var offs []int64
		for _, rec := range r.dst.logs[pA].recs {
			off, _ := catchup.SourceOffset(&rec, "src", pA)
			offs = append(offs, off)
		}
		slices.Sort(offs)
		var want []int64
		for o := int64(10); o < 100; o++ {
			if o < 50 || o >= 60 {
				want = append(want, o)
			}
		}
		if !slices.Equal(offs, want) {
			t.Errorf("after %d commits: the target holds copies of %v; want 10 to 49 and 60 to 99, once each", commits, offs)
		}
	}
}
