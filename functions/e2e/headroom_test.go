package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
	"github.com/kafka-catchup/catchup/internal/metrics"
	"github.com/kafka-catchup/catchup/internal/worker"
)

// headroomAlarmSeconds is the default of the template's
// RetentionHeadroomAlarmSeconds parameter (TestTemplateMatchesTheCode
// holds the two together).
const headroomAlarmSeconds = 3600

// TestHeadroomMetric runs the replicate function, under the Lambda
// emulator as the template deploys it, on a source topic with a
// short retention (2 hours) whose records are 90 minutes old, with a copy
// held back (max_records 10 of 100 per partition: a paused or slow copy).
// The invocation's EMF RetentionHeadroom is about 30 minutes, below the
// alarm's threshold, while no record is lost yet: the alarm fires before
// the gap. RecordAge and ReplicationLatency are emitted alongside.
func TestHeadroomMetric(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	src := newCluster(t, nil)
	dst := newCluster(t, nil, kfake.SeedTopics(2, "short"))
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "short", 2, 1
	retention := "7200000"
	rt.Configs = append(rt.Configs, kmsg.CreateTopicsRequestTopicConfig{Name: "retention.ms", Value: &retention})
	req.Topics = append(req.Topics, rt)
	res, err := req.RequestWith(ctx, src.cl)
	if err != nil || kerr.ErrorForCode(res.Topics[0].ErrorCode) != nil {
		t.Fatalf("create topic short: %v %+v", err, res)
	}
	old := time.Now().Add(-90 * time.Minute).Truncate(time.Millisecond)
	src.seed(ctx, t, "short", 2, 100, func(i int) time.Time { return old.Add(time.Duration(i) * time.Millisecond) })

	endpoint := dynamotest.Endpoint(t)
	table := dynamotest.Table(t, dynamotest.Client(t, endpoint))
	config := fmt.Sprintf(`pipelines:
  - name: held
    source: {brokers: [%s]}
    target: {brokers: [%s]}
    topics: {include: [short]}
    window: {max_records: 10}
`, src.addr(), dst.addr())
	st := newLambdaStack(t, map[string]any{"InlineConfig": config}, endpoint, table, nil, nil)
	fn := st.deploy(t, "ReplicateFunction", 1, nil)
	p := fn.procs[0]
	inv := st.invoke(ctx, t, fn, `{"pipeline":"held"}`)
	var sum worker.Summary
	if err := json.Unmarshal(inv.body, &sum); inv.failed || err != nil || sum.Copied != 20 || sum.Lag != 180 {
		t.Fatalf("invocation: %s (%v); want 20 copied, 180 left", inv.body, err)
	}
	for _, ps := range sum.Partitions {
		if ps.Status != "partial" || ps.Error != "" {
			t.Errorf("%s/%d: status %s error %q; want partial, no gap", ps.Topic, ps.Partition, ps.Status, ps.Error)
		}
	}
	// The process's output reaches the test through a pipe, after the answer.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(p.output(), `"invocation done"`) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	var found bool
	for _, d := range checkOutput(t, nil, p) {
		h, ok := d.Values[metrics.RetentionHeadroom]
		if !ok {
			continue
		}
		found = true
		// Record 10, the oldest not copied, is 90 minutes old: the source
		// may delete it 30 minutes from now (a few seconds less by the
		// time it is measured).
		if h >= headroomAlarmSeconds || h < 25*60 || h > 30*60 {
			t.Errorf("RetentionHeadroom = %vs, want about 1800s, below the alarm's %ds", h, headroomAlarmSeconds)
		}
		if a := d.Values[metrics.RecordAge]; a < 90*60 || a > 95*60 {
			t.Errorf("RecordAge = %vs, want about 5400s", a)
		}
		if l := d.Values[metrics.ReplicationLatency]; l < 90*60 || l > 95*60 {
			t.Errorf("ReplicationLatency = %vs, want about 5400s", l)
		}
		if d.Units[metrics.RetentionHeadroom] != "Seconds" {
			t.Errorf("RetentionHeadroom unit %q, want Seconds", d.Units[metrics.RetentionHeadroom])
		}
	}
	if !found {
		t.Errorf("no EMF document holds %s", metrics.RetentionHeadroom)
	}
	if sum.HeadroomMS == nil || *sum.HeadroomMS >= headroomAlarmSeconds*1000 {
		t.Errorf("summary retention_headroom_ms = %v, want below %d", sum.HeadroomMS, headroomAlarmSeconds*1000)
	}
}

// TestHeadroomAlarmInTemplate holds the template's headroom alarm to what
// TestHeadroomMetric shows fires: RetentionHeadroom below the parameter
// whose default is headroomAlarmSeconds.
func TestHeadroomAlarmInTemplate(t *testing.T) {
	tpl := openTemplate(t, nil)
	p, ok := tpl.Parameters["RetentionHeadroomAlarmSeconds"]
	if !ok || fmt.Sprint(p.Default) != fmt.Sprint(headroomAlarmSeconds) {
		t.Fatalf("parameter RetentionHeadroomAlarmSeconds = %+v, want default %d", p, headroomAlarmSeconds)
	}
	a, ok := tpl.GetAllCloudWatchAlarmResources()["RetentionHeadroomAlarm"]
	if !ok {
		t.Fatal("no RetentionHeadroomAlarm in the template")
	}
	if aws.ToString(a.MetricName) != metrics.RetentionHeadroom || a.ComparisonOperator != "LessThanThreshold" ||
		aws.ToString(a.Statistic) != "Minimum" || aws.ToString(a.TreatMissingData) != "notBreaching" {
		t.Errorf("RetentionHeadroomAlarm = %s %s %s missing %s; want Minimum RetentionHeadroom LessThanThreshold, missing data notBreaching",
			aws.ToString(a.Statistic), aws.ToString(a.MetricName), a.ComparisonOperator, aws.ToString(a.TreatMissingData))
	}
}
