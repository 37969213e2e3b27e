package brokers_test

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// TestIndexedJobShards: four copies with the shares an Indexed Job of 4
// completions gives its pods (pipeline.Shard, as run --shards 4 takes them)
// run at once over one DynamoDB store against real brokers: each of the 8
// partitions is copied by exactly one, and the target is an exact copy (the
// test's own consumer finds 0 lost and 0 duplicated records).
func TestIndexedJobShards(t *testing.T) {
	e := needBrokers(t)
	ctx := testContext(t, 3*time.Minute)
	const partitions, per, shards = 8, 300, 4
	topic := uniqueTopic("indexed-job")
	createTopic(ctx, t, e.source.brokers, topic, partitions)
	createTopic(ctx, t, e.target.brokers, topic, partitions)
	seeded := makeRecords(topic, partitions, per, 64)
	seed(ctx, t, e.source.brokers, seeded, 16<<10)

	base := len(os.Environ())
	for _, kv := range dynamotest.ChildEnv(t)[base:] {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	table := dynamotest.Table(t, dynamotest.Client(t, dynamotest.Endpoint(t)))
	s := spec{store: "dynamodb://" + table, name: "indexed", topic: topic,
		source: plaintext("it-source", e.source.brokers), target: plaintext("it-target", e.target.brokers)}
	var all []catchup.Partition
	for p := range int32(partitions) {
		all = append(all, catchup.Partition{Topic: topic, Partition: p})
	}
	pls := make([]*pipeline.Pipeline, shards)
	for i := range shards {
		pls[i] = open(ctx, t, s, pipeline.Options{Owner: fmt.Sprintf("pod-%d", i), Partitions: pipeline.Shard(all, i, shards)})
		defer pls[i].Close()
	}
	reps, errs := make([]*replicate.Report, shards), make([]error, shards)
	var wg sync.WaitGroup
	for i := range shards {
		wg.Go(func() { reps[i], errs[i] = pls[i].Engine.Run(ctx) })
	}
	wg.Wait()
	copiedBy := map[int32][]int{}
	for i := range shards {
		requireDone(t, fmt.Sprintf("shard %d", i), reps[i], errs[i])
		for _, r := range reps[i].Partitions {
			copiedBy[r.Partition.Partition] = append(copiedBy[r.Partition.Partition], i)
		}
	}
	for p := range int32(partitions) {
		if len(copiedBy[p]) != 1 {
			t.Errorf("partition %d copied by shards %v, want exactly one", p, copiedBy[p])
		}
	}
	checkExactCopy(t, "target", readAll(ctx, t, e.target.brokers, topic, partitions), seeded, "it-source")
}
