package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
	"github.com/kafka-catchup/catchup/internal/fanout"
	"github.com/kafka-catchup/catchup/internal/worker"
)

// TestStartLatestFirstRun deploys a new pipeline with start: latest on a
// source that already holds records, both functions under the Lambda
// emulator as the template deploys them. The first scheduled dispatch
// copies nothing that exists: it records where each partition begins (the
// begin records, written to the checkpoint table) and invokes no worker.
// Records that arrive afterwards are dispatched to a worker through the
// SDK and copied, and only they: the target holds exactly the new records.
func TestStartLatestFirstRun(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	const old, fresh = 50, 20
	src := newCluster(t, nil, kfake.SeedTopics(3, "news"))
	dst := newCluster(t, nil, kfake.SeedTopics(3, "news"))
	ts := func(i int) time.Time { return time.UnixMilli(1_700_000_000_000 + int64(i)) }
	src.seed(ctx, t, "news", 3, old, ts)

	endpoint := dynamotest.Endpoint(t)
	client := dynamotest.Client(t, endpoint)
	table := dynamotest.Table(t, client)
	config := fmt.Sprintf(`pipelines:
  - name: fresh
    source: {brokers: [%s]}
    target: {brokers: [%s]}
    topics: {include: [news]}
    start: latest
`, src.addr(), dst.addr())
	st := newLambdaStack(t, map[string]any{"InlineConfig": config}, endpoint, table, nil, nil)
	workers := st.deploy(t, "ReplicateFunction", 1, nil)
	dispatcher := st.deploy(t, "DispatchFunction", 1, nil)

	first := st.invoke(ctx, t, dispatcher, `{}`)
	var sum fanout.Summary
	if err := json.Unmarshal(first.body, &sum); first.failed || err != nil || sum.Shards != 0 || len(workers.queued()) != 0 {
		t.Fatalf("first dispatch: %s (%v); want no shard: start latest copies nothing that exists", first.body, err)
	}
	begins, err := dynamostore.New(client, table).LoadBegins(ctx, "fresh", []string{"news"})
	if err != nil {
		t.Fatal(err)
	}
	if b := begins["news"].Offsets; !slices.Equal(b, []int64{old, old, old}) {
		t.Fatalf("after the first dispatch, news begins at %v; want %d in each of 3 partitions (its end when the pipeline was first seen)", b, old)
	}

	// What arrives next is copied, through a worker.
	src.seed(ctx, t, "news", 3, fresh, func(i int) time.Time { return ts(old + i) })
	second := st.invoke(ctx, t, dispatcher, `{}`)
	sum = fanout.Summary{}
	if err := json.Unmarshal(second.body, &sum); second.failed || err != nil || sum.Shards == 0 {
		t.Fatalf("second dispatch: %s (%v); want shards for the new records", second.body, err)
	}
	for i, q := range workers.queued() {
		q.wait(ctx, t)
		var ws worker.Summary
		if err := json.Unmarshal(q.body, &ws); q.failed || err != nil || !ws.Done {
			t.Errorf("shard %d (%s): %s (%v); want done", i, q.payload, q.body, err)
		}
	}
	want, got := src.read(ctx, t, "news", 3), dst.read(ctx, t, "news", 3)
	for p := range int32(3) {
		checkCopy(t, fmt.Sprintf("news/%d", p), want[p][old:], got[p])
	}
	checkOutput(t, nil, append(workers.procs, dispatcher.procs...)...)
}
