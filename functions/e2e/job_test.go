package e2e

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
	"github.com/kafka-catchup/catchup/internal/metrics"
	"github.com/kafka-catchup/catchup/internal/worker"
)

// TestBackfillJobEvent invokes the replicate function, under the Lambda
// emulator as the template deploys it, with a backfill job: exactly the
// records whose timestamps fall in the job's range reach the target, the
// job keeps its own checkpoints, and the pipeline's are not touched; its
// metrics are under the pipeline's name and feed no latency alarm. A
// malformed event is answered, not retried.
func TestBackfillJobEvent(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	const perPart = 100
	base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	at := func(i int) time.Time { return base.Add(time.Duration(i) * time.Minute) }
	src := newCluster(t, nil, kfake.SeedTopics(2, "clicks"))
	dst := newCluster(t, nil, kfake.SeedTopics(2, "clicks"))
	src.seed(ctx, t, "clicks", 2, perPart, at)

	endpoint := dynamotest.Endpoint(t)
	client := dynamotest.Client(t, endpoint)
	table := dynamotest.Table(t, client)
	config := fmt.Sprintf(`pipelines:
  - name: clicks
    source: {brokers: [%s]}
    target: {brokers: [%s]}
    topics: {include: [clicks]}
`, src.addr(), dst.addr())
	st := newLambdaStack(t, map[string]any{"InlineConfig": config}, endpoint, table, nil, nil)
	fn := st.deploy(t, "ReplicateFunction", 1, nil)

	from, to := at(20), at(60)
	ev := fmt.Sprintf(`{"pipeline":"clicks","job":{"name":"incident-7","from":%q,"to":%q}}`, from.Format(time.RFC3339), to.Format(time.RFC3339))
	inv := st.invoke(ctx, t, fn, ev)
	var sum worker.Summary
	if err := json.Unmarshal(inv.body, &sum); inv.failed || err != nil || !sum.Done || sum.Namespace != "clicks.job.incident-7" || sum.Copied != 2*40 {
		t.Fatalf("job invocation: %s (%v); want done in namespace clicks.job.incident-7 with 80 records copied", inv.body, err)
	}
	want := src.read(ctx, t, "clicks", 2)
	got := dst.read(ctx, t, "clicks", 2)
	for part := range int32(2) {
		var inRange []*kgo.Record
		for _, r := range want[part] {
			if !r.Timestamp.Before(from) && r.Timestamp.Before(to) {
				inRange = append(inRange, r)
			}
		}
		checkCopy(t, fmt.Sprintf("clicks/%d", part), inRange, got[part])
	}
	store := dynamostore.New(client, table)
	if cps, err := store.Load(ctx, "clicks"); err != nil || len(cps) != 0 {
		t.Errorf("the pipeline's own checkpoints: %v, %v; want none", cps, err)
	}
	if cps, err := store.Load(ctx, "clicks.job.incident-7"); err != nil || len(cps) != 2 || cps[0].Next != 60 {
		t.Errorf("the job's checkpoints: %+v, %v; want 2 at offset 60", cps, err)
	}

	// Bad events are answered with the reason, not failed (a retry would fail again).
	for _, bad := range []string{
		`{"pipeline":"clicks","jbo":{}}`,
		`{"pipeline":"nope"}`,
		`{"pipeline":"clicks","job":{"name":"x"}}`,
		`{"pipeline":"clicks","partitions":[{"topic":"__consumer_offsets","partition":0}]}`,
	} {
		inv := st.invoke(ctx, t, fn, bad)
		var s worker.Summary
		if err := json.Unmarshal(inv.body, &s); inv.failed || err != nil || s.Error == "" || s.Copied != 0 {
			t.Errorf("event %s: answer %s (failed %v); want a summary with an error", bad, inv.body, inv.failed)
		}
	}
	// The job feeds neither the latency alarm's metrics nor a new pipeline
	// dimension value.
	for _, d := range checkOutput(t, nil, fn.procs...) {
		if p := d.Members[metrics.DimPipeline]; p != nil && p != "clicks" {
			t.Errorf("an EMF document of the job has pipeline dimension %v, want clicks (a dimension value per job is a custom metric more)", p)
		}
		for _, n := range []string{metrics.ReplicationLatency, metrics.RecordAge} {
			if v, ok := d.Values[n]; ok {
				t.Errorf("the job wrote %s = %v, which the latency alarm watches", n, v)
			}
		}
	}
}
