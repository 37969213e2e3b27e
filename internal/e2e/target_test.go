package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// TestTargetTopicMismatch runs a pipeline whose target lacks a topic and
// has another with fewer partitions than the source: the partitions of
// those two topics fail with an error naming the topic and the partition
// counts, nothing of them is copied or checkpointed, and the topic that
// matches is copied all the same.
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

	rep := mustRun(ctx, t, e.configYAML(topics), pipeline.Options{})
	want := map[string]string{
		missing: fmt.Sprintf("topic %s does not exist on the target: create it with at least 4 partitions", missing),
		fewer:   fmt.Sprintf("topic %s has 2 partitions on the target but the source has 3", fewer),
	}
	for _, r := range rep.Partitions {
		w, bad := want[r.Topic]
		switch {
		case bad && (r.Status != replicate.StatusFailed || r.Err == nil || !strings.Contains(r.Err.Error(), w)):
			t.Errorf("%s: status %s err %v; want failed saying %q", r.Partition, r.Status, r.Err, w)
		case !bad && (r.Status != replicate.StatusDone || r.Copied != 5):
			t.Errorf("%s: status %s copied %d err %v; want done, 5 copied", r.Partition, r.Status, r.Copied, r.Err)
		}
	}
	for p, end := range e.dst.highWatermarks(ctx, t, missing, fewer) {
		if end != 0 {
			t.Errorf("target %s ends at %d after the failed run, want 0: nothing copied", p, end)
		}
	}
	e.wantCheckpoints(ctx, t, "after the run", map[catchup.Partition]int64{
		{Topic: fine, Partition: 0}: 5, {Topic: fine, Partition: 1}: 5,
	})
}
