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

// TestACLSyncFailedMetric runs the replicate function, under the Lambda
// emulator as the template deploys it, on a pipeline with sync_acls whose
// SCRAM source (its password in Secrets Manager) refuses DescribeAcls: the
// invocation copies every record and succeeds, and writes ACLSyncFailed 1
// under the service dimension that ACLSyncFailedAlarm reads; the password
// reaches none of its output.
func TestACLSyncFailedMetric(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	const (
		password  = "acl-Pa55word-e2e"
		secretARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:source-kafka-AcLsYn"
	)
	src := newSCRAMCluster(t, password, kfake.SeedTopics(1, "orders"))
	src.fake.ControlKey(int16(kmsg.DescribeACLs), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		src.fake.KeepControl()
		res := kreq.ResponseKind().(*kmsg.DescribeACLsResponse)
		res.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return res, nil, true
	})
	dst := newCluster(t, nil, kfake.SeedTopics(1, "orders"))
	src.seed(ctx, t, "orders", 1, 5, func(i int) time.Time { return time.Now().Add(time.Duration(i) * time.Millisecond) })

	endpoint := dynamotest.Endpoint(t)
	table := dynamotest.Table(t, dynamotest.Client(t, endpoint))
	double := newAWSDouble(t)
	double.putSecret(secretARN, `{"username":"replicator","password":"`+password+`"}`)
	config := fmt.Sprintf(`pipelines:
  - name: acls
    source: {name: onprem, brokers: [%s], sasl: {mechanism: SCRAM-SHA-512, username: replicator, password_secret_arn: %q}}
    target: {name: dr, brokers: [%s]}
    topics: {include: [orders]}
    sync_acls: true
`, src.addr(), secretARN, dst.addr())
	st := newLambdaStack(t, map[string]any{"InlineConfig": config, "PasswordSecretArns": []any{secretARN}}, endpoint, table, double, nil)
	fn := st.deploy(t, "ReplicateFunction", 1, nil)
	p := fn.procs[0]
	inv := st.invoke(ctx, t, fn, `{"pipeline":"acls"}`)
	var sum worker.Summary
	if err := json.Unmarshal(inv.body, &sum); inv.failed || err != nil || sum.Copied != 5 || !sum.Done {
		t.Fatalf("invocation: %s (%v); want 5 copied, done", inv.body, err)
	}
	// The process's output reaches the test through a pipe, after the answer.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(p.output(), `"invocation done"`) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if w := `refuses DescribeAcls to User:replicator`; !strings.Contains(p.output(), w) {
		t.Errorf("the function's log does not say %q:\n%s", w, p.output())
	}
	var found bool
	for _, d := range checkOutput(t, []string{password}, p) {
		v, ok := d.Values[metrics.ACLSyncFailed]
		if !ok || d.Members[metrics.DimService] == nil {
			continue
		}
		found = true
		if v != 1 || d.Units[metrics.ACLSyncFailed] != "Count" {
			t.Errorf("ACLSyncFailed = %v %s, want 1 Count", v, d.Units[metrics.ACLSyncFailed])
		}
	}
	if !found {
		t.Errorf("no EMF document holds %s with the %s dimension", metrics.ACLSyncFailed, metrics.DimService)
	}
}

// TestSyncFailedAlarmsInTemplate holds the template's sync alarms to what
// TestACLSyncFailedMetric shows a failed sync writes (and
// internal/worker's TestMetricsOfSyncs for both syncs): the figure 1, so
// each alarm is its Maximum at 1 or more, and missing data (the sync off,
// or no invocation) is no failure.
func TestSyncFailedAlarmsInTemplate(t *testing.T) {
	alarms := openTemplate(t, nil).GetAllCloudWatchAlarmResources()
	for _, metric := range []string{metrics.ACLSyncFailed, metrics.TopicConfigSyncFailed} {
		name := metric + "Alarm"
		a, ok := alarms[name]
		if !ok {
			t.Errorf("no %s in the template", name)
			continue
		}
		if aws.ToString(a.MetricName) != metric || aws.ToString(a.Statistic) != "Maximum" ||
			a.ComparisonOperator != "GreaterThanOrEqualToThreshold" || aws.ToFloat64(a.Threshold) != 1 ||
			aws.ToString(a.TreatMissingData) != "notBreaching" {
			t.Errorf("%s = %s %s %s %v missing %s; want Maximum %s GreaterThanOrEqualToThreshold 1, missing data notBreaching", name,
				aws.ToString(a.Statistic), aws.ToString(a.MetricName), a.ComparisonOperator, aws.ToFloat64(a.Threshold), aws.ToString(a.TreatMissingData), metric)
		}
	}
}
