package brokers_test

import (
	"testing"
	"time"

	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// TestPartitionGrowthUnderLatest grows a source topic from 5 to 7
// partitions (CreatePartitions on a real controller) while a pipeline
// under start: latest copies it: the records written before the pipeline
// began are not copied; every record written since is, in the 5 partitions
// it began (from the offsets its begin holds) and in the 2 the topic gained
// (from their log start). The records carry CreateTimes an hour old, which
// a begin kept as a time would have skipped.
func TestPartitionGrowthUnderLatest(t *testing.T) {
	e := needBrokers(t)
	ctx := testContext(t, 3*time.Minute)
	s := spec{store: t.TempDir(), name: "grow-latest", topic: uniqueTopic("grow-latest"),
		source: plaintext("it-source", e.source.brokers), target: plaintext("it-target", e.target.brokers),
		extra: "    start: latest\n    create_topics: true\n"}
	createTopic(ctx, t, e.source.brokers, s.topic, 5)
	seed(ctx, t, e.source.brokers, makeRecords(s.topic, 5, 30, 32), 4<<10) // before the pipeline began
	runOnce := func(what string) *replicate.Report {
		pl := open(ctx, t, s, pipeline.Options{})
		defer pl.Close()
		rep, err := pl.Engine.Run(ctx)
		requireDone(t, what, rep, err)
		return rep
	}
	if copied, _, _ := runOnce("first run").Totals(); copied != 0 {
		t.Fatalf("first run copied %d records; want 0 (start: latest)", copied)
	}

	growTopic(ctx, t, e.source.brokers, s.topic, 7)
	after := makeRecords(s.topic, 7, 20, 32)
	seed(ctx, t, e.source.brokers, after, 4<<10)
	rep := runOnce("run after the growth")
	if n := len(rep.Partitions); n != 7 {
		t.Errorf("the run after the growth copied %d partitions, want 7", n)
	}
	// The target partitions hold the copies from their offset 0: shift
	// them to the source offsets they copy (the provenance headers, which
	// checkExactCopy also compares, name those).
	got := readAll(ctx, t, e.target.brokers, s.topic, 7)
	for p := range got {
		for _, r := range got[p] {
			if len(after[p]) > 0 {
				r.Offset += after[p][0].Offset
			}
		}
	}
	checkExactCopy(t, "target", got, after, s.source.name)
}
