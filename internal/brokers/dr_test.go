package brokers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// What a disaster-recovery replica needs of the brokers beyond records
// (issue 16): partitions that follow the source.

// growTopic raises topic's partition count on the cluster at brokers to n
// with CreatePartitions, sent by franz-go.
func growTopic(ctx context.Context, t *testing.T, brokers, topic string, n int32) {
	t.Helper()
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreatePartitionsRequestTopic()
	rt.Topic, rt.Count = topic, n
	req.Topics = append(req.Topics, rt)
	res, err := req.RequestWith(ctx, newClient(t, brokers))
	if err != nil {
		t.Fatalf("grow topic %s on %s: %v", topic, brokers, err)
	}
	for _, tr := range res.Topics {
		if err := kerr.ErrorForCode(tr.ErrorCode); err != nil {
			t.Fatalf("grow topic %s on %s: %v (%s)", topic, brokers, err, deref(tr.ErrorMessage))
		}
	}
	mustEndOffsets(ctx, t, brokers, topic, n) // every partition answers
}

// TestPartitionGrowth grows a source topic from 5 to 7 partitions after a
// first copy. Without create_topics the run fails that topic alone, naming
// the command to run; with it, the target topic gets CreatePartitions
// (kafka-go's, on a real controller) and the copy goes on, exact.
func TestPartitionGrowth(t *testing.T) {
	e := needBrokers(t)
	ctx := testContext(t, 3*time.Minute)
	s := spec{store: t.TempDir(), name: "grow", topic: uniqueTopic("grow"),
		source: plaintext("it-source", e.source.brokers), target: plaintext("it-target", e.target.brokers)}
	createTopic(ctx, t, e.source.brokers, s.topic, 5)
	createTopic(ctx, t, e.target.brokers, s.topic, 5)
	seeded := makeRecords(s.topic, 7, 40, 32)
	seed(ctx, t, e.source.brokers, seeded[:5], 4<<10)
	runOnce := func(what string) (*replicate.Report, error) {
		pl := open(ctx, t, s, pipeline.Options{})
		defer pl.Close()
		return pl.Engine.Run(ctx)
	}
	rep, err := runOnce("first run")
	requireDone(t, "first run", rep, err)

	growTopic(ctx, t, e.source.brokers, s.topic, 7)
	seed(ctx, t, e.source.brokers, seeded[5:], 4<<10)
	rep, err = runOnce("run without create_topics")
	if err != nil {
		t.Fatalf("run without create_topics: %v; want the topic's partitions failed, not the run", err)
	}
	want := "has 5 partitions on the target but the source has 7: add partitions to the target topic (kafka-topics.sh --bootstrap-server TARGET --alter --topic " + s.topic + " --partitions 7)"
	for _, p := range rep.Partitions {
		if p.Status != replicate.StatusFailed || p.Err == nil || !strings.Contains(p.Err.Error(), want) {
			t.Errorf("run without create_topics: %s: status %s err %v; want failed saying %q", p.Partition, p.Status, p.Err, want)
		}
	}

	s.extra = "    create_topics: true\n"
	rep, err = runOnce("run with create_topics")
	requireDone(t, "run with create_topics", rep, err)
	if n := len(rep.Partitions); n != 7 {
		t.Errorf("the run with create_topics copied %d partitions, want 7", n)
	}
	checkExactCopy(t, "target", readAll(ctx, t, e.target.brokers, s.topic, 7), seeded, s.source.name)
}
