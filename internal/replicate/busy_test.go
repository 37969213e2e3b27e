package replicate

import (
	"testing"
	"testing/synctest"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// TestTakeoverOfABusyTargetIsNotInDoubt: a run that takes over an
// unreleased lease on a target partition another producer keeps writing to
// (a migration's dual writes, MirrorMaker not yet stopped) sees a log end
// that never holds still but is always replicated (high watermark = log
// end). It gives up waiting for stillness after TakeoverSettleMax and
// copies, whatever replication_wait is: that bound is for a high watermark
// below the log end, and with a replication_wait below TakeoverSettleMax the
// run ended in_doubt, lease kept, run after run, for as long as the other
// producer wrote.
func TestTakeoverOfABusyTargetIsNotInDoubt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(map[catchup.Partition]int{pA: 10})
		r.deadRunAt4(t)
		r.dst.onLogEnd = func(_ catchup.Partition, l *fakeLog) {
			// Another producer's record, replicated at once.
			l.recs = append(l.recs, catchup.Record{Offset: l.start + int64(len(l.recs)), Value: []byte("other")})
		}
		o := r.options("heir")
		o.ReplicationWait = 5 * o.TakeoverSettle
		res := r.run(t, t.Context(), o).Partitions[0]
		if res.Status != StatusDone || res.Next != 10 {
			t.Fatalf("heir: status %s next %d err %v; want done at 10", res.Status, res.Next, res.Err)
		}
	})
}
