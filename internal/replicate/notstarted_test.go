package replicate

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
)

// TestNotStartedPartitionKeepsItsWindow pins the result of a partition the
// deadline left no time for (a Lambda draining a backlog larger than one
// invocation): it reports the window it would have copied, so that its lag
// counts in the report, the CLI table, --json and the Lambda summary, and
// its oldest record counts in the record age and retention headroom, the
// figures the alarms watch. Those are the partitions most at risk.
func TestNotStartedPartitionKeepsItsWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(map[catchup.Partition]int{pA: 1000, pB: 10})
		r.store = checkpoint.NewMemStore(time.Now)
		old := time.Now().Add(-5 * time.Hour)
		for i := range r.src.logs[pB].recs {
			r.src.logs[pB].recs[i].Timestamp = old.Add(time.Duration(i) * time.Second)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		r.dst.produceFault = func(catchup.Partition, int64) (bool, error) {
			time.Sleep(100 * time.Millisecond) // a slow target: a/0 takes the whole run
			return false, nil
		}
		o := r.options("lambda")
		o.Now, o.Margin, o.Parallelism = time.Now, 2*time.Second, 1
		rep := r.run(t, ctx, o)
		var res Result
		for _, p := range rep.Partitions {
			if p.Partition == pB {
				res = p
			}
		}
		if res.Status != StatusNotStarted {
			t.Fatalf("%s: status %s; want not_started", pB, res.Status)
		}
		if res.From != 0 || res.To != 10 || res.Next != 0 || res.Lag() != 10 {
			t.Errorf("%s: from %d to %d next %d lag %d; want the window [0,10) left, next 0, lag 10",
				pB, res.From, res.To, res.Next, res.Lag())
		}
		if !res.Oldest.Equal(old) {
			t.Errorf("%s: oldest record not copied %v; want %v", pB, res.Oldest, old)
		}
		if d, ok := rep.RecordAge(); !ok || d < 5*time.Hour {
			t.Errorf("RecordAge = %v, %t; want the 5h of the partition not started", d, ok)
		}
	})
}
