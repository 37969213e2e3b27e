package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// TestRecreatedTopicFailsClosed deletes the source topic after a copy and
// creates it again with more records than the checkpoint: its log end is
// above the checkpoint, so only the content check at the start of the next
// run can tell. The partition must fail closed, copy nothing and keep its
// checkpoint.
func TestRecreatedTopicFailsClosed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	topic := e.topic(t, "recreated")
	e.createTopics(ctx, t, 1, nil, topic)
	seed := func(cl *kgo.Client, n int, value string) {
		var recs []*kgo.Record
		for i := range n {
			recs = append(recs, &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "k%d", i), Value: []byte(value), Timestamp: time.Now()})
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("produce %d records to %s: %v", n, topic, err)
		}
	}
	seed(e.src.cl, 10, "old")
	yaml := e.configYAML([]string{topic})
	mustRun(ctx, t, yaml, pipeline.Options{})

	e.src.deleteTopic(ctx, t, topic)
	e.src.createTopic(ctx, t, topic, 1, nil)
	seed(newClient(t, e.src), 25, "new") // a fresh client: the old one knows the old topic id

	rep := mustRun(ctx, t, yaml, pipeline.Options{})
	res := rep.Partitions[0]
	if res.Status != replicate.StatusFailed || !errors.Is(res.Err, catchup.ErrTopicRecreated) || !strings.Contains(res.Err.Error(), "catchup reset") {
		t.Fatalf("status %s err %v; want failed with ErrTopicRecreated naming catchup reset", res.Status, res.Err)
	}
	if res.Copied != 0 {
		t.Errorf("copied %d records from the recreated topic; want 0", res.Copied)
	}
	p := catchup.Partition{Topic: topic}
	if c := e.checkpoints(ctx, t)[p]; c.Next != 10 {
		t.Errorf("checkpoint moved to %d; want it left at 10", c.Next)
	}
	if n := e.dst.offsets(ctx, t, topic)[p].HighWatermark; n != 10 {
		t.Errorf("target holds %d records; want the 10 of the first copy only", n)
	}
}

// deleteTopic deletes topic and waits until the cluster no longer lists it.
func (c *cluster) deleteTopic(ctx context.Context, t *testing.T, topic string) {
	t.Helper()
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.TimeoutMillis = 30000
	rt := kmsg.NewDeleteTopicsRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	req.TopicNames = []string{topic}
	res, err := req.RequestWith(ctx, c.cl)
	if err != nil {
		t.Fatalf("delete topic %s on the %s: %v", topic, c.role, err)
	}
	if err := kerr.ErrorForCode(res.Topics[0].ErrorCode); err != nil {
		t.Fatalf("delete topic %s on the %s: %v", topic, c.role, err)
	}
	for {
		mreq := kmsg.NewPtrMetadataRequest()
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(topic)
		mreq.Topics = append(mreq.Topics, mt)
		mres, err := mreq.RequestWith(ctx, c.cl)
		if err == nil && len(mres.Topics) == 1 && mres.Topics[0].ErrorCode == kerr.UnknownTopicOrPartition.Code {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("topic %s still listed after its deletion: %v", topic, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestForeignRecordAtTheAnchorIsNotBlamedOnTheSource writes into the target,
// after a copy, a record whose provenance header claims to be the copy of
// the last source record copied, with other content (another writer of the
// target partition). The source was not recreated: the next run must not
// say so, and copies on.
func TestForeignRecordAtTheAnchorIsNotBlamedOnTheSource(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	topic := e.topic(t, "foreign")
	e.createTopics(ctx, t, 1, nil, topic)
	e.src.produce(ctx, t, values(topic, 0, numbered("a", 0, 10)...)...)
	yaml := e.configYAML([]string{topic})
	mustRun(ctx, t, yaml, pipeline.Options{})

	p := catchup.Partition{Topic: topic}
	pv := catchup.AppendProvenance(nil, catchup.Provenance{Cluster: srcName, Partition: p, Offset: 9})
	e.dst.produce(ctx, t, &kgo.Record{Topic: topic, Key: []byte("k-a9"), Value: []byte("not a9"), Timestamp: oldTime,
		Headers: []kgo.RecordHeader{{Key: catchup.ProvenanceHeader, Value: pv}}})
	e.src.produce(ctx, t, values(topic, 0, numbered("a", 10, 5)...)...)

	res := mustRun(ctx, t, yaml, pipeline.Options{}).Partitions[0]
	if res.Status != replicate.StatusDone || res.Copied != 5 || res.Next != 15 {
		t.Fatalf("run after a foreign record in the target: %s, copied %d, next %d, error %v; want done, 5 copied, next 15",
			res.Status, res.Copied, res.Next, res.Err)
	}
}
