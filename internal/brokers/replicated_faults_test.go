package brokers_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-catchup/catchup/internal/brokers/replicatedtest"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
)

// Process and broker faults on the replicated target (RF 3), with
// the real catchup binary (built without -race) so that a run can die by
// SIGKILL and the exit code of each run is the CLI's.
const (
	killPartitions   = 4
	killPerPartition = 5000 // enough that the copy is still going when the fault comes
	killTimeout      = "2s" // producer.timeout of the runs
)

// TestReplicatedCatchupKilled: kill -9 of catchup while follower 2 is
// stalled longer than producer.timeout, then at once a new run with the same
// --owner, which takes the lease over while the leader holds records of the
// dead run above the high watermark. A settle that only watched the high
// watermark hold still would reconcile below it and copy those records
// again; the wait for the leader's log end prevents that. The stall is
// below replica.lag.time.max.ms (6 s; the follower returns and the ISR stays
// whole) and above it (the ISR shrinks by lag while the broker's session
// lives), with the file store and DynamoDB (dynalite).
func TestReplicatedCatchupKilled(t *testing.T) {
	e := needBrokers(t)
	r := needReplicated(t)
	bin := catchupBinary(t)
	for _, tc := range []struct {
		store string
		stall time.Duration
	}{
		{"file", 4 * time.Second},
		{"file", 9 * time.Second},
		{"dynamodb", 9 * time.Second},
	} {
		t.Run(fmt.Sprintf("%s_stall_%v", tc.store, tc.stall), func(t *testing.T) {
			testCatchupKilled(t, e, r, bin, tc.store, tc.stall)
		})
	}
}

func testCatchupKilled(t *testing.T, e itEnv, r replicatedtest.Target, bin, store string, stall time.Duration) {
	ctx := testContext(t, 4*time.Minute)
	topic := uniqueTopic("ckill")
	h := newChildCopy(ctx, t, e, r, bin, topic, store)

	c1 := h.start(t)
	h.waitCopying(ctx, t, c1)
	resumed := r.Stall(t, 2, stall)
	// Past producer.timeout: the leader has appended requests it answered
	// REQUEST_TIMED_OUT, and the run re-sends them; then it dies.
	time.Sleep(2500 * time.Millisecond)
	hwm, leo := h.ends(ctx)
	c1.kill(t)
	c2 := h.start(t)
	exit2 := c2.wait(t)
	<-resumed
	r.WaitInSync(ctx, t, topic, killPartitions, 1)
	exits := []string{c1.exit, exit2}
	if exit2 != "0" {
		exits = append(exits, h.start(t).wait(t))
	}
	t.Logf("at the kill: high watermarks %v, the leader's log ends %v (what lies between is appended, not visible)", hwm, leo)
	h.check(ctx, t, fmt.Sprintf("catchup killed, follower 2 stalled %v, %s store", stall, store), exits)
}

// TestReplicatedLeaderKilled: kill -9 of broker 1, the leader of every
// partition, in the middle of a copy with acks=all, RF 3 and
// min.insync.replicas 2, then its restart on its data while the copy goes
// on: a follower is elected, the run goes on or fails, a second run (if
// needed) completes it, and nothing may be lost or copied twice.
func TestReplicatedLeaderKilled(t *testing.T) {
	e := needBrokers(t)
	r := needReplicated(t)
	bin := catchupBinary(t)
	ctx := testContext(t, 4*time.Minute)
	t.Cleanup(func() { ensureRunning(t, r.Node(1)) })
	topic := uniqueTopic("lkill")
	h := newChildCopy(ctx, t, e, r, bin, topic, "file")

	c1 := h.start(t)
	h.waitCopying(ctx, t, c1)
	runScript(ctx, t, "stop.sh", r.Node(1), "--kill")
	tRestart := time.Now()
	runScript(ctx, t, "start.sh", "--restart", r.Node(1))
	t.Logf("broker 1 killed and restarted in %v", time.Since(tRestart).Round(time.Millisecond))
	exits := []string{c1.wait(t)}
	if exits[0] != "0" {
		exits = append(exits, h.start(t).wait(t))
	}
	r.WaitInSync(ctx, t, topic, killPartitions, 0)
	h.check(ctx, t, "leader broker 1 killed and restarted", exits)
}

// childCopy is one topic copied from the source to the replicated target
// by catchup processes.
type childCopy struct {
	r      replicatedtest.Target
	bin    string
	cfg    string
	env    []string
	topic  string
	source string // the source's listener
	total  int64
	cl     *kgo.Client      // of the target
	spec   spec             // the pipeline written to cfg (rewrite changes it)
	dynamo *dynamodb.Client // the store's DynamoDB, with store "dynamodb"
	// snapshot is the store table's items as a test scanned them.
	snapshot []map[string]types.AttributeValue
}

// rewrite changes the pipeline of h's configuration (its store, its name)
// for the runs started after it.
func (h *childCopy) rewrite(t *testing.T, change func(*spec)) {
	t.Helper()
	change(&h.spec)
	if err := os.WriteFile(h.cfg, []byte(h.spec.yaml()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// newChildCopy creates topic on the source (seeded) and on the target (led
// by broker 1) and writes the configuration of the runs: small fetches and
// produces, frequent commits, producer.timeout killTimeout, the store a
// folder ("file") or a fresh table of the test's DynamoDB ("dynamodb").
func newChildCopy(ctx context.Context, t *testing.T, e itEnv, r replicatedtest.Target, bin, topic, store string) *childCopy {
	t.Helper()
	createTopic(ctx, t, e.source.brokers, topic, killPartitions)
	r.CreateAssigned(ctx, t, topic, killPartitions)
	seed(ctx, t, e.source.brokers, makeRecords(topic, killPartitions, killPerPartition, faultValueBytes), faultSeedBatch)
	s := spec{
		store:  t.TempDir(),
		name:   "child",
		source: plaintext("it-source", e.source.brokers),
		target: plaintext("it-replicated", r.Brokers),
		topic:  topic,
		extra: "    commit_interval: 200ms\n    fetch_bytes: 4096\n    takeover_settle: 1s\n" +
			"    producer:\n      acks: all\n      batch_records: 20\n      timeout: " + killTimeout + "\n",
	}
	h := &childCopy{r: r, bin: bin, env: os.Environ(), topic: topic, source: e.source.brokers,
		total: killPartitions * killPerPartition, cl: r.Client(t)}
	if store == "dynamodb" {
		h.dynamo = dynamotest.Client(t, dynamotest.Endpoint(t))
		s.store = "dynamodb://" + dynamotest.Table(t, h.dynamo)
		h.env = dynamotest.ChildEnv(t)
	}
	h.cfg = filepath.Join(t.TempDir(), "pipelines.yaml")
	h.rewrite(t, func(sp *spec) { *sp = s })
	return h
}

// child is one catchup process.
type child struct {
	cmd    *exec.Cmd
	out    syncBuffer // stdout and stderr
	exited chan error
	exit   string // once it ended: its exit code, or "killed"
}

// start starts `catchup run` as owner "it-owner" (every run the same, as a
// restarted worker).
func (h *childCopy) start(t *testing.T) *child {
	t.Helper()
	c := &child{exited: make(chan error, 1)}
	c.cmd = exec.Command(h.bin, "run", "-c", h.cfg, "--owner", "it-owner")
	c.cmd.Env = h.env
	c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.out
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("start catchup run: %v", err)
	}
	t.Cleanup(func() {
		if c.exit == "" {
			_ = c.cmd.Process.Kill()
			c.exit = exitCode(<-c.exited)
		}
	})
	go func() { c.exited <- c.cmd.Wait() }()
	return c
}

// wait waits for c to end by itself and returns its exit code.
func (c *child) wait(t *testing.T) string {
	t.Helper()
	select {
	case err := <-c.exited:
		c.exit = exitCode(err)
	case <-time.After(3 * time.Minute):
		t.Fatalf("catchup run did not end within 3 minutes:\n%s", c.out.String())
	}
	t.Logf("catchup run exited %s:\n%s", c.exit, tail(c.out.String(), 12))
	return c.exit
}

// kill SIGKILLs c and waits for it.
func (c *child) kill(t *testing.T) {
	t.Helper()
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	c.exit = exitCode(<-c.exited)
	if c.exit != "killed" {
		t.Fatalf("catchup run ended by itself (exit %s) before the kill: slow the copy down\n%s", c.exit, c.out.String())
	}
}

// exitCode is the exit code of a finished process, or "killed".
func exitCode(err error) string {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return "0"
	case errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL:
		return "killed"
	case errors.As(err, &ee):
		return strconv.Itoa(ee.ExitCode())
	default:
		return err.Error()
	}
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.SplitAfter(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "")
}

// waitCopying waits until the target's high watermarks show that c has
// copied a twentieth of the records, and fails if c ends before.
func (h *childCopy) waitCopying(ctx context.Context, t *testing.T, c *child) {
	t.Helper()
	for {
		if offs, err := endOffsets(ctx, h.cl, h.topic, killPartitions); err == nil {
			var sum int64
			for _, o := range offs {
				sum += o
			}
			if sum >= h.total/20 {
				return
			}
		}
		select {
		case err := <-c.exited:
			c.exit = exitCode(err)
			t.Fatalf("catchup run ended (exit %s) before it had copied %d records:\n%s", c.exit, h.total/20, c.out.String())
		case <-ctx.Done():
			t.Fatalf("the copy did not start: %v\n%s", ctx.Err(), c.out.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// ends returns the high watermarks and, from OffsetForLeaderEpoch, the log
// end offsets of the target partitions ("?" when unknown), asked of broker
// 1, their leader (a stalled broker would hold the requests): what the
// leader holds above the high watermark is not visible yet.
func (h *childCopy) ends(ctx context.Context) (hwm []int64, leo []string) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second) // for the log only
	defer cancel()
	b := h.cl.Broker(1)
	hwm, _ = endOffsets(ctx, b, h.topic, killPartitions)
	leo = make([]string, killPartitions)
	for p := range int32(killPartitions) {
		leo[p] = "?"
		if o, err := replicatedtest.LogEnd(ctx, b, h.topic, p); err == nil {
			leo[p] = strconv.FormatInt(o, 10)
		}
	}
	return hwm, leo
}

// check counts the copy with a consumer of its own under both isolation
// levels, logs the scenario's line (records, duplicates, lost, out of
// order, the exit code of each run) and fails unless it is exact and the
// last run exited 0.
func (h *childCopy) check(ctx context.Context, t *testing.T, scenario string, exits []string) {
	t.Helper()
	for _, iso := range replicatedtest.Isolations() {
		x := count(ctx, t, h.r.Brokers, "it-source", h.topic, killPartitions, killPerPartition, iso.Level)
		t.Logf("scenario: %s: %s: %v of %d; exit codes of the runs: %s", scenario, iso.Name, x, h.total, strings.Join(exits, ", "))
		if !x.Exact() {
			t.Errorf("%s: %s: %v, want 0 lost, 0 duplicated, 0 out of order", scenario, iso.Name, x)
		}
	}
	if last := exits[len(exits)-1]; last != "0" {
		t.Errorf("%s: the last run exited %s, want 0", scenario, last)
	}
}

// catchupBinary builds cmd/catchup without -race, for runs that a test
// kills and restarts.
func catchupBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "catchup")
	build := exec.Command("go", "build", "-o", bin, "./cmd/catchup")
	build.Dir = filepath.Join(scripts(t), "..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/catchup: %v\n%s", err, out)
	}
	return bin
}
