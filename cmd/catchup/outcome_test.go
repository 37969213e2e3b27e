package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
)

// writeConfigWith writes a configuration like writeConfig, with the given
// topic include pattern and extra pipeline keys (indented lines).
func (e *cliEnv) writeConfigWith(t *testing.T, name, store, include, extra string) string {
	t.Helper()
	yaml := fmt.Sprintf(`store: %s
pipelines:
  - name: %s
    source: {name: %s, brokers: [%s]}
    target: {name: cli-dst, brokers: [%s]}
    topics: {include: [%s]}
    commit_interval: 20ms
    fetch_bytes: %d
    producer: {batch_records: 25}
%s`, store, cliPipeline, cliSrcName, e.src.ListenAddrs()[0], e.dst.ListenAddrs()[0],
		include, cliFetchSize, extra)
	path := filepath.Join(e.dir, name)
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// outcome is what run --json says of one partition, in short.
type outcome struct {
	status, leaseOwner, errHas string
	next, lag                  int64
	leaseExpires               bool
}

func outcomes(rep reportJSONT) map[int32]outcome {
	out := map[int32]outcome{}
	for _, r := range rep.Partitions {
		out[r.Partition] = outcome{status: r.Status, leaseOwner: r.LeaseOwner, errHas: r.Error, next: r.Next, lag: r.Lag,
			leaseExpires: r.LeaseExpires != nil}
	}
	return out
}

// dynamoStore points the CLI at a table of the DynamoDB test server, which
// it keeps in e, and returns the store URL.
func dynamoStore(t *testing.T, e *cliEnv) string {
	dynamoEnv(t, e)
	e.table = dynamotest.Table(t, e.dynamo)
	return "dynamodb://" + e.table
}

// dynamoEnv points the CLI at the DynamoDB test server and keeps a client
// of it in e.
func dynamoEnv(t *testing.T, e *cliEnv) {
	endpoint := dynamotest.Endpoint(t)
	e.dynamo = dynamotest.Client(t, endpoint)
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", endpoint)
	if os.Getenv("AWS_ACCESS_KEY_ID") == "" || os.Getenv("AWS_SECRET_ACCESS_KEY") == "" {
		t.Setenv("AWS_ACCESS_KEY_ID", "cli-test")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "cli-test")
		t.Setenv("AWS_SESSION_TOKEN", "")
	}
	if os.Getenv("AWS_REGION") == "" {
		t.Setenv("AWS_REGION", "us-east-1")
	}
	t.Setenv("CATCHUP_OWNER", "")
}

// TestRunBeforeInitStore runs a pipeline with create_topics against a
// DynamoDB table that was never created: exit 1 with a hint naming
// `catchup init-store`, and no target topic created.
func TestRunBeforeInitStore(t *testing.T) {
	e := newCLIEnv(t)
	dynamoEnv(t, e)
	dst, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dst.Close)
	e.dst = dst
	cfg := e.writeConfigWith(t, "no-table.yaml", "dynamodb://"+dynamotest.TableName(t), cliTopic, "    create_topics: true\n")
	_, stderr := mustCLI(t, exitFailure, "", "run", "-c", cfg)
	if !strings.Contains(stderr, "create it with `catchup init-store -c CONFIG`") {
		t.Errorf("run before init-store: stderr %q, want the hint naming catchup init-store", stderr)
	}
	if topicExists(t, dst.ListenAddrs(), cliTopic) {
		t.Errorf("run before init-store created the target topic %s: want nothing created", cliTopic)
	}
}

// topicExists reports whether the cluster at brokers has topic.
func topicExists(t *testing.T, brokers []string, topic string) bool {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, mt)
	res, err := req.RequestWith(t.Context(), cl)
	if err != nil {
		t.Fatalf("metadata of %s: %v", topic, err)
	}
	return len(res.Topics) == 1 && res.Topics[0].ErrorCode == 0
}

// deleteTopic deletes topic from the cluster at brokers.
func deleteTopic(t *testing.T, brokers []string, topic string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.TimeoutMillis = 30000
	rt := kmsg.NewDeleteTopicsRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	req.TopicNames = []string{topic}
	res, err := req.RequestWith(t.Context(), cl)
	if err != nil {
		t.Fatalf("delete topic %s: %v", topic, err)
	}
	if err := kerr.ErrorForCode(res.Topics[0].ErrorCode); err != nil {
		t.Fatalf("delete topic %s: %v", topic, err)
	}
}
