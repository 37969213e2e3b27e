package crashtest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-catchup/catchup/internal/brokers/replicatedtest"
	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
	"github.com/kafka-catchup/catchup/internal/checkpoint/filestore"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/kafkago"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/verify"
)

// Environment variables read by the harness.
const (
	envSeed  = "CATCHUP_CRASH_SEED"  // seed of the random data and kill delays; default: the time
	envKills = "CATCHUP_CRASH_KILLS" // kills per configuration; default defaultKills
)

const (
	defaultKills = 100
	srcName      = "crash-src" // source cluster name, in every provenance header
	pipelineName = "crash"
	ownerID      = "crash" // every child runs as this lease owner (--owner)

	seedRecords   = 4000 // plain records in the initial backlog
	seedTxns      = 12   // transactions in the initial backlog, every third aborted
	appendRecords = 600  // plain records appended after each child run
	txnRecords    = 30   // records per transaction and partition

	childTimeout = 3 * time.Minute // an uninterrupted child run
)

// crashTopics are the source (and target) topics. The transactional topic
// gets only transactional records, committed and aborted.
var crashTopics = []struct {
	name       string
	partitions int32
	txn        bool
}{{"orders", 4, false}, {"events", 3, false}, {"txn", 2, true}}

// Header keys of the seeded records.
const (
	hdrID      = "id"      // "topic/partition/seq", unique in the source
	hdrAborted = "aborted" // on records of aborted transactions only
)

// options say what one harness run tests.
// harnessTakeoverSettle is the children's takeover_settle: shorter than the
// default (1s), so that kills spread over the whole run rather than land in
// the wait, and still longer than any produce delay a test stages.
const harnessTakeoverSettle = "400ms"

type options struct {
	store        string // "file" or "dynamodb"
	provenance   bool
	kills        int
	produceDelay time.Duration // how long the target holds every produce request before handling it
	// replicated: the target is the replicated target of test/kafka
	// (3 brokers, RF 3, min.insync.replicas 2) instead of kfake, and
	// followers are stalled (SIGSTOP) while children run and are killed.
	replicated bool
	// losses, rollbacks: after kills, the store is lost or put back to an
	// earlier snapshot (loss_test.go).
	losses, rollbacks bool
}

// harness is one crash test: clusters, data, store, the child processes and
// what was measured.
type harness struct {
	t    *testing.T
	o    options
	seed uint64
	rng  *rand.Rand
	dir  string

	src, dst   *kfake.Cluster // dst: nil with a replicated target
	rt         replicatedtest.Target
	plain, txn *kgo.Client
	openTxn    bool // a transaction of txn is open
	seq        map[catchup.Partition]int
	base       time.Time // timestamp of the first record

	cfg   string   // configuration file of the children
	env   []string // environment of the children
	table string
	dyn   *dynamodb.Client

	srcCommitted, srcAll, dstAll *kafkago.Source
	dstCommitted                 *kafkago.Source // the target under read_committed; replicated only
	dstAdmin                     *kafkago.Target

	// Follower stalls on the replicated target (stalls.go).
	stallDone                        <-chan struct{} // of the current or last stall; nil before the first
	stalls, killedStalled, selfFails int

	// Measurements of the kill loop.
	kills, completed int
	// When the kills landed, from what the store and the target show after
	// each: before the run leased any partition (start-up), with leases
	// taken but nothing written to the target yet (reconciliation, first
	// fetches), or after the run wrote to the target; of the latter, how
	// many after the run had also committed a checkpoint.
	killedStartup, killedLeased, killedWriting, killedAfterCommit int
	// uncommitted sums, over the kills, the records the killed run wrote to
	// the target after its last commit: with provenance they are what
	// reconciliation must skip, without it what is copied again.
	uncommitted int64
	committed   tally // the target read under read_committed (replicated only), by check
	maxDelay    time.Duration
	// Store events (loss_test.go).
	snapshots                          []storeSnapshot
	losses, rollbacks, rolledBackKills int

	aimed      map[phase]int       // kills aimed at each moment, including runs that ended first
	armed      atomic.Pointer[aim] // the kill planned for the running child
	began      time.Time
	lastOutput string
}

// crashSeed returns the seed of this test run: CATCHUP_CRASH_SEED or the time.
func crashSeed(t *testing.T) uint64 {
	if s := os.Getenv(envSeed); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want an unsigned integer", envSeed, s)
		}
		return v
	}
	return uint64(time.Now().UnixNano())
}

// crashKills returns the number of kills per configuration.
func crashKills(t *testing.T) int {
	if s := os.Getenv(envKills); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			t.Fatalf("%s=%q: want a number of kills", envKills, s)
		}
		return v
	}
	return defaultKills
}

func newHarness(t *testing.T, o options, dstOpts ...kfake.Opt) *harness {
	t.Helper()
	h := &harness{t: t, o: o, seed: crashSeed(t), dir: t.TempDir(), seq: map[catchup.Partition]int{}, aimed: map[phase]int{},
		base: time.Now().Add(-48 * time.Hour).Truncate(time.Millisecond)}
	h.rng = rand.New(rand.NewPCG(h.seed, h.seed^0x9e3779b97f4a7c15))
	t.Logf("seed=%d (replay the data and the kill delays with %s=%d)", h.seed, envSeed, h.seed)

	var topicOpts []kfake.Opt
	for _, tp := range crashTopics {
		topicOpts = append(topicOpts, kfake.SeedTopics(tp.partitions, tp.name))
	}
	h.src = newCluster(t, topicOpts...)
	var dstAddrs []string
	producer := "{batch_records: 20}"
	if o.replicated {
		h.rt = needReplicated(t)
		dstAddrs = h.rt.Seeds()
		producer = "{batch_records: 20, timeout: " + replicatedProducerTimeout + "}"
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		for _, tp := range crashTopics {
			h.rt.CreateAssigned(ctx, t, tp.name, tp.partitions)
		}
	} else {
		h.dst = newCluster(t, append(topicOpts, dstOpts...)...)
		dstAddrs = h.dst.ListenAddrs()
	}

	var err error
	if h.plain, err = kgo.NewClient(kgo.SeedBrokers(h.src.ListenAddrs()...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.plain.Close)
	if h.txn, err = kgo.NewClient(kgo.SeedBrokers(h.src.ListenAddrs()...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0),
		kgo.TransactionalID("crash-txn"), kgo.TransactionTimeout(time.Minute)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.txn.Close)

	srcCluster := config.Cluster{Name: srcName, Brokers: h.src.ListenAddrs()}
	dstCluster := config.Cluster{Name: "crash-dst", Brokers: dstAddrs}
	h.srcCommitted = newSource(t, srcCluster, "read_committed")
	h.srcAll = newSource(t, srcCluster, "read_uncommitted")
	h.dstAll = newSource(t, dstCluster, "read_uncommitted")
	if o.replicated {
		h.dstCommitted = newSource(t, dstCluster, "read_committed")
	}
	if h.dstAdmin, err = pipeline.ConnectWriter(dstCluster, config.DefaultProducer()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.dstAdmin.Close)
	if o.replicated {
		h.waitTargetTopics(t)
	}

	h.env = os.Environ()
	store := "file://" + h.storeDir()
	if o.store == "dynamodb" {
		h.dyn = dynamotest.Client(t, dynamotest.Endpoint(t))
		h.table = dynamotest.Table(t, h.dyn)
		store = "dynamodb://" + h.table
		h.env = dynamotest.ChildEnv(t)
	}
	var names []string
	for _, tp := range crashTopics {
		names = append(names, tp.name)
	}
	h.cfg = filepath.Join(h.dir, "pipelines.yaml")
	yaml := fmt.Sprintf(`store: %s
pipelines:
  - name: %s
    source: {name: %s, brokers: [%s]}
    target: {name: crash-dst, brokers: [%s]}
    topics: {include: [%s]}
    provenance: %t
    commit_interval: 50ms
    fetch_bytes: 16384
    producer: %s
    takeover_settle: %s
`, store, pipelineName, srcName, h.src.ListenAddrs()[0], strings.Join(dstAddrs, ", "), strings.Join(names, ", "), o.provenance, producer, cmp.Or(os.Getenv("CATCHUP_CRASH_TAKEOVER_SETTLE"), harnessTakeoverSettle))
	if err := os.WriteFile(h.cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	h.installAim() // before any control a test adds: a kill precedes a produce delay
	return h
}

func newCluster(t *testing.T, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

func newSource(t *testing.T, c config.Cluster, isolation string) *kafkago.Source {
	t.Helper()
	s, err := pipeline.ConnectReader(c, isolation)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// partitions lists every source partition, and with txn the transactional ones only.
func partitions(txn bool) []catchup.Partition {
	var ps []catchup.Partition
	for _, tp := range crashTopics {
		if tp.txn != txn {
			continue
		}
		for p := range tp.partitions {
			ps = append(ps, catchup.Partition{Topic: tp.name, Partition: p})
		}
	}
	return ps
}

func allPartitions() []catchup.Partition { return append(partitions(false), partitions(true)...) }

// record returns the next record of p: keys, null keys, null and empty
// values, headers (one of them empty), old and new timestamps, sizes from
// 20 to about 500 bytes.
func (h *harness) record(p catchup.Partition, aborted bool) *kgo.Record {
	i := h.seq[p]
	h.seq[p]++
	id := fmt.Sprintf("%s/%d/%d", p.Topic, p.Partition, i)
	r := &kgo.Record{Topic: p.Topic, Partition: p.Partition,
		Key:       []byte("key-" + id),
		Value:     []byte(strings.Repeat(id+";", 1+h.rng.IntN(40))),
		Timestamp: h.base.Add(time.Duration(i) * time.Millisecond),
		Headers:   []kgo.RecordHeader{{Key: hdrID, Value: []byte(id)}},
	}
	switch h.rng.IntN(8) {
	case 0:
		r.Key = nil
	case 1:
		r.Value = nil
	case 2:
		r.Value = []byte{}
	case 3:
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: "trace", Value: []byte(strconv.FormatUint(h.rng.Uint64(), 16))},
			kgo.RecordHeader{Key: "empty", Value: []byte{}})
	case 4:
		r.Timestamp = h.base.Add(-time.Duration(h.rng.IntN(1000)) * time.Minute)
	}
	if aborted {
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: hdrAborted, Value: []byte("1")})
	}
	return r
}

// appendPlain produces n records spread at random over the plain partitions.
func (h *harness) appendPlain(ctx context.Context, n int) {
	h.t.Helper()
	ps := partitions(false)
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = h.record(ps[h.rng.IntN(len(ps))], false)
	}
	if err := h.plain.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		h.t.Fatalf("produce to the source: %v", err)
	}
}

// beginTxn opens a transaction and writes txnRecords records to every
// transactional partition in it.
func (h *harness) beginTxn(ctx context.Context, abort bool) {
	h.t.Helper()
	if err := h.txn.BeginTransaction(); err != nil {
		h.t.Fatalf("begin transaction: %v", err)
	}
	h.openTxn = true
	var recs []*kgo.Record
	for _, p := range partitions(true) {
		for range txnRecords {
			recs = append(recs, h.record(p, abort))
		}
	}
	if err := h.txn.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		h.t.Fatalf("produce in a transaction: %v", err)
	}
}

// endTxn commits or aborts the open transaction; the records say which.
func (h *harness) endTxn(ctx context.Context, commit bool) {
	h.t.Helper()
	if err := h.txn.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		h.t.Fatalf("end transaction (commit %t): %v", commit, err)
	}
	h.openTxn = false
}

// seedBacklog writes the initial backlog: plain records and transactions,
// every third of them aborted.
func (h *harness) seedBacklog(ctx context.Context) {
	h.t.Helper()
	h.appendPlain(ctx, seedRecords)
	for i := range seedTxns {
		abort := i%3 == 1
		h.beginTxn(ctx, abort)
		h.endTxn(ctx, !abort)
	}
}

// child is one running catchup process.
type child struct {
	cmd    *exec.Cmd
	out    bytes.Buffer  // stdout
	errOut bytes.Buffer  // stderr: the log
	done   chan struct{} // closed once the process has exited
	err    error         // how it exited, once done
	start  time.Time
	ran    time.Duration // from start to exit, once done
}

func (h *harness) startChild(args ...string) *child {
	h.t.Helper()
	c := &child{done: make(chan struct{})}
	c.cmd = exec.Command(catchupBin, append([]string{"run", "-c", h.cfg, "--owner", ownerID}, args...)...)
	c.cmd.Env = h.env
	c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.errOut
	c.start = time.Now()
	if err := c.cmd.Start(); err != nil {
		h.t.Fatalf("start catchup run: %v", err)
	}
	go func() {
		c.err = c.cmd.Wait()
		c.ran = time.Since(c.start)
		close(c.done)
	}()
	return c
}

// runToEnd runs a child without killing it and fails the test unless it
// exits 0. It returns what the child printed.
func (h *harness) runToEnd(args ...string) string {
	h.t.Helper()
	c := h.startChild(args...)
	select {
	case <-c.done:
		if c.err != nil {
			h.t.Fatalf("catchup run (not killed): %v\n%s%s", c.err, c.out.String(), c.errOut.String())
		}
	case <-time.After(h.runLimit()):
		_ = c.cmd.Process.Signal(syscall.SIGKILL)
		<-c.done
		err := c.err
		h.t.Fatalf("catchup run did not end within %s (killed: %v)\n%s%s", h.runLimit(), err, c.out.String(), c.errOut.String())
	}
	return c.out.String()
}

// runLimit is how long an uninterrupted child run may take: childTimeout,
// and on a slow target twice the time its largest partition's records take
// at one request of batch_records (20) per produce delay, since a
// partition's requests go one after another. The killed children copy
// little, so the final run copies most of what the kills appended, which
// grows with the kills.
func (h *harness) runLimit() time.Duration {
	if h.o.produceDelay <= 0 {
		return childTimeout
	}
	most := 0
	for _, n := range h.seq {
		most = max(most, n)
	}
	return childTimeout + 2*time.Duration(most/20+1)*h.o.produceDelay
}

// targetEnds returns the end offsets of the target partitions.
func (h *harness) targetEnds(ctx context.Context) map[catchup.Partition]int64 {
	h.t.Helper()
	ends, err := h.dstAdmin.EndOffsets(ctx, allPartitions())
	if err != nil {
		h.t.Fatalf("target end offsets: %v", err)
	}
	return ends
}

// settledTargetEnds returns the target end offsets once a produce request
// the killed child had already sent has landed: kfake may append it a moment
// after the child died. The ends are read until two reads 50ms apart agree
// (within two seconds).
func (h *harness) settledTargetEnds(ctx context.Context) map[catchup.Partition]int64 {
	ends := h.targetEnds(ctx)
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		again := h.targetEnds(ctx)
		if maps.Equal(ends, again) {
			break
		}
		ends = again
	}
	return ends
}

// killLoop starts a child, kills it at a moment it aims at (aim_test.go),
// and repeats until o.kills children were killed. Between two children it
// appends records to the source (plain ones, and sometimes a transaction
// that stays open while the next child runs), so that every child has a
// window to copy; with o.losses or o.rollbacks it also loses the store or
// rolls it back after kills (loss_test.go).
//
// The delays of the random kills are drawn uniformly from [0, D]. D follows
// the length of an uninterrupted run: a child that ends by itself before its
// kill shows how long a whole run takes, and D becomes 1.25 times that;
// every random kill grows D by 5 %, since the run was longer than its delay.
func (h *harness) killLoop(ctx context.Context) {
	t := h.t
	t.Helper()
	d := 150 * time.Millisecond
	if h.o.replicated {
		// A child on the real cluster takes longer to start, and a stall
		// holds its produce requests for producer.timeout and more.
		d = 2 * time.Second
	}
	const minD = 20 * time.Millisecond
	maxIterations := 3*h.o.kills + 50
	for iter := 0; h.kills < h.o.kills; iter++ {
		if iter == maxIterations {
			t.Fatalf("%d children started, only %d killed: the runs end before the kills (aims %v, last delay range %s)", iter, h.kills, h.aimed, d)
		}
		txnOpen, abort := h.rng.IntN(3) == 0, h.rng.IntN(3) == 0
		if txnOpen {
			h.beginTxn(ctx, abort) // open while the child runs: its window ends at the last stable offset
		}
		h.maybeStall()
		before := h.targetEnds(ctx)
		leases, commits := storeCounts(h.checkpoints(ctx))
		ph := h.nextPhase(iter)
		h.aimed[ph]++
		c := h.startChild()
		fired, disarm := h.arm(ctx, c, ph, before, leases, commits)
		var timer <-chan time.Time
		if ph == phaseRandom {
			delay := time.Duration(h.rng.Int64N(int64(d) + 1))
			h.maxDelay = max(h.maxDelay, delay)
			timer = time.After(delay)
		}
		select {
		case <-c.done: // killed by an aim, or ended by itself: reap tells
		case <-timer:
			_ = c.cmd.Process.Signal(syscall.SIGKILL)
		case <-fired:
		}
		killed := h.reap(c, iter)
		disarm()
		switch {
		case killed && ph == phaseRandom:
			d = d * 21 / 20
		case !killed && ph == phaseRandom:
			d = max(minD, c.ran*5/4)
		}
		if killed {
			h.kills++
			if h.stalling() {
				h.killedStalled++
			}
		}
		h.lastOutput = c.out.String() + c.errOut.String()
		if txnOpen {
			h.endTxn(ctx, !abort)
		}
		h.appendPlain(ctx, appendRecords)
		if killed {
			h.classify(ctx, before, leases, commits)
			h.storeEvent(ctx)
		}
	}
	h.endStalls(ctx)
	t.Logf("kill loop: %d kills: %d in start-up, %d with leases taken before writing, %d while writing (%d of them after a commit of the run); "+
		"%d runs ended by themselves; aims %v; random delays up to %s",
		h.kills, h.killedStartup, h.killedLeased, h.killedWriting, h.killedAfterCommit, h.completed, h.aimed, h.maxDelay.Round(time.Millisecond))
}

// reap waits for the child and reports whether SIGKILL (which only the
// harness sends) killed it; a child that exited by itself counts as
// completed, and fails the test unless it exited well.
func (h *harness) reap(c *child, iter int) bool {
	h.t.Helper()
	<-c.done
	err := c.err
	var ee *exec.ExitError
	if err != nil && errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL {
		return true
	}
	if err != nil && !h.selfFailed(err, c) {
		h.t.Fatalf("catchup run %d (after %d kills) failed by itself: %v\n%s%s", iter, h.kills, err, c.out.String(), c.errOut.String())
	}
	h.completed++
	return false
}

// classify looks at the store and the target after a kill, given the
// target end offsets and the store counts before the run started: it counts
// the kill in one of the kill moments, and adds the records the run wrote
// after its last commit to h.uncommitted.
func (h *harness) classify(ctx context.Context, before map[catchup.Partition]int64, leases, commits int64) {
	// Without provenance the count of what the killed run wrote must be
	// exact (the duplicates are asserted equal to it), so the ends are
	// read once a request it had in flight has landed. With provenance
	// the next child starts at once, as a restarted worker would: its
	// takeover settle (replicate.Options.TakeoverSettle), not this
	// harness, must keep that request from being copied twice.
	ends := h.targetEnds(ctx)
	if !h.o.provenance {
		ends = h.settledTargetEnds(ctx)
	}
	cps := h.checkpoints(ctx)
	l, c := storeCounts(cps)
	var wrote int64
	for p, end := range ends {
		wrote += end - before[p]
		// The run wrote [before, end); its commits cover up to TargetEnd.
		h.uncommitted += max(0, end-max(cps[p].TargetEnd, before[p]))
	}
	switch {
	case wrote > 0:
		h.killedWriting++
		if c > commits {
			h.killedAfterCommit++
		}
	case l > leases:
		h.killedLeased++
	default:
		h.killedStartup++
	}
}

// storeCounts returns the sums of the lease epochs and of the commits over
// cps: the first grows when a run leases a partition, the second when it
// commits.
func storeCounts(cps map[catchup.Partition]checkpoint.Checkpoint) (epochs, commits int64) {
	for _, c := range cps {
		epochs += c.Epoch
		commits += c.Commits
	}
	return epochs, commits
}

// checkpoints loads the stored checkpoints of the pipeline.
func (h *harness) checkpoints(ctx context.Context) map[catchup.Partition]checkpoint.Checkpoint {
	h.t.Helper()
	cps, err := h.loadStore(ctx)
	if err != nil {
		h.t.Fatalf("load checkpoints: %v", err)
	}
	return cps
}

// loadStore reads the stored checkpoints of the pipeline as they are, also
// while a child writes them; it creates nothing (a lost store stays lost
// until a child finds it so).
func (h *harness) loadStore(ctx context.Context) (map[catchup.Partition]checkpoint.Checkpoint, error) {
	var st checkpoint.Store = dynamostore.New(h.dyn, h.table)
	if h.dyn == nil {
		ro, err := filestore.OpenReadOnly(h.storeDir())
		if err != nil {
			return nil, err
		}
		st = ro
	}
	cps, err := st.Load(ctx, pipelineName)
	if err != nil {
		return nil, err
	}
	out := map[catchup.Partition]checkpoint.Checkpoint{}
	for _, c := range cps {
		out[c.Partition] = c
	}
	return out, nil
}

// finish ends any open transaction, appends a last batch and runs a child to
// its end; it returns the child's JSON report.
func (h *harness) finish(ctx context.Context) runReport {
	h.t.Helper()
	if h.openTxn {
		h.endTxn(ctx, true)
	}
	h.appendPlain(ctx, appendRecords)
	out := h.runToEnd("--json")
	var doc struct {
		Pipelines []runReport `json:"pipelines"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Pipelines) != 1 {
		h.t.Fatalf("final run: report of %d pipelines, want 1: %v\n%s", len(doc.Pipelines), err, out)
	}
	rep := doc.Pipelines[0]
	for _, p := range rep.Partitions {
		if p.Status != "done" || p.Lag != 0 {
			h.t.Errorf("final run: %s/%d ended %s with lag %d, want done with lag 0", p.Topic, p.Partition, p.Status, p.Lag)
		}
	}
	return rep
}

// runReport is the part of `catchup run --json` the harness reads.
type runReport struct {
	Resent     int64 `json:"resent"`
	Partitions []struct {
		Topic      string `json:"topic"`
		Partition  int32  `json:"partition"`
		Copied     int64  `json:"copied"`
		Skipped    int64  `json:"skipped"`
		Lag        int64  `json:"lag"`
		Reconciled int    `json:"reconciled"`
		Status     string `json:"status"`
	} `json:"partitions"`
}

// tally is the comparison of the whole target with the whole source.
type tally struct {
	records     int64 // committed source records
	aborted     int64 // records of aborted transactions in the source
	lost        int64 // source records absent from the target
	duplicated  int64 // extra copies in the target
	outOfOrder  int64 // first copies placed after the first copy of a later source record
	differing   int64 // first copies that differ from their source record
	foreign     int64 // target records that are no committed source record (an aborted one, say)
	badOffset   int64 // with provenance: copies whose provenance header names another offset
	verifyProbs []string
}

// check compares the target with the source twice: with internal/verify
// (through the provenance headers, when on), and independently through the
// id header of every seeded record. It also checks the final checkpoints.
func (h *harness) check(ctx context.Context) tally {
	t := h.t
	t.Helper()
	var tl tally
	marks, err := h.srcAll.ListOffsets(ctx, allPartitions())
	if err != nil {
		t.Fatal(err)
	}
	cps := h.checkpoints(ctx)
	for _, m := range marks {
		if m.LastStable != m.HighWatermark {
			t.Fatalf("%s: last stable offset %d below the high watermark %d: a transaction is still open", m.Partition, m.LastStable, m.HighWatermark)
		}
		if c := cps[m.Partition]; !c.Exists || c.Next != m.HighWatermark {
			t.Errorf("%s: checkpoint %d (exists %t), want the source end %d", m.Partition, c.Next, c.Exists, m.HighWatermark)
		}
		tp := m.Partition
		src := readRange(ctx, t, h.srcCommitted, tp, m.LogStart, m.HighWatermark)
		all := readRange(ctx, t, h.srcAll, tp, m.LogStart, m.HighWatermark)
		dends, err := h.dstAdmin.EndOffsets(ctx, []catchup.Partition{tp})
		if err != nil {
			t.Fatal(err)
		}
		dst := readRange(ctx, t, h.dstAll, tp, 0, dends[tp])
		if h.dstCommitted != nil {
			h.compare(tp, src, readRange(ctx, t, h.dstCommitted, tp, 0, dends[tp]), &h.committed)
		}
		for i := range all {
			if header(&all[i], hdrAborted) != nil {
				tl.aborted++
			}
		}
		h.compare(tp, src, dst, &tl)

		if h.o.provenance {
			r, err := verify.Partition(ctx, h.srcCommitted, h.dstAll, tp, tp, m.LogStart, m.HighWatermark,
				verify.Options{Cluster: srcName, FetchBytes: 1 << 20})
			if err != nil {
				t.Fatalf("verify %s: %v", tp, err)
			}
			if !r.OK() || r.Matched != int64(len(src)) {
				tl.verifyProbs = append(tl.verifyProbs, fmt.Sprintf("%s: source %d, matched %d, missing %d, duplicated %d, differing %d, out of order %d: %s",
					tp, r.Source, r.Matched, r.Missing, r.Duplicated, r.Differing, r.OutOfOrder, r.First))
			}
		}
	}
	if tl.aborted == 0 {
		t.Errorf("the source holds no aborted transactional records: the test proves nothing about them")
	}
	return tl
}

// compare matches dst with src through the id header.
func (h *harness) compare(p catchup.Partition, src, dst []catchup.Record, tl *tally) {
	index := make(map[string]int, len(src))
	for i := range src {
		id := header(&src[i], hdrID)
		if id == nil || header(&src[i], hdrAborted) != nil {
			h.t.Fatalf("%s: source offset %d read under read_committed has id %q and is aborted: %t", p, src[i].Offset, id, header(&src[i], hdrAborted) != nil)
		}
		index[string(id)] = i
	}
	tl.records += int64(len(src))
	seen := make(map[string]int, len(src))
	last := -1
	for j := range dst {
		d := &dst[j]
		id := string(header(d, hdrID))
		i, ok := index[id]
		if !ok {
			tl.foreign++
			continue
		}
		if h.o.provenance {
			if off, ok := catchup.SourceOffset(d, srcName, p); !ok || off != src[i].Offset {
				tl.badOffset++
			}
		}
		seen[id]++
		if seen[id] > 1 {
			tl.duplicated++
			continue
		}
		if i < last {
			tl.outOfOrder++
		}
		last = max(last, i)
		if !same(&src[i], d) {
			tl.differing++
		}
	}
	tl.lost += int64(len(src) - len(seen))
}

// same reports whether copy d preserves s: key and value (null apart from
// empty), headers in order (d may add the provenance header last), and the
// timestamp in milliseconds.
func same(s, d *catchup.Record) bool {
	hs := d.Headers
	if n := len(hs); n > 0 && hs[n-1].Key == catchup.ProvenanceHeader {
		hs = hs[:n-1]
	}
	eq := func(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }
	return eq(s.Key, d.Key) && eq(s.Value, d.Value) && s.Timestamp.UnixMilli() == d.Timestamp.UnixMilli() &&
		slices.EqualFunc(s.Headers, hs, func(a, b catchup.Header) bool { return a.Key == b.Key && eq(a.Value, b.Value) })
}

func header(r *catchup.Record, key string) []byte {
	for _, h := range r.Headers {
		if h.Key == key {
			return h.Value
		}
	}
	return nil
}

// readRange reads the records of p in [from, to).
func readRange(ctx context.Context, t *testing.T, r *kafkago.Source, p catchup.Partition, from, to int64) []catchup.Record {
	t.Helper()
	var out []catchup.Record
	for off := from; off < to; {
		f, err := r.Fetch(ctx, p, off, 1<<20)
		if err != nil {
			t.Fatalf("read %s at %d: %v", p, off, err)
		}
		if f.Next <= off {
			t.Fatalf("read %s at %d: nothing although the end is %d", p, off, to)
		}
		for _, rec := range f.Records {
			if rec.Offset < to {
				out = append(out, rec)
			}
		}
		off = f.Next
	}
	return out
}
