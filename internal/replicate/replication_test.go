package replicate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/plan"
)

// deadRunInFlight stages a run that copied and committed source offsets
// [0, 4) of pA, then sent [4, 7) and died holding its lease: the target's
// leader appended the request, but its followers stalled, so the records
// sit above the high watermark (4), invisible to reconciliation.
func deadRunInFlight(t *testing.T, r *rig) {
	t.Helper()
	r.deadRunAt4(t)
	r.dst.mu.Lock()
	r.dst.logs[pA].stalledAt = 4
	r.dst.mu.Unlock()
	if n, _, err := r.dst.Produce(t.Context(), pA, slices.Clone(r.src.logs[pA].recs[4:6]), &catchup.Provenance{Cluster: "src", Partition: pA}); err != nil || n != 2 {
		t.Fatalf("dead run's request: %d, %v", n, err)
	}
	if n, _, err := r.dst.Produce(t.Context(), pA, slices.Clone(r.src.logs[pA].recs[6:7]), &catchup.Provenance{Cluster: "src", Partition: pA}); err != nil || n != 1 {
		t.Fatalf("dead run's request: %d, %v", n, err)
	}
}

// replicateAfter returns an onLogEnd that lets the followers catch up at
// the n-th look at the log end.
func replicateAfter(n int) func(catchup.Partition, *fakeLog) {
	looks := 0
	return func(_ catchup.Partition, l *fakeLog) {
		if looks++; looks == n {
			l.stalledAt = -1
		}
	}
}

// newLeaderAfter returns an onLogEnd that, at the n-th look, elects a new
// leader that had replicated only up to the stalled high watermark: the
// suffix above it is truncated.
func newLeaderAfter(n int) func(catchup.Partition, *fakeLog) {
	looks := 0
	return func(_ catchup.Partition, l *fakeLog) {
		if looks++; looks == n {
			keep := l.stalledAt - l.start
			l.recs = l.recs[:keep]
			l.batches = slices.DeleteFunc(l.batches, func(b int64) bool { return b >= l.stalledAt })
			l.stalledAt, l.epoch = -1, l.epoch+1
		}
	}
}

// TestTakeoverWaitsForReplication: a run that takes over an unreleased lease
// while the target's high watermark is stuck below its leader's log end
// waits for the high watermark before it reconciles, so that the dead run's
// last request, appended but not yet visible, is found and not copied
// again; a new leader that truncated that request is read afresh and the
// records are copied once; a stall longer than ReplicationWait leaves the
// partition in doubt, with its lease kept, its checkpoint where it was and
// nothing sent. Without the wait (ReplicationWait 0) the same stall
// duplicates the dead run's records, which shows the test stages the race.
func TestTakeoverWaitsForReplication(t *testing.T) {
	for _, tc := range []struct {
		name     string
		wait     time.Duration
		onLogEnd func(catchup.Partition, *fakeLog)
		status   Status
		dups     int
		waits    int64
	}{
		{"replicated within the wait", time.Second, replicateAfter(4), StatusDone, 0, 1},
		{"new leader truncated the suffix", time.Second, newLeaderAfter(3), StatusDone, 0, 1},
		{"stall outlasts the wait", 20 * time.Millisecond, nil, StatusInDoubt, 0, 1},
		{"no wait", 0, nil, StatusDone, 3, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(map[catchup.Partition]int{pA: 10})
			deadRunInFlight(t, r)
			r.dst.onLogEnd = tc.onLogEnd
			r.dst.mu.Lock()
			produced := r.dst.produces
			r.dst.mu.Unlock()
			if tc.wait == 0 {
				// The followers catch up once the heir has reconciled.
				r.catchUpOnFirstProduce()
			}
			o := r.options("heir")
			o.ReplicationWait = tc.wait
			res := r.run(t, t.Context(), o).Partitions[0]
			if res.Status != tc.status || res.ReplicationWaits != tc.waits {
				t.Fatalf("heir: status %s, %d replication waits, err %v; want %s, %d", res.Status, res.ReplicationWaits, res.Err, tc.status, tc.waits)
			}
			if tc.status == StatusInDoubt {
				cp := r.checkpoints(t)[pA]
				r.dst.mu.Lock()
				sent := r.dst.produces - produced
				r.dst.mu.Unlock()
				if cp.Owner != "heir" || cp.Next != 4 || sent != 0 || !errors.Is(res.Err, errInDoubt) ||
					!strings.Contains(res.Err.Error(), "replication_wait") {
					t.Fatalf("in doubt: lease owner %q, checkpoint next %d, %d produce requests, err %v; "+
						"want the lease kept by heir, next 4, nothing sent, an error naming replication_wait", cp.Owner, cp.Next, sent, res.Err)
				}
				// The followers come back: the next run finds the dead
				// run's records and copies the rest once.
				r.dst.onLogEnd = replicateAfter(1)
				// (The same owner, restarted: its own lease is no obstacle.)
				if res := r.run(t, t.Context(), r.options("heir")).Partitions[0]; res.Status != StatusDone || res.Skipped != 3 {
					t.Fatalf("restarted run: status %s skipped %d err %v; want done, 3", res.Status, res.Skipped, res.Err)
				}
			}
			r.checkDuplicates(t, 10, tc.dups)
		})
	}
}

// TestTakeoverAfterTheSurveyWaitsForReplication: a run whose survey found
// the lease free, but which acquires it only after another run took it and
// died holding it (a long run reaches its later partitions long after its
// survey), is a takeover all the same: it waits for the target to
// replicate the dead run's last request before it reconciles, and copies
// nothing twice.
func TestTakeoverAfterTheSurveyWaitsForReplication(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 10})
	o := r.options("first")
	o.Policy.MaxRecords = 4
	r.run(t, t.Context(), o) // committed [0, 4) and released
	o = r.options("heir")
	o.OnPlan = func([]plan.Planned) {
		// Between the heir's survey and its acquire, another run takes
		// pA, sends [4, 7), which the target's leader appends but its
		// followers do not replicate yet, and dies holding the lease.
		if _, _, err := r.store.Acquire(t.Context(), "p1", pA, "dies", 20*time.Minute); err != nil {
			t.Fatal(err)
		}
		r.dst.mu.Lock()
		r.dst.logs[pA].stalledAt = 4
		r.dst.mu.Unlock()
		for _, span := range [][2]int{{4, 6}, {6, 7}} {
			recs := slices.Clone(r.src.logs[pA].recs[span[0]:span[1]])
			if _, _, err := r.dst.Produce(t.Context(), pA, recs, &catchup.Provenance{Cluster: "src", Partition: pA}); err != nil {
				t.Fatalf("dead run's request: %v", err)
			}
		}
		r.clock.add(21 * time.Minute)
		r.dst.onLogEnd = replicateAfter(4)
		r.catchUpOnFirstProduce() // or at the heir's first produce, at the latest
	}
	res := r.run(t, t.Context(), o).Partitions[0]
	if res.Status != StatusDone || res.ReplicationWaits != 1 {
		t.Errorf("heir: status %s, %d replication waits, err %v; want done after 1 wait", res.Status, res.ReplicationWaits, res.Err)
	}
	r.checkDuplicates(t, 10, 0)
}

// TestUnknownProduceWaitsForReplication: a produce that times out while the
// target's followers stall was appended by the leader but is not visible;
// the run waits for replication before it reconciles, and does not send the
// records again. When the stall outlasts ReplicationWait, in the copy or in
// the final check of a run stopped with a request in doubt, the partition
// ends in doubt: lease kept, checkpoint at the last acknowledged offset,
// nothing more sent.
func TestUnknownProduceWaitsForReplication(t *testing.T) {
	for _, tc := range []struct {
		name     string
		wait     time.Duration
		onLogEnd func(catchup.Partition, *fakeLog)
		stop     bool // the run is cancelled with the request in doubt
		status   Status
		dups     int
	}{
		{"replicated within the wait", time.Second, replicateAfter(3), false, StatusDone, 0},
		{"stall outlasts the wait", 20 * time.Millisecond, nil, false, StatusInDoubt, 0},
		{"run stopped, stall outlasts the wait", 20 * time.Millisecond, nil, true, StatusInDoubt, 0},
		{"no wait", 0, nil, false, StatusDone, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(map[catchup.Partition]int{pA: 10})
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var fault sync.Once
			faulted := -1 // produce requests before the fault
			r.dst.produceFault = func(p catchup.Partition, first int64) (bool, error) {
				r.dst.mu.Lock()
				defer r.dst.mu.Unlock()
				l := r.dst.logs[p]
				if first < 4 { // requests [0, 2) and [2, 4): see newFakeCluster
					return false, nil
				}
				var err error
				fault.Do(func() {
					faulted = r.dst.produces
					l.stalledAt = int64(len(l.recs)) // the followers stall; the leader appends
					err = fmt.Errorf("REQUEST_TIMED_OUT: %w", catchup.ErrUnknownOutcome)
					if tc.stop {
						cancel()
					}
				})
				if err == nil && tc.wait == 0 {
					l.stalledAt = -1 // the followers are back after the blind reconciliation
				}
				return err != nil, err
			}
			r.dst.onLogEnd = tc.onLogEnd
			o := r.options("run")
			o.ReplicationWait = tc.wait
			res := r.run(t, ctx, o).Partitions[0]
			if res.Status != tc.status {
				t.Fatalf("status %s err %v; want %s", res.Status, res.Err, tc.status)
			}
			if tc.status == StatusInDoubt {
				cp := r.checkpoints(t)[pA]
				r.dst.mu.Lock()
				after := r.dst.produces - faulted
				r.dst.mu.Unlock()
				if cp.Owner != "run" || cp.Next != 4 || res.Next != 4 || after != 1 || res.ReplicationWaits != 1 {
					t.Fatalf("in doubt: lease owner %q, checkpoint next %d, run next %d, %d produce requests from the fault on, "+
						"%d replication waits; want run, 4 (before the request in doubt), 4, 1 (the one in doubt), 1",
						cp.Owner, cp.Next, res.Next, after, res.ReplicationWaits)
				}
				r.dst.onLogEnd = replicateAfter(1)
				r.dst.produceFault = nil
				if res := r.run(t, t.Context(), r.options("run")).Partitions[0]; res.Status != StatusDone {
					t.Fatalf("next run: status %s err %v; want done", res.Status, res.Err)
				}
			}
			r.checkDuplicates(t, 10, tc.dups)
		})
	}
}

// TestCleanRunReadsNoLogEnd pins the cost of the replication wait on the
// happy path: a run with no takeover and no unknown outcome asks the target
// for no log end of its own per partition. The first run, over partitions
// without a checkpoint and an empty target, asks their leaders' log ends
// in one LogEnds call at plan time (see TestLostStoreNothingReplicatedYet);
// a resume asks nothing.
func TestCleanRunReadsNoLogEnd(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 10, pB: 10})
	r.run(t, t.Context(), r.options("run"))
	if r.dst.logEnds != 0 || r.dst.logEndBatches != 1 || r.dst.logEndBatched != 2 {
		t.Errorf("first run: %d log end reads, %d batched reads of %d partitions; want 0, 1 of 2",
			r.dst.logEnds, r.dst.logEndBatches, r.dst.logEndBatched)
	}
	r.run(t, t.Context(), r.options("run")) // a resume
	r.checkExactCopy(t)
	if r.dst.logEnds != 0 || r.dst.logEndBatches != 1 {
		t.Errorf("resume: %d log end reads, %d batched reads in all; want 0, 1", r.dst.logEnds, r.dst.logEndBatches)
	}
}

// checkDuplicates fails unless pA's target holds its n source records and
// dups more, and, without duplicates, an exact copy.
func (r *rig) checkDuplicates(t *testing.T, n, dups int) {
	t.Helper()
	r.dst.mu.Lock()
	got := len(r.dst.logs[pA].recs) - n
	r.dst.mu.Unlock()
	if got != dups {
		t.Errorf("target holds %d records for %d: %d duplicated, want %d", got+n, n, got, dups)
	}
	if dups == 0 {
		r.checkExactCopy(t)
	}
}

// deadRunAt4 stages a run "dies" that copied and committed source offsets
// [0, 4) of pA and died holding its lease, which has since expired.
func (r *rig) deadRunAt4(t *testing.T) {
	t.Helper()
	o := r.options("dies")
	o.Policy.MaxRecords = 4
	r.run(t, t.Context(), o)
	if _, _, err := r.store.Acquire(t.Context(), "p1", pA, "dies", 20*time.Minute); err != nil {
		t.Fatal(err)
	}
	r.clock.add(21 * time.Minute)
}

// catchUpOnFirstProduce lets pA's followers catch up when the run sends its
// first produce request: after it has reconciled, without waiting.
func (r *rig) catchUpOnFirstProduce() {
	r.dst.produceFault = func(catchup.Partition, int64) (bool, error) {
		r.dst.mu.Lock()
		defer r.dst.mu.Unlock()
		r.dst.logs[pA].stalledAt = -1
		return false, nil
	}
}
