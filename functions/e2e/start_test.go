package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kafka-catchup/catchup/internal/awsapi"
	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
	"github.com/kafka-catchup/catchup/internal/fanout"
	"github.com/kafka-catchup/catchup/internal/worker"
)

// TestFirstRunOfLatestPipelines deploys two new start: latest pipelines on
// a source that already holds records, both functions under the Lambda
// emulator as the template deploys them, reading their configuration from
// an SSM SecureString (ConfigParameterArn) and the source's password from
// a secret kept in another account, read as the cluster's aws_role_arn
// (STS AssumeRole with an external id).
//
// A first run copies nothing that exists: a worker invoked for pipeline
// "w" records where each of its partitions begins (begin records, PutItem
// from the worker), and the first scheduled dispatch does the same for
// "d" in its survey (PutItem from the dispatcher), syncs groups and
// invokes no worker. Records that arrive afterwards are copied, and only
// they: those of w-events/0 by a run of "w" that meets w-events/1 leased
// by another run, the rest by workers the dispatcher invokes through the
// SDK once that lease is released (BatchGetItem from a dispatched shard).
// The recording of their AWS calls (recordAWS) holds the template's roles
// to all of it, the SecureString's and the secret's kms:Decrypt and
// sts:AssumeRole included.
func TestFirstRunOfLatestPipelines(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	const (
		old, fresh = 20, 5
		password   = "latest-Pa55word-e2e"
		secretARN  = "arn:aws:secretsmanager:us-east-1:222233334444:secret:AmazonMSK_dr-AbCdEf"
		roleARN    = "arn:aws:iam::222233334444:role/catchup-dr-reader"
	)
	paramARN := awsapi.Parameter.ARN(partition, region, account, "catchup/e2e/latest")
	src := newSCRAMCluster(t, password, kfake.SeedTopics(2, "w-events", "d-events"))
	dst := newCluster(t, nil, kfake.SeedTopics(2, "w-events", "d-events"))
	ts := func(i int) time.Time { return time.UnixMilli(1_700_000_000_000 + int64(i)) }
	src.seed(ctx, t, "w-events", 2, old, ts)
	src.seed(ctx, t, "d-events", 2, old, ts)

	endpoint := dynamotest.Endpoint(t)
	client := dynamotest.Client(t, endpoint)
	table := dynamotest.Table(t, client)
	double := newAWSDouble(t)
	double.putSecret(secretARN, `{"username":"replicator","password":"`+password+`"}`)
	sasl := fmt.Sprintf(`{mechanism: SCRAM-SHA-512, username: replicator, password_secret_arn: %q, aws_role_arn: %q, aws_external_id: dr-1}`, secretARN, roleARN)
	config := ""
	for _, name := range []string{"w", "d"} {
		config += fmt.Sprintf(`
  - name: %[1]s
    source: {brokers: [%[2]s], sasl: %[4]s}
    target: {brokers: [%[3]s]}
    topics: {include: ["%[1]s-events"]}
    start: latest
    sync_groups: {include: [".*"], interval: 0s}`, name, src.addr(), dst.addr(), sasl)
	}
	config = "pipelines:" + config + "\n"
	double.putConfig(t, paramARN, config)

	st := newLambdaStack(t, map[string]any{"ConfigParameterArn": paramARN}, endpoint, table, double, nil)
	workers := st.deploy(t, "ReplicateFunction", 1, nil)
	dispatcher := st.deploy(t, "DispatchFunction", 1, nil)
	store := dynamostore.New(client, table)
	checkBegins := func(pipeline, topic string) {
		t.Helper()
		begins, err := store.LoadBegins(ctx, pipeline, []string{topic})
		if err != nil {
			t.Fatal(err)
		}
		if b := begins[topic].Offsets; !slices.Equal(b, []int64{old, old}) {
			t.Fatalf("after the first run of %s, %s begins at %v; want %d in each of 2 partitions (its end when the pipeline was first seen)", pipeline, topic, b, old)
		}
	}

	// The worker's first run of "w" and the dispatcher's of "d": begins, nothing copied.
	inv := st.invoke(ctx, t, workers, `{"pipeline":"w"}`)
	var ws worker.Summary
	if err := json.Unmarshal(inv.body, &ws); inv.failed || err != nil || !ws.Done || ws.Copied != 0 {
		t.Fatalf("first run of w: %s (%v); want done, nothing copied (start: latest)", inv.body, err)
	}
	checkBegins("w", "w-events")
	dispatch := func() fanout.Summary {
		t.Helper()
		inv := st.invoke(ctx, t, dispatcher, `{}`)
		var sum fanout.Summary
		if err := json.Unmarshal(inv.body, &sum); inv.failed || err != nil {
			t.Fatalf("dispatch: %s (%v)", inv.body, err)
		}
		return sum
	}
	if sum := dispatch(); sum.Shards != 0 || len(workers.queued()) != 0 {
		t.Fatalf("first dispatch: %+v; want no shard: start latest copies nothing that exists", sum)
	}
	checkBegins("d", "d-events")

	// What arrives next is copied.
	newer := func(i int) time.Time { return ts(old + i) }
	src.seed(ctx, t, "w-events", 2, fresh, newer)
	src.seed(ctx, t, "d-events", 2, fresh, newer)
	lease, _, err := store.Acquire(ctx, "w", catchup.Partition{Topic: "w-events", Partition: 1}, "another-run", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	inv = st.invoke(ctx, t, workers, `{"pipeline":"w"}`)
	if err := json.Unmarshal(inv.body, &ws); inv.failed || err != nil || ws.Done || ws.Copied != fresh {
		t.Fatalf("run of w with w-events/1 leased: %s (%v); want %d records copied, not done", inv.body, err, fresh)
	}
	if err := store.Release(ctx, lease); err != nil {
		t.Fatal(err)
	}
	if sum := dispatch(); sum.Shards == 0 {
		t.Fatalf("second dispatch: %+v; want shards for the new records", sum)
	}
	for i, q := range workers.queued() {
		q.wait(ctx, t)
		if err := json.Unmarshal(q.body, &ws); q.failed || err != nil || !ws.Done {
			t.Errorf("shard %d (%s): %s (%v); want done", i, q.payload, q.body, err)
		}
	}
	for _, topic := range []string{"w-events", "d-events"} {
		all, got := src.read(ctx, t, topic, 2), dst.read(ctx, t, topic, 2)
		for p := range int32(2) {
			checkCopy(t, fmt.Sprintf("%s/%d", topic, p), all[p][old:], got[p])
		}
	}

	// The secret was read as the cluster's role, assumed with the external
	// id, once by each process.
	procs := append(slices.Clone(workers.procs), dispatcher.procs...)
	keys, roles := double.signedBy("secretsmanager.GetSecretValue")
	if len(keys) != len(procs) || slices.ContainsFunc(keys, func(k string) bool { return k != assumedKey }) {
		t.Errorf("GetSecretValue signed by %v, want once per process (%d) by the assumed role's key %s", keys, len(procs), assumedKey)
	}
	if !slices.Contains(roles, roleARN+" dr-1") {
		t.Errorf("AssumeRole calls %v, want %s with external id dr-1", roles, roleARN)
	}
	checkOutput(t, []string{password}, procs...)
}
