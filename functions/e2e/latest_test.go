package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
	"github.com/kafka-catchup/catchup/internal/fanout"
	"github.com/kafka-catchup/catchup/internal/lambdaenv"
	"github.com/kafka-catchup/catchup/internal/worker"
)

// TestFirstRunOfLatestPipelines runs the first runs of two start: latest
// pipelines, both functions reading their configuration from an SSM
// SecureString and the source's password from a secret kept in another
// account, read as the cluster's aws_role_arn (STS AssumeRole with an
// external id): a worker invoked for pipeline "w" records its begins, the
// dispatcher's survey records those of pipeline "d" (and syncs groups);
// records produced after the begins are then copied, those before are not,
// one partition after another run's lease on it is released.
// The recording of their AWS calls (recordAWS) holds the template's roles
// to what both sent: PutItem from each, BatchGetItem from a dispatched
// worker, GetParameter and the SecureString's key, GetSecretValue and its
// key, and sts:AssumeRole.
func TestFirstRunOfLatestPipelines(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	const (
		password  = "latest-Pa55word-e2e"
		secretARN = "arn:aws:secretsmanager:us-east-1:222233334444:secret:AmazonMSK_dr-AbCdEf"
		roleARN   = "arn:aws:iam::222233334444:role/catchup-dr-reader"
		param     = "/catchup/e2e/latest"
	)
	auth := scram.Auth{User: "replicator", Pass: password}.AsSha512Mechanism()
	src := newCluster(t, []kgo.Opt{kgo.SASL(auth)}, kfake.SeedTopics(2, "w-events", "d-events"), kfake.EnableSASL(),
		kfake.Superuser("SCRAM-SHA-512", "replicator", password))
	dst := newCluster(t, nil, kfake.SeedTopics(2, "w-events", "d-events"))
	old := func(i int) time.Time { return time.UnixMilli(1_700_000_000_000 + int64(i)) }
	src.seed(ctx, t, "w-events", 2, 20, old)
	src.seed(ctx, t, "d-events", 2, 20, old)

	endpoint := dynamotest.Endpoint(t)
	client := dynamotest.Client(t, endpoint)
	table := dynamotest.Table(t, client)
	workers := newRuntimeAPI(t, "catchup-replicate")
	dispatcher := newRuntimeAPI(t, "catchup-dispatch")
	aws := newAWSDouble(t, "catchup-replicate", workers, 30*time.Second)
	aws.putSecret(secretARN, `{"username":"replicator","password":"`+password+`"}`)
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
	aws.putParameter(param, config)

	env := with(baseEnv(t, endpoint, table, aws), lambdaenv.EnvConfigParameter, param)
	deployedConfig(t, config) // the stack's secret and role parameters follow it
	worker1 := start(t, "replicate", "replicate", workers, env)
	dispatchEnv := with(env, lambdaenv.EnvReplicateFunction, "catchup-replicate")
	disp := start(t, "dispatch", "dispatch", dispatcher, dispatchEnv)

	// The worker's first run of "w" and the dispatcher's of "d": begins, nothing copied.
	inv := workers.invoke([]byte(`{"pipeline":"w"}`), time.Now().Add(30*time.Second)).wait(ctx, t)
	var ws worker.Summary
	if err := json.Unmarshal(inv.body, &ws); inv.failed || err != nil || !ws.Done || ws.Copied != 0 {
		t.Fatalf("first run of w: %s (%v); want done, nothing copied (start: latest)", inv.body, err)
	}
	dispatch := func() fanout.Summary {
		inv := dispatcher.invoke([]byte(`{}`), time.Now().Add(30*time.Second)).wait(ctx, t)
		var sum fanout.Summary
		if err := json.Unmarshal(inv.body, &sum); inv.failed || err != nil {
			t.Fatalf("dispatch: %s (%v)", inv.body, err)
		}
		return sum
	}
	if sum := dispatch(); sum.Invoked != 0 {
		t.Fatalf("first dispatch: %+v; want no shard: the begins are at the end", sum)
	}

	// Records after the begins are copied: those of w-events/0 by a run
	// of "w" that meets w-events/1 leased by another run, the rest by a
	// dispatched worker's shard once that lease is released.
	newer := func(i int) time.Time { return time.UnixMilli(1_800_000_000_000 + int64(i)) }
	src.seed(ctx, t, "w-events", 2, 5, newer)
	src.seed(ctx, t, "d-events", 2, 5, newer)
	store := dynamostore.New(client, table)
	lease, _, err := store.Acquire(ctx, "w", catchup.Partition{Topic: "w-events", Partition: 1}, "another-run", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	inv = workers.invoke([]byte(`{"pipeline":"w"}`), time.Now().Add(30*time.Second)).wait(ctx, t)
	if err := json.Unmarshal(inv.body, &ws); inv.failed || err != nil || ws.Done || ws.Copied != 5 {
		t.Fatalf("run of w with w-events/1 leased: %s (%v); want 5 records copied, not done", inv.body, err)
	}
	if err := store.Release(ctx, lease); err != nil {
		t.Fatal(err)
	}
	if sum := dispatch(); sum.Invoked == 0 {
		t.Fatalf("second dispatch: %+v; want shards for the new records", sum)
	}
	for _, q := range aws.queued() {
		if q.wait(ctx, t); q.failed {
			t.Errorf("shard %s failed: %s", q.payload, q.body)
		}
	}
	for _, topic := range []string{"w-events", "d-events"} {
		all, got := src.read(ctx, t, topic, 2), dst.read(ctx, t, topic, 2)
		for p := range int32(2) {
			checkCopy(t, fmt.Sprintf("%s/%d", topic, p), all[p][20:], got[p])
		}
	}

	// The secret was read as the cluster's role, which was assumed with the external id.
	keys, roles := aws.signedBy("secretsmanager.GetSecretValue")
	if len(keys) != 2 || slices.ContainsFunc(keys, func(k string) bool { return k != assumedKey }) {
		t.Errorf("GetSecretValue signed by %v, want once per process by the assumed role's key %s", keys, assumedKey)
	}
	if !slices.Contains(roles, roleARN+" dr-1") {
		t.Errorf("AssumeRole calls %v, want %s with external id dr-1", roles, roleARN)
	}
	checkOutput(t, []string{password}, worker1, disp)
}
