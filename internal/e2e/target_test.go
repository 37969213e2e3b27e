package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/pipeline"
)

// TestTargetTopicMismatch runs a pipeline whose target lacks a topic and
// has another with fewer partitions than the source: the run fails as a
// whole with an error naming each topic and the partition counts, and
// copies nothing, not even the topic that matches.
func TestTargetTopicMismatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	missing, fewer, fine := e.topic(t, "missing"), e.topic(t, "fewer"), e.topic(t, "fine")
	topics := []string{missing, fewer, fine}
	e.src.createTopic(ctx, t, missing, 4, nil)
	e.src.createTopic(ctx, t, fewer, 3, nil)
	e.dst.createTopic(ctx, t, fewer, 2, nil)
	e.createTopics(ctx, t, 2, nil, fine)
	for _, p := range e.src.partitions(ctx, t, topics...) {
		e.src.produce(ctx, t, values(p.Topic, p.Partition, numbered("m", 0, 5)...)...)
	}

	rep, err := run(ctx, t, e.configYAML(topics), pipeline.Options{})
	if err == nil {
		t.Fatalf("Run = %+v, nil; want an error about the target topics", rep)
	}
	for _, want := range []string{
		fmt.Sprintf("topic %s does not exist on the target: create it with at least 4 partitions", missing),
		fmt.Sprintf("topic %s has 2 partitions on the target but the source has 3", fewer),
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Run error %q\ndoes not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), fine) {
		t.Errorf("Run error %q names topic %s, which matches", err, fine)
	}
	for p, end := range e.dst.highWatermarks(ctx, t, topics...) {
		if end != 0 {
			t.Errorf("target %s ends at %d after the failed run, want 0: nothing copied", p, end)
		}
	}
	e.wantCheckpoints(ctx, t, "after the failed run", map[catchup.Partition]int64{})
	if cps := e.checkpoints(ctx, t); len(cps) != 0 {
		t.Errorf("the store holds %d partitions after the failed run, want none: %+v", len(cps), cps)
	}
}
