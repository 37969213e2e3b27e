package replicate

import (
	"testing"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/plan"
)

// TestGrownPartitionStartsAtItsLogStart pins where a partition that a
// copied source topic gained (5 partitions to 7) starts under start:
// latest: at its log start, like MirrorMaker 2. Its records were all
// written while the pipeline copied the topic, so starting at latest would
// skip, for good and silently, everything producers wrote to it between
// the growth and the next run. Also for a worker given a shard that holds
// the new partition alone (it loads the checkpoints of its shard only).
func TestGrownPartitionStartsAtItsLogStart(t *testing.T) {
	for _, shard := range []bool{false, true} {
		name := map[bool]string{false: "pipeline", true: "shard"}[shard]
		t.Run(name, func(t *testing.T) {
			r := newRig(map[catchup.Partition]int{pA: 10})
			o := r.options("run")
			o.Policy.Start = plan.Latest
			if rep := r.run(t, t.Context(), o); rep.Partitions[0].Next != 10 || len(r.dst.logs[pA].recs) != 0 {
				t.Fatalf("first run: next %d, target %d; want started at latest (10), nothing copied", rep.Partitions[0].Next, len(r.dst.logs[pA].recs))
			}
			// The topic grows by a partition, written to before the next run.
			grown := newFakeCluster(map[catchup.Partition]int{pB: 4})
			r.src.logs[pB], r.dst.logs[pB] = grown.logs[pB], &fakeLog{stalledAt: -1}
			if shard {
				o.Partitions = []catchup.Partition{pB}
			}
			rep := r.run(t, t.Context(), o)
			for _, res := range rep.Partitions {
				if res.Partition != pB {
					continue
				}
				if res.From != 0 || res.Copied != 4 || res.Status != StatusDone {
					t.Errorf("%s: from %d copied %d status %s; want its 4 records copied from its log start 0", pB, res.From, res.Copied, res.Status)
				}
				return
			}
			t.Errorf("%s not in the report", pB)
		})
	}
}
