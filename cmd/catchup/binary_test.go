package main

import (
	"bytes"
	stdcmp "cmp"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
	"github.com/kafka-catchup/catchup/internal/checkpoint/filestore"
	"github.com/kafka-catchup/catchup/internal/testbin"
)

// binEnv is one row of TestOutcomesThroughTheBinary: the clusters and the
// store of a cliEnv, and what the row staged for the child process.
type binEnv struct {
	*cliEnv
	store string   // store URL of the configuration
	env   []string // the child's environment
	args  []string // extra flags of the child's run
	// during, when set, runs once the child has started, with its
	// process and a context that ends when the child has exited.
	during func(ctx context.Context, p *os.Process)
}

// useDynamo points the row's store at a fresh table of the DynamoDB test
// server, and the child at it (dynamotest.ChildEnv).
func (b *binEnv) useDynamo(t *testing.T) {
	t.Helper()
	b.dynamo = dynamotest.Client(t, dynamotest.Endpoint(t))
	b.table = dynamotest.Table(t, b.dynamo)
	b.store = "dynamodb://" + b.table
	b.env = append(dynamotest.ChildEnv(t), "CATCHUP_OWNER=")
}

// holdFirst makes c hold the first request of key it receives, until
// release is closed or c closes, and returns a channel that receives that
// request when it arrives. Later requests are handled at once.
func holdFirst(c *kfake.Cluster, key kmsg.Key, release <-chan struct{}) <-chan kmsg.Request {
	got := make(chan kmsg.Request, 1)
	var fired atomic.Bool
	c.ControlKey(int16(key), func(req kmsg.Request) (kmsg.Response, error, bool) {
		if fired.Swap(true) {
			c.DropControl()
			return nil, nil, false
		}
		c.KeepControl() // until a later request drops it
		got <- req
		c.SleepControl(func() { <-release })
		return nil, nil, false
	})
	return got
}

// TestOutcomesThroughTheBinary builds the catchup binary and runs
// `catchup run --json` as a child process against kfake clusters (and
// dynalite where a live DynamoDB lease is needed), once per outcome of the
// table in docs/commands.md. It asserts the exit code (0 only when every selected
// partition is done, 1 for every other outcome, 2 for a bad configuration)
// and the --json document, decoded strictly: version, command, and each
// partition's status, next, lag, lease holder and error text.
func TestOutcomesThroughTheBinary(t *testing.T) {
	bin := testbin.BuildT(t, "./cmd/catchup")
	all := func(o outcome) map[int32]outcome {
		return map[int32]outcome{0: o, 1: o, 2: o}
	}
	done := outcome{status: "done", next: cliPerPart}
	for _, tc := range []struct {
		name    string
		include string // default cliTopic
		extra   string // pipeline keys
		stage   func(t *testing.T, b *binEnv)
		code    int
		want    map[int32]outcome // by partition; nil: the document has no pipeline
		docErr  string            // what the document's error (and stderr) says; "" none
	}{{
		name: "done",
		code: exitOK,
		want: all(done),
	}, {
		name:  "partial by window.max_records",
		extra: "    window: {max_records: 50}\n",
		code:  exitFailure,
		want:  all(outcome{status: "partial", next: 50, lag: cliPerPart - 50}),
	}, {
		// seedCLI's records are about 59 bytes as written: the 18th
		// takes a window past 1000 bytes.
		name:  "partial by window.max_bytes",
		extra: "    window: {max_bytes: 1000}\n",
		code:  exitFailure,
		want:  all(outcome{status: "partial", next: 18, lag: cliPerPart - 18}),
	}, {
		// Every source fetch is held past the window's duration.
		name:  "partial by window.max_duration",
		extra: "    window: {max_duration: 300ms}\n",
		stage: func(t *testing.T, b *binEnv) {
			release := make(chan struct{})
			t.Cleanup(func() { close(release) })
			b.src.ControlKey(int16(kmsg.Fetch), func(kmsg.Request) (kmsg.Response, error, bool) {
				b.src.KeepControl()
				b.src.SleepControl(func() {
					select {
					case <-release:
					case <-time.After(time.Second): // past max_duration
					}
				})
				return nil, nil, false
			})
		},
		code: exitFailure,
		want: all(outcome{status: "partial", lag: cliPerPart}),
	}, {
		// One partition at a time: SIGTERM (a deadline or an operator's
		// interrupt) arrives while the first partition's first fetch is
		// held, before the others' turn.
		name:  "partial and not_started by a signal",
		extra: "    parallelism: 1\n",
		stage: func(t *testing.T, b *binEnv) {
			release := make(chan struct{})
			t.Cleanup(func() { close(release) })
			held := holdFirst(b.src, kmsg.Fetch, release)
			b.during = func(ctx context.Context, p *os.Process) {
				select {
				case <-held:
					_ = p.Signal(syscall.SIGTERM)
				case <-ctx.Done():
				}
			}
		},
		code: exitFailure,
		want: map[int32]outcome{0: {status: "partial", lag: cliPerPart}, 1: {status: "not_started", lag: cliPerPart},
			2: {status: "not_started", lag: cliPerPart}},
	}, {
		// A live DynamoDB lease of another run on partition 1.
		name: "leased",
		stage: func(t *testing.T, b *binEnv) {
			b.useDynamo(t)
			st := dynamostore.New(b.dynamo, b.table)
			if _, _, err := st.Acquire(t.Context(), cliPipeline, catchup.Partition{Topic: cliTopic, Partition: 1}, "other-run", time.Hour); err != nil {
				t.Fatal(err)
			}
		},
		code: exitFailure,
		want: map[int32]outcome{0: done, 2: done,
			1: {status: "leased", leaseOwner: "other-run", leaseExpires: true, lag: cliPerPart, errHas: "is leased by other-run until "}},
	}, {
		name: "failed: source topic gone, checkpoints remain",
		stage: func(t *testing.T, b *binEnv) {
			cfg := b.writeConfigWith(t, "first.yaml", b.store, cliTopic, "")
			if r := runBinary(t, bin, b.env, nil, "run", "-c", cfg); r.code != exitOK {
				t.Fatalf("first run: exit %d, want %d\n%s", r.code, exitOK, r.stderr)
			}
			deleteTopic(t, b.src.ListenAddrs(), cliTopic)
		},
		code: exitFailure,
		want: all(outcome{status: "failed", next: cliPerPart, errHas: "source topic orders is gone, but pipeline cli holds its checkpoints"}),
	}, {
		name: "failed: target topic too short, no create_topics",
		stage: func(t *testing.T, b *binEnv) {
			dst, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(cliParts-1, cliTopic), kfake.SleepOutOfOrder())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(dst.Close)
			b.dst = dst
		},
		code: exitFailure,
		want: all(outcome{status: "failed", lag: cliPerPart, errHas: "topic orders has 2 partitions on the target but the source has 3"}),
	}, {
		// The partition whose produce request is held is taken over by
		// another process of the same owner (a second scheduled run with
		// a fixed --owner), as a stolen lease would be: the held run's
		// next commit is fenced.
		name: "fenced",
		stage: func(t *testing.T, b *binEnv) {
			b.useDynamo(t)
			b.args = []string{"--owner", "twin"}
			release := make(chan struct{})
			var once sync.Once
			t.Cleanup(func() { once.Do(func() { close(release) }) })
			held := holdFirst(b.dst, kmsg.Produce, release)
			b.during = func(ctx context.Context, _ *os.Process) {
				var req kmsg.Request
				select {
				case req = <-held:
				case <-ctx.Done():
					return
				}
				pr := req.(*kmsg.ProduceRequest)
				p := catchup.Partition{Topic: cliTopic, Partition: pr.Topics[0].Partitions[0].Partition}
				st := dynamostore.New(b.dynamo, b.table)
				if _, _, err := st.Acquire(context.Background(), cliPipeline, p, "twin", time.Hour); err != nil {
					t.Errorf("take over %s: %v", p, err)
				}
				once.Do(func() { close(release) })
			}
		},
		code: exitFailure,
		// Which partition is held depends on scheduling: checked below.
	}, {
		// A dead run's lease left in the file store on partition 1, and a
		// target whose leader answers a log end above its high watermark
		// (a follower stalled) for that partition: after replication_wait
		// the partition is in doubt.
		name:  "in_doubt",
		extra: "    provenance: true\n    takeover_settle: 100ms\n    replication_wait: 500ms\n",
		stage: func(t *testing.T, b *binEnv) {
			st, err := filestore.Open(filepath.Join(b.dir, "store"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := st.Acquire(t.Context(), cliPipeline, catchup.Partition{Topic: cliTopic, Partition: 1}, "dead-run", time.Hour); err != nil {
				t.Fatal(err)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			b.dst.ControlKey(int16(kmsg.OffsetForLeaderEpoch), func(r kmsg.Request) (kmsg.Response, error, bool) {
				b.dst.KeepControl()
				req := r.(*kmsg.OffsetForLeaderEpochRequest)
				if len(req.Topics) != 1 || len(req.Topics[0].Partitions) != 1 || req.Topics[0].Partitions[0].Partition != 1 {
					return nil, nil, false
				}
				res := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
				rt := kmsg.NewOffsetForLeaderEpochResponseTopic()
				rt.Topic = req.Topics[0].Topic
				rp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
				rp.Partition, rp.LeaderEpoch, rp.EndOffset = 1, req.Topics[0].Partitions[0].LeaderEpoch, 5 // the high watermark is 0
				rt.Partitions = append(rt.Partitions, rp)
				res.Topics = append(res.Topics, rt)
				return res, nil, true
			})
		},
		code: exitFailure,
		want: map[int32]outcome{0: done, 2: done,
			1: {status: "in_doubt", lag: cliPerPart, errHas: "stayed below its leader's log end 5"}},
	}, {
		name:    "include matches no topic",
		include: "no-such-topic",
		code:    exitFailure,
		docErr:  "pipeline cli: the include pattern matches no topic of the source",
	}, {
		name:   "bad configuration",
		extra:  "    window: {max_record: 5}\n",
		code:   exitUsage,
		docErr: "max_record",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			b := &binEnv{cliEnv: newCLIEnv(t), env: append(os.Environ(), "CATCHUP_OWNER=")}
			b.store = "file://" + filepath.Join(b.dir, "store")
			if tc.stage != nil {
				tc.stage(t, b)
			}
			include := stdcmp.Or(tc.include, cliTopic)
			cfg := b.writeConfigWith(t, "outcome.yaml", b.store, include, tc.extra)
			// The rows stage one after the other, and run their children
			// in parallel: a file store the test opens (in_doubt) holds a
			// flock, which a child forked meanwhile by another row would
			// share until it execs, and the row's own child would then
			// find the store locked.
			t.Parallel()
			r := runBinary(t, bin, b.env, b.during, append([]string{"run", "--json", "-c", cfg}, b.args...)...)
			if r.code != tc.code {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			doc := decodeDoc[reportJSONT](t, r.stdout)
			if doc.Command != "run" {
				t.Errorf("--json command %q, want run", doc.Command)
			}
			if !strings.Contains(doc.Error, tc.docErr) || (tc.docErr == "") != (doc.Error == "") {
				t.Errorf("--json error %q, want one containing %q", doc.Error, tc.docErr)
			}
			if tc.docErr != "" && !strings.Contains(r.stderr, tc.docErr) {
				t.Errorf("stderr %q does not say %q", r.stderr, tc.docErr)
			}
			if tc.want == nil && tc.name != "fenced" {
				if len(doc.Pipelines) != 0 {
					t.Errorf("--json has %d pipelines, want none:\n%s", len(doc.Pipelines), r.stdout)
				}
				return
			}
			if len(doc.Pipelines) != 1 || len(doc.Pipelines[0].Partitions) != cliParts {
				t.Fatalf("--json: want one pipeline of %d partitions:\n%s", cliParts, r.stdout)
			}
			got := outcomes(doc.Pipelines[0])
			want := tc.want
			if tc.name == "fenced" {
				want = fencedWant(t, got)
			}
			for p, w := range want {
				g := got[p]
				if !strings.Contains(g.errHas, w.errHas) || (w.errHas == "") != (g.errHas == "") {
					t.Errorf("partition %d: error %q, want one containing %q", p, g.errHas, w.errHas)
				}
				g.errHas = w.errHas
				if g != w {
					t.Errorf("partition %d: %+v, want %+v", p, g, w)
				}
			}
		})
	}
}

// fencedWant is the outcome the fenced row expects: exactly one partition
// fenced (the one whose produce request was held and taken over), saying
// so, and the others done.
func fencedWant(t *testing.T, got map[int32]outcome) map[int32]outcome {
	t.Helper()
	want := map[int32]outcome{}
	fenced := 0
	for p, g := range got {
		if g.status == "fenced" {
			fenced++
			// The held request was the run's first: nothing of this
			// partition was committed but its start.
			want[p] = outcome{status: "fenced", lag: cliPerPart,
				errHas: `for "twin" epoch 1: lease held by "twin" epoch 2: checkpoint: lease lost to another run (fenced)`}
			continue
		}
		want[p] = outcome{status: "done", next: cliPerPart}
	}
	if fenced != 1 {
		t.Errorf("%d partitions fenced, want 1: %+v", fenced, got)
	}
	return want
}

// binRun is what a child process did.
type binRun struct {
	code           int
	stdout, stderr string
}

// runBinary runs bin with args and env and waits for it, calling during
// (when set) with its process once it has started.
func runBinary(t *testing.T, bin string, env []string, during func(context.Context, *os.Process), args ...string) binRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), cliTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	running, exited := context.WithCancel(ctx)
	if during != nil {
		wg.Go(func() { during(running, cmd.Process) })
	}
	err := cmd.Wait()
	exited()
	wg.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s %s: %v", bin, strings.Join(args, " "), err)
	}
	return binRun{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}
