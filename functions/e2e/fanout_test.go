package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
	"github.com/kafka-catchup/catchup/internal/fanout"
	"github.com/kafka-catchup/catchup/internal/metrics"
	"github.com/kafka-catchup/catchup/internal/metrics/emftest"
	"github.com/kafka-catchup/catchup/internal/plan"
	"github.com/kafka-catchup/catchup/internal/replicate"
	"github.com/kafka-catchup/catchup/internal/runmetrics"
	"github.com/kafka-catchup/catchup/internal/worker"
)

// TestScheduledDispatchFansOut runs a scheduled dispatch with both
// functions under the Lambda emulator, as the template deploys them: the
// dispatch function surveys two pipelines, whose source needs a SASL
// password kept in Secrets Manager and whose configuration is an SSM
// parameter, splits the backlog into shards by bytes (ShardBytes at its
// least, 1 MiB) and invokes the replicate function once per shard through
// the SDK's Lambda client (AWS_ENDPOINT_URL_LAMBDA), asynchronously; the
// front of the emulators runs each on one of four replicate emulators. The
// target becomes an exact copy, no partition is in two shards, every
// process fetched the secret once and printed it nowhere, and a second
// dispatch with nothing to do invokes nothing.
func TestScheduledDispatchFansOut(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	const (
		password  = "kafka-Pa55word-e2e"
		secretARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:source-kafka-AbCdEf"
		param     = "arn:aws:ssm:us-east-1:123456789012:parameter/catchup/e2e/config"
		perPart   = 300
	)
	topics := map[string]int32{"orders": 4, "payments": 3, "audit": 2}
	var seeds []kfake.Opt
	for name, n := range topics {
		seeds = append(seeds, kfake.SeedTopics(n, name))
	}
	src := newSCRAMCluster(t, password, seeds...)
	src.pad = 1500 // 300 records of about 1.5 KB: 450 KB a partition, 4 MB in all
	dst := newCluster(t, nil, seeds...)
	for name, n := range topics {
		src.seed(ctx, t, name, n, perPart, func(i int) time.Time { return time.UnixMilli(1_700_000_000_000 + int64(i)) })
	}

	endpoint := dynamotest.Endpoint(t)
	client := dynamotest.Client(t, endpoint)
	table := dynamotest.Table(t, client)
	double := newAWSDouble(t)
	double.putSecret(secretARN, `{"username":"replicator","password":"`+password+`"}`) // the form of an MSK SCRAM secret
	sasl := fmt.Sprintf(`{mechanism: SCRAM-SHA-512, username: replicator, password_secret_arn: %q}`, secretARN)
	config := fmt.Sprintf(`pipelines:
  - name: dr
    source: {name: onprem, brokers: [%[1]s], sasl: %[3]s}
    target: {name: dr, brokers: [%[2]s]}
    topics: {include: ["orders", "payments"]}
    commit_interval: 200ms
    producer: {batch_records: 50}
  - name: audit-dr
    source: {name: onprem, brokers: [%[1]s], sasl: %[3]s}
    target: {name: dr, brokers: [%[2]s]}
    topics: {include: ["audit"]}
`, src.addr(), dst.addr(), sasl)
	double.putConfig(t, param, config)

	st := newLambdaStack(t, map[string]any{
		"ConfigParameterArn": param,
		"PasswordSecretArns": []any{secretARN},
		"ShardBytes":         "1048576", // the parameter's MinValue
	}, endpoint, table, double, nil)
	workers := st.deploy(t, "ReplicateFunction", 4, nil)
	dispatcher := st.deploy(t, "DispatchFunction", 1, nil)
	procs := append(slices.Clone(workers.procs), dispatcher.procs...)

	// The schedule's event.
	inv := st.invoke(ctx, t, dispatcher, `{}`)
	if inv.failed {
		t.Fatalf("dispatch failed: %s", inv.body)
	}
	var sum fanout.Summary
	if err := json.Unmarshal(inv.body, &sum); err != nil {
		t.Fatalf("dispatch response %s: %v", inv.body, err)
	}
	t.Logf("dispatch: %s", inv.body)
	queued := workers.queued()
	if sum.Shards < 3 || sum.Invoked != sum.Shards || len(queued) != sum.Shards {
		t.Fatalf("dispatch: %d shards, %d invoked, %d Invoke calls; want at least 3 shards, all invoked", sum.Shards, sum.Invoked, len(queued))
	}

	// Every shard is copied by some worker; no partition is in two shards.
	type key struct {
		pipeline string
		catchup.Partition
	}
	shardOf := map[key]int{}
	for i, q := range queued {
		q.wait(ctx, t)
		var ev worker.Event
		if err := json.Unmarshal(q.payload, &ev); err != nil {
			t.Fatalf("shard %d payload %s: %v", i, q.payload, err)
		}
		if q.failed {
			t.Errorf("shard %d (%s) failed: %s", i, q.payload, q.body)
			continue
		}
		var ws worker.Summary
		if err := json.Unmarshal(q.body, &ws); err != nil || !ws.Done || ws.Error != "" {
			t.Errorf("shard %d (%s): summary %s (%v), want done", i, q.payload, q.body, err)
		}
		if len(ev.Partitions) == 0 {
			t.Errorf("shard %d has no partition", i)
		}
		for _, p := range ev.Partitions {
			k := key{ev.Pipeline, catchup.Partition{Topic: p.Topic, Partition: p.Partition}}
			if prev, ok := shardOf[k]; ok {
				t.Errorf("%s %s is in shards %d and %d", k.pipeline, k.Partition, prev, i)
			}
			shardOf[k] = i
		}
	}
	if len(shardOf) != 9 {
		t.Errorf("the shards hold %d partitions, want 9: %v", len(shardOf), shardOf)
	}
	for name, n := range topics {
		want, got := src.read(ctx, t, name, n), dst.read(ctx, t, name, n)
		for p := range n {
			checkCopy(t, fmt.Sprintf("%s/%d", name, p), want[p], got[p])
		}
	}
	store := dynamostore.New(client, table)
	for _, pipeline := range []string{"dr", "audit-dr"} {
		cps, err := store.Load(ctx, pipeline)
		if err != nil {
			t.Fatal(err)
		}
		for _, cp := range cps {
			if cp.Next != perPart || cp.Owner != "" {
				t.Errorf("%s %s: checkpoint %d, owner %q; want %d, released", pipeline, cp.Partition, cp.Next, cp.Owner, perPart)
			}
		}
	}

	// A dispatch with nothing to do invokes nothing, quickly.
	idle := st.invoke(ctx, t, dispatcher, `{}`)
	sum = fanout.Summary{}
	if err := json.Unmarshal(idle.body, &sum); idle.failed || err != nil || sum.Shards != 0 || len(workers.queued()) != len(queued) {
		t.Errorf("idle dispatch: %s (%v); want no shard and no Invoke call", idle.body, err)
	}
	t.Logf("idle dispatch of 2 pipelines, 9 partitions: %s from invoke to response (handler %d ms)", idle.took.Round(time.Millisecond), sum.DurationMS)
	if idle.took > 2*time.Second {
		t.Errorf("idle dispatch took %s, want well under 2s", idle.took)
	}

	// Secrets and the configuration: fetched once per process, printed nowhere; metrics valid.
	if n := double.count("secretsmanager.GetSecretValue"); n != len(procs) {
		t.Errorf("GetSecretValue called %d times, want once per process (%d)", n, len(procs))
	}
	if n := double.count("AmazonSSM.GetParameter"); n != len(procs) {
		t.Errorf("GetParameter called %d times, want once per process (%d)", n, len(procs))
	}
	workerDocs := checkOutput(t, []string{password}, workers.procs...)
	dispatchDocs := checkOutput(t, []string{password}, dispatcher.procs...)
	checkMetricCounts(t, workerDocs, dispatchDocs, "dr")
	docs := append(slices.Clone(workerDocs), dispatchDocs...)
	var records, lag float64
	for _, d := range docs {
		records += d.Values[metrics.Records]
		if _, ok := d.Values[metrics.LagBytes]; ok && d.Members[metrics.DimTopic] == nil {
			lag += d.Values[metrics.LagRecords]
		}
	}
	if records != 9*perPart || lag != 9*perPart {
		t.Errorf("EMF: %v records copied and %v records of lag at the first dispatch; want %d of each", records, lag, 9*perPart)
	}
}

// with returns a copy of env with key set to value.
func with(env map[string]string, key, value string) map[string]string {
	out := make(map[string]string, len(env)+1)
	for k, v := range env {
		out[k] = v
	}
	out[key] = value
	return out
}

// metricNames returns the names of the metrics docs write under the
// dimension set {dim} alone, with dim's value value: each is one metric
// to CloudWatch, billed once a month however often it is written.
func metricNames(docs []*emftest.Document, dim, value string) map[string]bool {
	out := map[string]bool{}
	for _, d := range docs {
		if d.Members[dim] != value {
			continue
		}
		for _, set := range d.Dimensions {
			if len(set) == 1 && set[0] == dim {
				for name := range d.Units {
					out[name] = true
				}
			}
		}
	}
	return out
}

// costRow is the default row of the metrics cost table that
// docs/lambda.md and docs/operations.md both show.
var costRow = regexp.MustCompile("\\| (\\d+) per pipeline \\((\\d+) from the worker, (\\d+) from the dispatcher, ([^)]*) written by both\\) " +
	"\\+ the same (\\d+) per service \\+ `ETATicks` \\| (\\d+) ≈ \\$([0-9.]+) a month \\| (\\d+) ≈ \\$([0-9.]+) a month \\|")

// topicRow is the row of the same table for TopicMetrics=true.
var topicRow = regexp.MustCompile(`the default \+ (\d+) per topic \(the worker's (\d+) outcome counts, ` + "`LagRecords` and `LagBytes`" +
	` from the dispatcher\) \| \+ \$([0-9.]+) a month per topic: 100 topics \+ \$([0-9,]+) \| 1,000 topics: ([0-9,]+) metrics, \+ \$([0-9,]+) a month`)

// syncRow is the row of the same table for the syncs.
var syncRow = regexp.MustCompile("`ACLSyncFailed`, `TopicConfigSyncFailed` \\(worker\\), per pipeline that syncs and per service \\| \\+ (\\d+) or (\\d+) \\| \\+ (\\d+) or (\\d+) at most \\|")

// monthly is what CloudWatch charges a month for n custom metrics: $0.30
// each for the first 10,000, $0.10 for the next 240,000.
func monthly(n int) float64 {
	return 0.30*float64(min(n, 10_000)) + 0.10*float64(min(max(n-10_000, 0), 240_000))
}

// thousands formats n with a comma every three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// checkMetricCounts holds the docs' metrics cost table to the metrics the
// functions write per pipeline: how many each function writes, which both
// write, the per-service set, and the totals and prices at 1 and 10
// pipelines ($0.30 a metric). The worker's are what runmetrics makes of a
// report that has every figure (a copy with lag left on a topic that
// deletes by time: the time figures are absent from a run without), and
// must include what the worker wrote here; the dispatcher's are what it
// wrote, all of them unconditional.
func checkMetricCounts(t *testing.T, workerDocs, dispatchDocs []*emftest.Document, pipeline string) {
	t.Helper()
	now := time.Now()
	rep := &replicate.Report{Now: now, Partitions: []replicate.Result{{Copied: 1, Newest: now, Oldest: now,
		Deletion: plan.Retention{Time: time.Hour}.Deletes(now)}}}
	w := map[string]bool{}
	for _, v := range append(runmetrics.Copy(rep, false)[""], runmetrics.Run(rep, 0, false)...) {
		w[v.Name] = true
	}
	for _, n := range []string{metrics.ReplicationLatency, metrics.RecordAge, metrics.RetentionHeadroom} {
		if !w[n] {
			t.Fatalf("runmetrics left %s out of a report that has it: the test's report lacks a figure", n)
		}
	}
	for n := range metricNames(workerDocs, metrics.DimPipeline, pipeline) {
		if !w[n] {
			t.Errorf("EMF: the worker wrote %s, which runmetrics.Copy and Run do not make: the cost table cannot count it", n)
		}
	}
	d := metricNames(dispatchDocs, metrics.DimPipeline, pipeline)
	per, both := map[string]bool{}, []string{}
	for n := range w {
		per[n] = true
		if d[n] {
			both = append(both, "`"+n+"`")
		}
	}
	for n := range d {
		per[n] = true
	}
	slices.Sort(both)
	docs := append(slices.Clone(workerDocs), dispatchDocs...)
	var service string
	for _, doc := range docs {
		if v, ok := doc.Members[metrics.DimService].(string); ok {
			service = v
		}
	}
	perService := metricNames(docs, metrics.DimService, service)
	for n := range metricNames(docs, metrics.DimPipeline, pipeline) {
		if !perService[n] {
			t.Errorf("EMF: %s is written per pipeline but not per service", n)
		}
	}
	if !perService[metrics.ETATicks] {
		t.Errorf("EMF: no %s per service", metrics.ETATicks)
	}
	// Per topic: the worker's outcome counts, and the dispatcher's
	// LagRecords and LagBytes.
	rep.Partitions[0].Topic = "orders"
	perTopic := len(runmetrics.Copy(rep, true)["orders"])
	one, ten := 2*len(per)+1, 11*len(per)+1
	topics := 1000 * (perTopic + 2)
	topicWant := []string{strconv.Itoa(perTopic + 2), strconv.Itoa(perTopic), fmt.Sprintf("%.2f", float64(perTopic+2)*0.30),
		thousands(int(math.Round(100 * float64(perTopic+2) * 0.30))), thousands(topics), thousands(int(math.Round(monthly(ten+topics) - monthly(ten))))}
	// The syncs: each of their metrics per pipeline that syncs and per service.
	synced, _ := runmetrics.Syncs(&replicate.Report{ACLs: &replicate.ACLSync{}, ConfigSynced: true})
	k := len(synced)
	syncWant := []string{"2", strconv.Itoa(2 * k), "11", strconv.Itoa(11 * k)}
	want := []string{strconv.Itoa(len(per)), strconv.Itoa(len(w)), strconv.Itoa(len(d)), strings.Join(both, " and "), strconv.Itoa(len(per)),
		strconv.Itoa(one), fmt.Sprintf("%.2f", float64(one)*0.30), strconv.Itoa(ten), fmt.Sprintf("%.2f", float64(ten)*0.30)}
	for _, doc := range []string{"lambda.md", "operations.md"} {
		text, err := os.ReadFile(filepath.Join("..", "..", "docs", doc))
		if err != nil {
			t.Fatal(err)
		}
		m := costRow.FindStringSubmatch(string(text))
		if m == nil {
			t.Errorf("docs/%s: no default row in the metrics cost table (%s)", doc, costRow)
			continue
		}
		if !slices.Equal(m[1:], want) {
			t.Errorf("docs/%s: the cost table says\n\t%q\nthe functions write\n\t%q\n(per pipeline, worker, dispatcher, both, per service, at 1, $, at 10, $)", doc, m[1:], want)
		}
		if m := topicRow.FindStringSubmatch(string(text)); m == nil || !slices.Equal(m[1:], topicWant) {
			t.Errorf("docs/%s: the TopicMetrics row says %q, want %q (per topic, the worker's, $ a topic, $ for 100, metrics and $ for 1,000 at 10 pipelines)", doc, m, topicWant)
		}
		if m := syncRow.FindStringSubmatch(string(text)); m == nil || !slices.Equal(m[1:], syncWant) {
			t.Errorf("docs/%s: the syncs row says %q, want %q (one sync or both, at 1 and at 10 pipelines)", doc, m, syncWant)
		}
	}
}
