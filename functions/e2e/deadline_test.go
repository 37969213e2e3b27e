package e2e

import (
	"encoding/json"
	"fmt"
	"strconv"
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

// deadlineTimeout is the replicate function's timeout in
// TestDeadlineMidWindow: the template's own (ReplicateTimeout, 60 s at the
// least) overridden, alone, so that the test takes seconds; its
// CATCHUP_DEADLINE_MARGIN stays the template's (10 s, which the engine
// caps to a tenth of the time left).
const deadlineTimeout = 6

// TestDeadlineMidWindow runs the replicate function under the Lambda
// emulator with the template's environment and memory and a timeout of
// deadlineTimeout seconds, while the target takes 200 ms per produce
// request of 10 records: the windows (40 requests each) cannot be copied in
// time. The deadline is the emulator's, from the timeout, not a timer of
// the test: the invocation answers with a partial success before the
// emulator would time it out, its checkpoints are backed by the target
// (which holds exactly the source offsets below each, once), the leases
// are released, and a second invocation finishes an exact copy.
func TestDeadlineMidWindow(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	const perPart = 400
	src := newCluster(t, nil, kfake.SeedTopics(2, "events"))
	// SleepOutOfOrder: kfake's in-order sleep queue races (internal/crashtest's
	// TestSleepOutOfOrder says why, and that order holds anyway).
	dst := newCluster(t, nil, kfake.SeedTopics(2, "events"), kfake.SleepOutOfOrder())
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
	config := fmt.Sprintf(`pipelines:
  - name: slow
    source: {brokers: [%s]}
    target: {brokers: [%s]}
    topics: {include: [events]}
    commit_interval: 100ms
    producer: {batch_records: 10}
`, src.addr(), dst.addr())
	st := newLambdaStack(t, map[string]any{"InlineConfig": config}, endpoint, table, nil, nil)
	fn := st.deploy(t, "ReplicateFunction", 1, func(s *fnSpec) { s.TimeoutS = deadlineTimeout })
	p := fn.procs[0]

	inv := st.invoke(ctx, t, fn, `{"pipeline":"slow"}`)
	if inv.failed {
		t.Fatalf("invocation failed (a timeout is an error): %s", inv.body)
	}
	t.Logf("first invocation answered after %s, timeout %ds: %s", inv.took.Round(time.Millisecond), deadlineTimeout, inv.body)
	// 90% of the template's memory size, as the Go runtime's soft limit.
	limit := lambdaenv.MemoryLimit(func(k string) string {
		return map[string]string{lambdaenv.EnvMemorySize: strconv.Itoa(fn.spec.MemoryMB)}[k]
	})
	if out := p.output(); !strings.Contains(out, fmt.Sprintf(`"bytes":%d`, limit)) {
		t.Errorf("no soft memory limit of %d bytes (%d MiB, the template's) logged at start:\n%s", limit, fn.spec.MemoryMB, out)
	}
	var sum worker.Summary
	if err := json.Unmarshal(inv.body, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Done || sum.Copied == 0 || sum.Copied >= 2*perPart || sum.Lag == 0 {
		t.Fatalf("first invocation: done %v, %d copied, lag %d; want partial progress", sum.Done, sum.Copied, sum.Lag)
	}
	// It copied until close to the emulator's deadline: the margin is a
	// tenth of the timeout here.
	if run := time.Duration(sum.DurationMS) * time.Millisecond; run < deadlineTimeout*time.Second*7/10 || run >= deadlineTimeout*time.Second {
		t.Errorf("the handler ran %s; want between 70%% and 100%% of the %ds timeout", run, deadlineTimeout)
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
	inv = st.invoke(ctx, t, fn, `{"pipeline":"slow"}`)
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
