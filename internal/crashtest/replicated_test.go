package crashtest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kafka-catchup/catchup/internal/brokers/replicatedtest"
)

// The replicated-target configuration: the target is the
// 3-broker cluster of test/kafka (RF 3, min.insync.replicas 2,
// replica.lag.time.max.ms 6 s), so the test runs under test/kafka/it.sh, and
// followers are SIGSTOPped while the children run and are killed: a child
// dies with requests the leader appended above a stuck high watermark, and
// the next one takes its leases over while the high watermark is behind the
// leader's log end. `make crashtest` runs it with 100 kills, `make test`
// (it.sh) with defaultReplicatedKills.

const (
	envReplicatedKills        = "CATCHUP_CRASH_REPLICATED_KILLS" // kills of TestCrashReplicated; default defaultReplicatedKills
	defaultReplicatedKills    = 20
	replicatedProducerTimeout = "2s" // the children's producer.timeout: stalls last from below it to above the replica lag
	maxStall                  = 9 * time.Second
)

// TestCrashReplicated is the crash harness on the replicated target, with
// follower stalls from 0.5 s to 9 s (both sides of producer.timeout, 2 s,
// and of replica.lag.time.max.ms, 6 s) injected during the kills.
func TestCrashReplicated(t *testing.T) {
	kills := defaultReplicatedKills
	if s := os.Getenv(envReplicatedKills); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			t.Fatalf("%s=%q: want a number of kills", envReplicatedKills, s)
		}
		kills = v
	}
	crash(t, options{store: "file", provenance: true, kills: kills, replicated: true})
}

// needReplicated returns the replicated target of the environment, or skips
// the test (fails it under CATCHUP_REQUIRE_KAFKA=1, as it.sh sets).
func needReplicated(t *testing.T) replicatedtest.Target {
	t.Helper()
	r, why, ok := replicatedtest.FromEnv()
	if !ok {
		const how = "run it with test/kafka/it.sh, as make test and make crashtest do"
		if os.Getenv("CATCHUP_REQUIRE_KAFKA") == "1" {
			t.Fatalf("CATCHUP_REQUIRE_KAFKA=1 but %s: %s", why, how)
		}
		t.Skipf("needs the replicated target of test/kafka: %s (%s)", why, how)
	}
	return r
}

// stalling reports whether a follower stall is going on.
func (h *harness) stalling() bool {
	if h.stallDone == nil {
		return false
	}
	select {
	case <-h.stallDone:
		return false
	default:
		return true
	}
}

// maybeStall, on the replicated target and when no stall is going on,
// starts one in half of the cases: follower 2 or 3, or (one time in
// four) both, for 0.5 s to maxStall. It runs on while children start and
// are killed.
func (h *harness) maybeStall() {
	if !h.o.replicated || h.stalling() || h.rng.IntN(2) != 0 {
		return
	}
	followers := []int32{2 + int32(h.rng.IntN(2))}
	if h.rng.IntN(4) == 0 {
		followers = []int32{2, 3}
	}
	d := 500*time.Millisecond + time.Duration(h.rng.Int64N(int64(maxStall-500*time.Millisecond)))
	var resumed []<-chan struct{}
	for _, f := range followers {
		resumed = append(resumed, h.rt.Stall(h.t, f, d))
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, c := range resumed {
			<-c
		}
	}()
	h.stallDone = done
	h.stalls++
	h.t.Logf("stall %d (after %d kills): followers %v for %v", h.stalls, h.kills, followers, d.Round(time.Millisecond))
}

// endStalls waits for the last stall to end and the replicas to be in sync
// again, so that the final run and the comparison see the whole target.
func (h *harness) endStalls(ctx context.Context) {
	if !h.o.replicated {
		return
	}
	if h.stallDone != nil {
		<-h.stallDone
	}
	for _, tp := range crashTopics {
		h.rt.WaitInSync(ctx, h.t, tp.name, tp.partitions, 1)
	}
	h.t.Logf("follower stalls: %d, kills during a stall: %d, runs that failed by themselves (exit 1) during stalls: %d",
		h.stalls, h.killedStalled, h.selfFails)
}

// selfFailed reports whether a child that exited by itself with err did so
// acceptably: on the replicated target a run may fail (exit 1, to be run
// again) while both followers are stalled past the replica lag
// (NOT_ENOUGH_REPLICAS) or a wait for replication runs out; the next run
// resumes. Any other exit fails the test.
func (h *harness) selfFailed(err error, c *child) bool {
	var ee *exec.ExitError
	if !h.o.replicated || !errors.As(err, &ee) || ee.ExitCode() != 1 {
		return false
	}
	h.selfFails++
	lines := strings.Split(strings.TrimSpace(c.errOut.String()), "\n")
	h.t.Logf("a run failed by itself (exit 1, stall going on: %t); its last log line: %s", h.stalling(), lines[len(lines)-1])
	return true
}

// requireReplicated fails the test unless the target read under
// read_committed is exact too, and kills landed during stalls.
func (h *harness) requireReplicated() {
	t := h.t
	t.Helper()
	c := h.committed
	t.Logf("crash: replicated read_committed: records=%d lost=%d duplicated=%d out_of_order=%d", c.records, c.lost, c.duplicated, c.outOfOrder)
	if c.lost != 0 || c.duplicated != 0 || c.outOfOrder != 0 || c.differing != 0 || c.foreign != 0 {
		t.Errorf("target under read_committed vs source: %d lost, %d duplicated, %d out of order, %d differing, %d foreign; want 0",
			c.lost, c.duplicated, c.outOfOrder, c.differing, c.foreign)
	}
	if h.kills >= 10 && h.killedStalled < h.kills/10 {
		t.Errorf("only %d of %d kills landed during a follower stall: want at least %d", h.killedStalled, h.kills, h.kills/10)
	}
}

// waitTargetTopics waits until the target answers ListOffsets for every
// partition: the brokers learn a new topic from the controller one by one,
// so the broker the harness's client asks may not know it yet.
func (h *harness) waitTargetTopics(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for {
		_, err := h.dstAdmin.EndOffsets(ctx, allPartitions())
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the replicated target does not list the offsets of the crash topics: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
