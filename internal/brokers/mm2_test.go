package brokers_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-catchup/catchup/internal/testbin"
)

// needMirrorMaker2 returns java and the class path folder of MirrorMaker 2
// that test/kafka/it.sh fetched (bench/fetch-mirror.sh), or skips.
func needMirrorMaker2(t *testing.T) (java, libs string) {
	t.Helper()
	java, libs = os.Getenv("CATCHUP_IT_JAVA"), os.Getenv("CATCHUP_IT_MM2_LIBS")
	if java == "" || libs == "" {
		missing(t, "CATCHUP_IT_JAVA or CATCHUP_IT_MM2_LIBS is not set (test/kafka/it.sh fetches MirrorMaker 2 with bench/fetch-mirror.sh)")
	}
	return java, libs
}

// TestMirrorMaker2Handover: MirrorMaker 2 (dedicated mode, the real
// connect-mirror jars) copies the first part of a topic; a take-over while
// it runs idle (nothing left to copy, its offsets still) is refused on its
// heartbeats; it is stopped;
// more records arrive; `catchup mirrormaker2 --take-over` continues from
// MirrorMaker 2's source offsets. The target, read by the test, holds every
// source record exactly once. A second take-over, after catchup copied,
// is refused by partition: MirrorMaker 2's positions no longer match the
// target's last records.
func TestMirrorMaker2Handover(t *testing.T) {
	e := needBrokers(t)
	java, libs := needMirrorMaker2(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	const parts, perPart = 3, 200
	topic := uniqueTopic("mm2-handover")
	createTopic(ctx, t, e.source.brokers, topic, parts)
	first := makeRecords(topic, parts, perPart, 64)
	seed(ctx, t, e.source.brokers, first, 4096)

	// Aliases of this run only: MirrorMaker 2 keeps its offsets in
	// mm2-offsets.SRC.internal on the target, which outlives the test.
	id := fmt.Sprintf("%04x", rand.N(1<<16))
	src, dst := "src"+id, "dst"+id
	dir := t.TempDir()
	props := filepath.Join(dir, "mm2.properties")
	if err := os.WriteFile(props, fmt.Appendf(nil, `clusters = %[1]s, %[2]s
%[1]s.bootstrap.servers = %[3]s
%[2]s.bootstrap.servers = %[4]s
%[1]s->%[2]s.enabled = true
%[2]s->%[1]s.enabled = false
%[1]s->%[2]s.topics = %[5]s
replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy
tasks.max = 3
emit.checkpoints.enabled = false
emit.offset-syncs.enabled = false
sync.group.offsets.enabled = false
sync.topic.configs.enabled = false
sync.topic.acls.enabled = false
replication.factor = 1
offset.storage.replication.factor = 1
status.storage.replication.factor = 1
config.storage.replication.factor = 1
heartbeats.topic.replication.factor = 1
offset.flush.interval.ms = 1000
%[2]s.offset.flush.interval.ms = 1000
%[1]s.consumer.auto.offset.reset = earliest
%[2]s.producer.acks = all
`, src, dst, e.source.brokers, e.target.brokers, topic), 0o600); err != nil {
		t.Fatal(err)
	}

	// MirrorMaker 2 copies the first part, then stops as an operator stops
	// it (SIGTERM: its tasks commit their offsets).
	mmLog := filepath.Join(dir, "mm2.log")
	logFile, err := os.Create(mmLog)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	mm := exec.Command(java, "-Xmx512m", "-cp", filepath.Join(libs, "*"), "org.apache.kafka.connect.mirror.MirrorMaker", props)
	mm.Stdout, mm.Stderr = logFile, logFile
	t0 := time.Now()
	if err := mm.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- mm.Wait() }()
	stopped := false
	defer func() {
		if !stopped {
			_ = mm.Process.Kill()
			if err := <-exited; err != nil {
				t.Logf("MirrorMaker 2 killed: %v", err)
			}
		}
	}()
	cl := newClient(t, e.target.brokers)
	for {
		ends, err := endOffsets(ctx, cl, topic, parts)
		total := int64(0)
		for _, n := range ends {
			total += n
		}
		if err == nil && total == parts*perPart {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("MirrorMaker 2 did not copy %d records into %s (ends %v, %v); its log:\n%s", parts*perPart, topic, ends, err, logTail(mmLog))
		case err := <-exited:
			stopped = true
			t.Fatalf("MirrorMaker 2 exited: %v; its log:\n%s", err, logTail(mmLog))
		case <-time.After(200 * time.Millisecond):
		}
	}
	t.Logf("MirrorMaker 2 copied %d records in %v", parts*perPart, time.Since(t0).Round(time.Millisecond))

	// Running and idle: its offsets and the target stand still (once its
	// last offset flush is written: the worker of the flow takes
	// offset.flush.interval.ms from the target cluster's keys, 60 s by
	// default), only its heartbeats tell it runs.
	bin := testbin.BuildT(t, "./cmd/catchup")
	run := func(args ...string) (string, string) {
		cmd := exec.CommandContext(ctx, bin, append([]string{"mirrormaker2", props, "--store", "file://" + filepath.Join(dir, "store")}, args...)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), exitCode(err)
	}
	// Until its offsets are flushed, the partitions are refused for that
	// too: idle is when the heartbeats are the only reason left.
	const refused, beating = "mm2takeover: refused: ", "mm2takeover: refused: MirrorMaker 2 is running: it wrote "
	idle, last := false, ""
	for attempt := 1; attempt <= 15 && !idle; attempt++ {
		out, code := run("--take-over", "--take-over-settle", "1s", "--print-config")
		if strings.Count(out, refused) > 1 {
			last = out
			continue // its offsets not flushed yet, or moving
		}
		idle = true
		if code != "2" || !strings.Contains(out, beating) || !strings.Contains(out, "heartbeats of "+src+"->"+dst+" to heartbeats") {
			t.Fatalf("a take-over while MirrorMaker 2 runs idle (attempt %d): exit %s, want 2 saying %q about %s->%s:\n%s",
				attempt, code, beating, src, dst, out)
		}
		_, why, _ := strings.Cut(out, beating)
		t.Logf("a take-over while MirrorMaker 2 runs idle is refused (attempt %d): %s%s", attempt, beating, why)
	}
	if !idle {
		t.Fatalf("MirrorMaker 2's offsets were not all recorded, or moved, during 15 take-overs after it copied everything; "+
			"the last said:\n%s\nits log:\n%s", last, logTail(mmLog))
	}

	if err := mm.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		stopped = true
		t.Logf("MirrorMaker 2 stopped: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatalf("MirrorMaker 2 did not stop within 60s of SIGTERM; its log:\n%s", logTail(mmLog))
	}

	// More records arrive after MirrorMaker 2 stopped; catchup takes over.
	second := makeRecords(topic, parts, perPart, 64)
	for _, rs := range second {
		for _, r := range rs {
			r.Timestamp = r.Timestamp.Add(time.Minute) // distinct from the first part's
		}
	}
	seed(ctx, t, e.source.brokers, second, 4096)
	out, code := run("--take-over", "--take-over-settle", "1s")
	if want := "no heartbeat of " + src + "->" + dst + " in heartbeats during the 2s watched: MirrorMaker 2 has stopped"; code != "0" || !strings.Contains(out, want) {
		t.Fatalf("catchup mirrormaker2 --take-over: exit %s, want 0 saying %q:\n%s", code, want, out)
	}

	// The test's own count: every source record once in the target.
	want := map[string]int{}
	for _, part := range [][][]*kgo.Record{first, second} {
		for p, rs := range part {
			for _, r := range rs {
				want[fmt.Sprintf("%d@%d", p, r.Timestamp.UnixMilli())]++
			}
		}
	}
	got := map[string]int{}
	for p, rs := range readAll(ctx, t, e.target.brokers, topic, parts) {
		for _, r := range rs {
			got[fmt.Sprintf("%d@%d", p, r.Timestamp.UnixMilli())]++
		}
	}
	lost, dup := 0, 0
	for k := range want {
		if got[k] == 0 {
			lost++
		}
	}
	for _, n := range got {
		dup += max(n-1, 0)
	}
	t.Logf("handover: %d source records, %d in the target, %d lost, %d duplicated", len(want), len(got)+dup, lost, dup)
	if lost != 0 || dup != 0 {
		t.Fatalf("handover from MirrorMaker 2: %d lost, %d duplicated of %d records; catchup said:\n%s", lost, dup, len(want), out)
	}

	// Taking over again now would copy the second part twice: refused, by partition.
	out, code = run("--take-over", "--take-over-settle", "1s", "--print-config")
	if code != "2" || !strings.Contains(out, topic+"/0: the last record of "+topic+"/0") {
		t.Fatalf("a second take-over: exit %s, want 2 naming %s/0:\n%s", code, topic, out)
	}
}

// logTail returns the last lines of the file at path.
func logTail(path string) string {
	b, _ := os.ReadFile(path)
	return tail(string(b), 40)
}
