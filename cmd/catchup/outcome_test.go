package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore"
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

// TestRunOutcomes drives each outcome of a partition through the CLI
// against kfake and checks the exit code and run --json: done (exit 0), and
// partial, leased (by whom, until when) and failed, each exit 1 with what is
// left. A run whose include matches no topic, or whose source topic was
// deleted while the store holds its checkpoints, exits 1 saying so.
func TestRunOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		store   func(t *testing.T, e *cliEnv) string // default: a file store
		include string
		extra   string
		before  func(t *testing.T, e *cliEnv) // after a first run that copied nothing but the config's start
		code    int
		want    map[int32]outcome
		stderr  string // with exit 1 and no report
	}{{
		name: "done",
		code: exitOK,
		want: map[int32]outcome{0: {status: "done", next: cliPerPart}, 1: {status: "done", next: cliPerPart}, 2: {status: "done", next: cliPerPart}},
	}, {
		name:  "partial by max_records",
		extra: "    window: {max_records: 50}\n",
		code:  exitFailure,
		want: map[int32]outcome{0: {status: "partial", next: 50, lag: cliPerPart - 50}, 1: {status: "partial", next: 50, lag: cliPerPart - 50},
			2: {status: "partial", next: 50, lag: cliPerPart - 50}},
	}, {
		// Records of about 59 bytes as written (seedCLI's, with the
		// provenance header): the 18th takes a window past 1000 bytes.
		name:  "partial by max_bytes",
		extra: "    window: {max_bytes: 1000}\n",
		code:  exitFailure,
		want: map[int32]outcome{0: {status: "partial", next: 18, lag: cliPerPart - 18}, 1: {status: "partial", next: 18, lag: cliPerPart - 18},
			2: {status: "partial", next: 18, lag: cliPerPart - 18}},
	}, {
		// A file store's lock keeps a second process out, so a lease left
		// in its file is a dead run's and is taken over at once: a live
		// lease of another run is a DynamoDB case.
		name:  "leased by a dead run",
		store: dynamoStore,
		before: func(t *testing.T, e *cliEnv) {
			st := dynamostore.New(e.dynamo, e.table)
			if _, _, err := st.Acquire(t.Context(), cliPipeline, catchup.Partition{Topic: cliTopic, Partition: 1}, "dead-run", time.Hour); err != nil {
				t.Fatal(err)
			}
		},
		code: exitFailure,
		want: map[int32]outcome{0: {status: "done", next: cliPerPart}, 2: {status: "done", next: cliPerPart},
			1: {status: "leased", leaseOwner: "dead-run", leaseExpires: true, lag: cliPerPart,
				errHas: "is leased by dead-run until "}},
	}, {
		name: "failed: source topic gone, checkpoints remain",
		before: func(t *testing.T, e *cliEnv) {
			mustCLI(t, exitOK, "", "run", "-c", e.cfg)
			deleteTopic(t, e.src.ListenAddrs(), cliTopic)
		},
		code: exitFailure,
		want: map[int32]outcome{
			0: {status: "failed", next: cliPerPart, errHas: "source topic orders is gone, but pipeline cli holds its checkpoints"},
			1: {status: "failed", next: cliPerPart, errHas: "source topic orders is gone, but pipeline cli holds its checkpoints"},
			2: {status: "failed", next: cliPerPart, errHas: "source topic orders is gone, but pipeline cli holds its checkpoints"},
		},
	}, {
		name:    "include matches no topic",
		include: "no-such-topic",
		code:    exitFailure,
		stderr:  "pipeline cli: the include pattern matches no topic of the source",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCLIEnv(t)
			if tc.include == "" {
				tc.include = cliTopic
			}
			store := "file://" + filepath.Join(e.dir, "store")
			if tc.store != nil {
				store = tc.store(t, e)
			}
			cfg := e.writeConfigWith(t, "outcome.yaml", store, tc.include, tc.extra)
			if tc.before != nil {
				tc.before(t, e)
			}
			if tc.want == nil {
				stdout, stderr := mustCLI(t, tc.code, "", "run", "--json", "-c", cfg)
				if !strings.Contains(stderr, tc.stderr) {
					t.Errorf("run: stderr %q, want it to contain %q (stdout %q)", stderr, tc.stderr, stdout)
				}
				return
			}
			got := outcomes(runJSONExit(t, tc.code, cfg))
			for p, w := range tc.want {
				g := got[p]
				if !strings.Contains(g.errHas, w.errHas) || (w.errHas == "" && g.errHas != "") {
					t.Errorf("partition %d: error %q, want it to contain %q", p, g.errHas, w.errHas)
				}
				g.errHas = w.errHas
				if g != w {
					t.Errorf("partition %d: %+v, want %+v", p, g, w)
				}
			}
		})
	}
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
