package brokers_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// The fault tests copy a topic of 8 partitions, kill one broker with SIGKILL
// when about a quarter is copied, and restart it on the same data directory
// and ports while the copy goes on. The copy is throttled (a sleep after
// each acknowledged produce) so that it lasts a few seconds.
const (
	faultPartitions   = 8
	faultPerPartition = 1500
	faultValueBytes   = 200                   // values of 100 to 299 bytes
	faultSeedBatch    = 4096                  // bytes per record batch in the source: ~15 records
	faultThrottle     = 25 * time.Millisecond // per produce request of a partition
)

// TestTargetKilled: SIGKILL the target broker in the middle of a copy.
func TestTargetKilled(t *testing.T) { testBrokerKilled(t, "target") }

// TestSourceKilled: SIGKILL the source broker in the middle of a copy.
func TestSourceKilled(t *testing.T) { testBrokerKilled(t, "source") }

func testBrokerKilled(t *testing.T, victim string) {
	e := needBrokers(t)
	vc := e.source
	if victim == "target" {
		vc = e.target
	}
	data := needDataDir(t, vc)
	ctx := testContext(t, 4*time.Minute)
	t.Cleanup(func() { ensureRunning(t, data) })

	t0 := time.Now()
	topic := uniqueTopic("kill-" + victim)
	createTopic(ctx, t, e.source.brokers, topic, faultPartitions)
	createTopic(ctx, t, e.target.brokers, topic, faultPartitions)
	seeded := makeRecords(topic, faultPartitions, faultPerPartition, faultValueBytes)
	seed(ctx, t, e.source.brokers, seeded, faultSeedBatch)
	total := int64(faultPartitions * faultPerPartition)
	tSeed := time.Since(t0)

	s := spec{
		store:  t.TempDir(),
		name:   "kill-" + victim,
		source: plaintext("it-source", e.source.brokers),
		target: plaintext("it-target", e.target.brokers),
		topic:  topic,
		// Small fetches and produces and frequent commits: many requests in
		// flight and a checkpoint that moves while the broker dies.
		extra: "    commit_interval: 200ms\n    fetch_bytes: 1024\n    producer:\n      batch_records: 20\n",
	}
	var logs syncBuffer
	defer func() {
		if t.Failed() {
			t.Logf("engine log:\n%s", logs.String())
		}
	}()

	// Run 1, with the broker killed and restarted in its middle.
	var copied atomic.Int64
	pl := open(ctx, t, s, pipeline.Options{Log: captureLog(&logs), OnProgress: func(records, _ int64) {
		copied.Add(records)
		time.Sleep(faultThrottle)
	}})
	type outcome struct {
		rep *replicate.Report
		err error
	}
	done := make(chan outcome, 1)
	t1 := time.Now()
	go func() {
		rep, err := pl.Engine.Run(ctx)
		done <- outcome{rep, err}
	}()
	for copied.Load() < total/4 {
		select {
		case o := <-done:
			pl.Close()
			t.Fatalf("the copy ended (%s, %v) after %d of %d records, before the kill: slow it down", summary(o.rep), o.err, copied.Load(), total)
		case <-time.After(5 * time.Millisecond):
		}
	}
	acked := mustEndOffsets(ctx, t, vc.brokers, topic, faultPartitions) // acknowledged by the victim
	logFrom := fileSize(filepath.Join(data, "server.log"))
	tKill := time.Now()
	runScript(ctx, t, "stop.sh", data, "--kill")
	atKill := copied.Load()
	killTook := time.Since(tKill)
	tRestart := time.Now()
	runScript(ctx, t, "start.sh", "--restart", data)
	restartTook := time.Since(tRestart)
	atRestart := copied.Load()

	// Acknowledged writes survive a process crash: the page cache is the
	// kernel's and outlives the JVM, so nothing acknowledged may be missing
	// although the broker recovers its unflushed segments.
	after := mustEndOffsets(ctx, t, vc.brokers, topic, faultPartitions)
	recovered := countLines(t, filepath.Join(data, "server.log"), logFrom, "Recovering unflushed segment", topic)
	for p := range after {
		if after[p] < acked[p] {
			t.Errorf("%s partition %d ends at %d after the restart, but had acknowledged %d before the kill", victim, p, after[p], acked[p])
		}
	}

	var o outcome
	select {
	case o = <-done:
	case <-ctx.Done():
		t.Fatalf("run 1 did not end: %v", ctx.Err())
	}
	run1 := time.Since(t1)
	if o.err != nil {
		t.Logf("run 1 failed as a whole: %v", o.err)
	}
	cps, err := pl.Store.Load(ctx, s.name)
	if err != nil {
		t.Fatalf("load checkpoints after run 1: %v", err)
	}
	pl.Close()

	// Run 1 left a consistent state: the target holds source offsets
	// 0..k-1 of each partition exactly once and in order, and the
	// checkpoint is at most k (what the target holds beyond it, a later run
	// finds by reconciliation).
	target := readAll(ctx, t, e.target.brokers, topic, faultPartitions)
	held := make([]int64, faultPartitions)
	for p := range int32(faultPartitions) {
		for i, r := range target[p] {
			off, ok := sourceOffset(r, "it-source", topic, p)
			if !ok || off != int64(i) {
				t.Fatalf("after run 1, target %s/%d offset %d holds source offset %d (provenance %v), want %d: "+
					"the target is not a prefix of the source", topic, p, r.Offset, off, ok, i)
			}
		}
		held[p] = int64(len(target[p]))
	}
	nexts := make([]int64, faultPartitions)
	for _, cp := range cps {
		if cp.Topic != topic {
			continue
		}
		nexts[cp.Partition.Partition] = cp.Next
		if cp.Next > held[cp.Partition.Partition] {
			t.Errorf("after run 1, the checkpoint of %s is %d but the target holds only source offsets below %d: a record would be lost",
				cp.Partition, cp.Next, held[cp.Partition.Partition])
		}
		if cp.TargetEnd > int64(len(target[cp.Partition.Partition])) {
			t.Errorf("after run 1, the checkpoint of %s records target end %d beyond the target's %d records",
				cp.Partition, cp.TargetEnd, len(target[cp.Partition.Partition]))
		}
	}
	var failed []string
	if o.rep != nil {
		for _, r := range o.rep.Partitions {
			switch r.Status {
			case replicate.StatusDone, replicate.StatusPartial, replicate.StatusFailed:
			default:
				t.Errorf("run 1: %s ended %s: %v", r.Partition, r.Status, r.Err)
			}
			if r.Err != nil {
				failed = append(failed, r.Partition.String()+": "+r.Err.Error())
			}
		}
	}

	// Run 2 completes the copy; the target is then an exact copy.
	t2 := time.Now()
	pl = open(ctx, t, s, pipeline.Options{Log: captureLog(&logs)})
	rep, err := pl.Engine.Run(ctx)
	pl.Close()
	run2 := time.Since(t2)
	requireDone(t, "run 2", rep, err)
	var skipped, copied2 int64
	for _, r := range rep.Partitions {
		skipped += r.Skipped
		copied2 += r.Copied
	}
	tv := time.Now()
	source := readAll(ctx, t, e.source.brokers, topic, faultPartitions)
	checkExactCopy(t, "source after the restarts", source, seeded, "")
	checkExactCopy(t, "target after run 2", readAll(ctx, t, e.target.brokers, topic, faultPartitions), seeded, "it-source")
	verify := time.Since(tv)

	t.Logf("Kafka %s, %s killed: %d records in %d partitions, seeded in %v", e.version, victim, total, faultPartitions, tSeed.Round(time.Millisecond))
	t.Logf("run 1: killed after %v at %d/%d records copied (SIGKILL took %v), restart took %v (%d records copied meanwhile), run 1 ended %v after its start: %s",
		tKill.Sub(t1).Round(time.Millisecond), atKill, total, killTook.Round(time.Millisecond), restartTook.Round(time.Millisecond),
		atRestart-atKill, run1.Round(time.Millisecond), summary(o.rep))
	t.Logf("the restarted %s recovered %d unflushed segments of the topic and lost nothing: ends %v before the kill, %v after",
		victim, recovered, acked, after)
	t.Logf("run 1 checkpoints %v, target held %v", nexts, held)
	for _, f := range failed {
		t.Logf("run 1 error: %s", f)
	}
	t.Logf("run 2: %v, %d records copied, %d found already in the target by reconciliation; verify %v",
		run2.Round(time.Millisecond), copied2, skipped, verify.Round(time.Millisecond))
}

// fileSize returns the size of the file at path, 0 if it cannot tell.
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// countLines counts the lines of the file at path, from byte offset from on,
// that contain all of words.
func countLines(t *testing.T, path string, from int64, words ...string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Logf("read %s: %v", path, err)
		return 0
	}
	n := 0
	for line := range strings.Lines(string(b[min(from, int64(len(b))):])) {
		all := true
		for _, w := range words {
			all = all && strings.Contains(line, w)
		}
		if all {
			n++
		}
	}
	return n
}

// scripts is the folder of the test/kafka tooling.
func scripts(t *testing.T) string {
	dir, err := filepath.Abs(filepath.Join("..", "..", "test", "kafka"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// runScript runs a test/kafka script and fails the test, with its output,
// if the script fails.
func runScript(ctx context.Context, t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.CommandContext(ctx, filepath.Join(scripts(t), name), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// ensureRunning restarts the broker of data if a failed test left it down,
// so that the tests after it still have their clusters.
func ensureRunning(t *testing.T, data string) {
	out, err := exec.Command(filepath.Join(scripts(t), "start.sh"), "--restart", data).CombinedOutput()
	if err != nil && !strings.Contains(string(out), "already running") {
		t.Errorf("restart the broker of %s after the test: %v\n%s", data, err, out)
	}
}
