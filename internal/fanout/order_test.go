package fanout

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/plan"
)

// TestSplitOrdersAsPlan: the dispatcher hands out work in the order
// `catchup plan` prints it (plan.ByUrgency), as the plan's help says. With
// one partition a shard and room for all, the shards are that order.
func TestSplitOrdersAsPlan(t *testing.T) {
	p := func(topic string, n int32) catchup.Partition { return catchup.Partition{Topic: topic, Partition: n} }
	type row struct {
		p                  catchup.Partition
		logStart, from, hw int64
		avg                float64
	}
	rows := []row{
		{p("a", 0), 0, 50, 100, 10},      // half the retained log left
		{p("a", 1), 0, 90, 100, 10},      // a tenth
		{p("b", 0), 0, 0, 1000, 10},      // all of it, 10,000 bytes
		{p("c", 0), 0, 0, 50, 100},       // all of it, 5,000 bytes
		{p("a", 2), 0, 0, 500, 10},       // all of it, 5,000 bytes: partition order
		{p("d", 0), 100, 100, 400, 1},    // all of it, 300 bytes
		{p("e", 0), 1000, 1500, 2000, 1}, // half
		{p("f", 0), 0, 99, 100, 1e6},     // a hundredth, the most bytes
	}
	var windows []plan.Planned
	var work []Work
	byPartition := map[catchup.Partition]Work{}
	for _, r := range rows {
		pl := plan.Planned{Window: catchup.Window{Partition: r.p, From: r.from, To: r.hw}, End: r.hw}
		w := plan.NewWork("x", pl, catchup.Offsets{Partition: r.p, LogStart: r.logStart, HighWatermark: r.hw, LastStable: r.hw}, r.avg)
		windows = append(windows, pl)
		work = append(work, w)
		byPartition[r.p] = w
	}
	var planned []catchup.Partition
	for _, pl := range plan.ByUrgency(windows, func(pl plan.Planned) plan.Work { return byPartition[pl.Partition] }) {
		planned = append(planned, pl.Partition)
	}
	shards, deferred := Split(work, Limits{MaxShards: len(work), MaxPartitions: 1, PartitionCeiling: 1, MaxBytes: 1 << 40})
	var dispatched []catchup.Partition
	for _, s := range shards {
		dispatched = append(dispatched, s.Partitions...)
	}
	if len(deferred) != 0 {
		t.Fatalf("Split deferred %d partitions, want none", len(deferred))
	}
	if diff := cmp.Diff(planned, dispatched); diff != "" {
		t.Errorf("plan order vs dispatch order (-plan +dispatch):\n%s", diff)
	}
	want := []catchup.Partition{p("b", 0), p("a", 2), p("c", 0), p("d", 0), p("a", 0), p("e", 0), p("a", 1), p("f", 0)}
	if diff := cmp.Diff(want, planned); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}
