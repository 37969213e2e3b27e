package worker_test

// A worker given a shard of a large pipeline, through the whole stack: the
// kafka-go adapters on in-process kfake clusters, the engine, and the
// DynamoDB store on dynalite, with the store's requests counted per
// operation.

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/worker"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// operations counts the DynamoDB requests of a client by operation.
type operations struct {
	mu sync.Mutex
	n  map[string]int
}

func (o *operations) add(stack *middleware.Stack) error {
	return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("TestCountOperations",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			o.mu.Lock()
			o.n[awsmiddleware.GetOperationName(ctx)]++
			o.mu.Unlock()
			return next.HandleFinalize(ctx, in)
		}), middleware.After)
}

// take returns the counts since the last take.
func (o *operations) take() map[string]int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := o.n
	o.n = map[string]int{}
	return n
}

// TestShardReadsItsCheckpointsOnly pins the store cost of a worker's shard
// in a pipeline four times its size whose every partition has a checkpoint:
// it reads the shard's 64 checkpoints (not the pipeline's 256), and the
// same shard sent again (Lambda's at-least-once retry of an asynchronous
// invocation) when it has nothing left to copy makes no write.
func TestShardReadsItsCheckpointsOnly(t *testing.T) {
	const (
		topics, perTopic = 4, 64
		shardSize        = 64
		records          = 3 // per shard partition
	)
	names := make([]string, topics)
	for i := range names {
		names[i] = fmt.Sprintf("events-%d", i)
	}
	src, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(perTopic, names...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	dst, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(perTopic, names...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dst.Close)

	// The shard: every fourth partition of the pipeline, over every topic,
	// as a shard cut by urgency and lag is scattered.
	var shard []worker.Partition
	for i := range topics * perTopic {
		if i%(topics*perTopic/shardSize) == 0 {
			shard = append(shard, worker.Partition{Topic: names[i%topics], Partition: int32(i / topics)})
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(src.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for _, p := range shard {
		for i := range records {
			recs = append(recs, &kgo.Record{Topic: p.Topic, Partition: p.Partition, Value: fmt.Appendf(nil, "%d", i)})
		}
	}
	if err := cl.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	ops := &operations{n: map[string]int{}}
	client := dynamotest.Client(t, dynamotest.Endpoint(t), func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, ops.add) })
	table := dynamotest.Table(t, client)
	store := dynamostore.New(client, table)
	// Every partition of the pipeline has a checkpoint at 0, as after a
	// first survey.
	for _, topic := range names {
		for n := range int32(perTopic) {
			if err := store.Reset(t.Context(), "shards", catchup.Partition{Topic: topic, Partition: n}, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	f, err := config.Parse(fmt.Appendf(nil, `store: dynamodb://%s
pipelines:
  - name: shards
    source: {name: src, brokers: [%s]}
    target: {name: dst, brokers: [%s]}
    topics: {include: ["events-.*"]}
`, table, src.ListenAddrs()[0], dst.ListenAddrs()[0]), "shards.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h, err := worker.New(worker.Options{File: f, Store: store, Owner: "worker-a"})
	if err != nil {
		t.Fatal(err)
	}
	event, err := json.Marshal(worker.Event{Pipeline: "shards", Partitions: shard})
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name   string
		copied int64
		writes int // UpdateItem requests at most: a lease, the reconciled start, a commit that releases the lease
	}{
		{"first", shardSize * records, 3 * shardSize},
		{"sent again", 0, 0},
	} {
		ops.take()
		items0, units0 := store.Reads()
		sum, err := h.Handle(t.Context(), event)
		if err != nil || sum.Error != "" || !sum.Done || sum.Copied != tc.copied || len(sum.Partitions) != shardSize {
			t.Fatalf("%s: Handle = %+v, %v; want done, %d partitions, %d records copied", tc.name, sum, err, shardSize, tc.copied)
		}
		items, units := store.Reads()
		got := ops.take()
		t.Logf("%s: DynamoDB requests %v, %d checkpoints read, %.1f read units", tc.name, got, items-items0, units-units0)
		if n := items - items0; n > shardSize {
			t.Errorf("%s: the worker read %d checkpoints for a shard of %d in a pipeline of %d; want at most %d",
				tc.name, n, shardSize, topics*perTopic, shardSize)
		}
		if got["UpdateItem"] > tc.writes {
			t.Errorf("%s: %d UpdateItem requests, want at most %d", tc.name, got["UpdateItem"], tc.writes)
		}
		want := map[string]int{"BatchGetItem": 1}
		delete(got, "UpdateItem")
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: DynamoDB read requests (-want +got):\n%s", tc.name, d)
		}
	}
}
