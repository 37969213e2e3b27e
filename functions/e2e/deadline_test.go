package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
	"github.com/kafka-catchup/catchup/internal/lambdaenv"
	"github.com/kafka-catchup/catchup/internal/worker"
)

// TestDeadlineMidWindow gives a replicate invocation a deadline 3 seconds
// ahead while the target takes 200 ms per produce request of 10 records:
// the windows (20 requests each) cannot be copied in time. The invocation
// answers with a partial success before its deadline, its checkpoints are
// backed by the target (which holds exactly the source offsets below each,
// once), the leases are released, and a second invocation finishes an
// exact copy.
func TestDeadlineMidWindow(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	const perPart = 200
	src := newCluster(t, nil, kfake.SeedTopics(2, "events"))
	dst := newCluster(t, nil, kfake.SeedTopics(2, "events"))
	src.seed(ctx, t, "events", 2, perPart, func(i int) time.Time { return time.UnixMilli(1_700_000_000_000 + int64(i)) })
	var slow atomic.Bool
	slow.Store(true)
	dst.fake.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		dst.fake.KeepControl()
		if slow.Load() {
			dst.fake.SleepControl(func() { time.Sleep(200 * time.Millisecond) })
		}
		return nil, nil, false
	})

	endpoint := dynamotest.Endpoint(t)
	client := dynamotest.Client(t, endpoint)
	table := dynamotest.Table(t, client)
	rt := newRuntimeAPI(t, "catchup-replicate")
	config := fmt.Sprintf(`pipelines:
  - name: slow
    source: {brokers: [%s]}
    target: {brokers: [%s]}
    topics: {include: [events]}
    commit_interval: 100ms
    producer: {batch_records: 10}
`, src.addr(), dst.addr())
	env := with(baseEnv(t, endpoint, table, nil), lambdaenv.EnvConfig, config)
	p := start(t, "replicate", "replicate", rt, env)

	deadline := time.Now().Add(3 * time.Second)
	inv := rt.invoke([]byte(`{"pipeline":"slow"}`), deadline).wait(ctx, t)
	if inv.failed {
		t.Fatalf("invocation failed: %s", inv.body)
	}
	t.Logf("first invocation answered %s before its deadline: %s", deadline.Sub(inv.answered).Round(time.Millisecond), inv.body)
	// 90% of the function's 256 MiB (baseEnv), as the Go runtime's soft limit.
	if out := p.out.String(); !strings.Contains(out, `"bytes":241591910`) {
		t.Errorf("no soft memory limit of 241591910 bytes logged at start:\n%s", out)
	}
	if late := inv.answered.Sub(deadline); late > time.Second { // slack for a loaded machine; Lambda's margin is 10s
		t.Errorf("the answer came %s after the deadline", late)
	}
	var sum worker.Summary
	if err := json.Unmarshal(inv.body, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Done || sum.Copied == 0 || sum.Copied >= 2*perPart || sum.Lag == 0 {
		t.Fatalf("first invocation: done %v, %d copied, lag %d; want partial progress", sum.Done, sum.Copied, sum.Lag)
	}
	cps, err := dynamostore.New(client, table).Load(ctx, "slow")
	if err != nil {
		t.Fatal(err)
	}
	held := dst.read(ctx, t, "events", 2)
	want := src.read(ctx, t, "events", 2)
	for _, ps := range sum.Partitions {
		if ps.Status != "partial" && ps.Status != "done" {
			t.Errorf("%s/%d: status %s, want partial", ps.Topic, ps.Partition, ps.Status)
		}
		var next int64
		for _, cp := range cps {
			if cp.Partition.Partition == ps.Partition {
				next = cp.Next
				if cp.Owner != "" {
					t.Errorf("%s: lease still held by %s", cp.Partition, cp.Owner)
				}
			}
		}
		n := int64(len(held[ps.Partition]))
		if next != ps.Next || next > n {
			t.Errorf("%s/%d: checkpoint %d, summary next %d, %d records in the target; the checkpoint must match and not pass the target",
				ps.Topic, ps.Partition, next, ps.Next, n)
		}
		checkCopy(t, fmt.Sprintf("after the deadline, events/%d", ps.Partition), want[ps.Partition][:n], held[ps.Partition])
	}

	slow.Store(false)
	inv = rt.invoke([]byte(`{"pipeline":"slow"}`), time.Now().Add(30*time.Second)).wait(ctx, t)
	sum = worker.Summary{}
	if err := json.Unmarshal(inv.body, &sum); inv.failed || err != nil || !sum.Done || sum.Lag != 0 {
		t.Fatalf("second invocation: %s (%v); want done", inv.body, err)
	}
	got := dst.read(ctx, t, "events", 2)
	for part := range int32(2) {
		checkCopy(t, fmt.Sprintf("events/%d", part), want[part], got[part])
	}
	checkOutput(t, nil, p)
}
