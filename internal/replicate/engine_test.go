package replicate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/plan"
)

var (
	pA = catchup.Partition{Topic: "a", Partition: 0}
	pB = catchup.Partition{Topic: "a", Partition: 1}
	pC = catchup.Partition{Topic: "b", Partition: 0}
)

// clock is a settable time for lease tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type rig struct {
	src, dst *fakeCluster
	store    checkpoint.Store
	clock    *clock
}

func newRig(sizes map[catchup.Partition]int) *rig {
	empty := map[catchup.Partition]int{}
	for p := range sizes {
		empty[p] = 0
	}
	clk := &clock{t: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
	return &rig{src: newFakeCluster(sizes), dst: newFakeCluster(empty), store: checkpoint.NewMemStore(clk.now), clock: clk}
}

func (r *rig) options(owner string) Options {
	return Options{
		Pipeline: "p1", Cluster: "src", Owner: owner,
		Source: r.src, Target: r.dst, Store: r.store,
		Provenance: true, RetryBackoff: time.Microsecond, Now: r.clock.now,
		TakeoverSettle: time.Millisecond,
		// The configuration's defaults (internal/config), explicit: the
		// engine fills in none.
		CommitInterval: 5 * time.Second, Parallelism: 8, FetchBytes: 1 << 20, LeaseTTL: 20 * time.Minute,
		BatchRecords: 10000, Retries: 10, Margin: 5 * time.Second, ReplicationWait: time.Minute,
	}
}

func (r *rig) run(t *testing.T, ctx context.Context, o Options) *Report {
	t.Helper()
	e, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	rep, err := e.Run(ctx)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return rep
}

// checkExactCopy fails unless every partition of the target holds the
// records of the source partition, once each, in order, with provenance.
func (r *rig) checkExactCopy(t *testing.T) {
	t.Helper()
	r.src.mu.Lock()
	r.dst.mu.Lock()
	defer r.src.mu.Unlock()
	defer r.dst.mu.Unlock()
	for p, sl := range r.src.logs {
		dl := r.dst.logs[p]
		var got []catchup.Record
		for i, rec := range dl.recs {
			off, ok := catchup.SourceOffset(&rec, "src", p)
			if !ok {
				t.Errorf("%s: target record %d has no provenance for %s", p, i, p)
				continue
			}
			rec.Offset = off
			rec.Headers = slices.DeleteFunc(slices.Clone(rec.Headers), func(h catchup.Header) bool { return h.Key == catchup.ProvenanceHeader })
			if len(rec.Headers) == 0 {
				rec.Headers = nil
			}
			got = append(got, rec)
		}
		if diff := cmp.Diff(sl.recs, got); diff != "" {
			t.Errorf("%s: target differs from source (-source +target):\n%s", p, diff)
		}
	}
}

func (r *rig) checkpoints(t *testing.T) map[catchup.Partition]checkpoint.Checkpoint {
	t.Helper()
	cps, err := r.store.Load(t.Context(), "p1")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	out := map[catchup.Partition]checkpoint.Checkpoint{}
	for _, c := range cps {
		out[c.Partition] = c
	}
	return out
}

func TestRunCopiesEveryWindowExactly(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 10, pB: 7, pC: 0})
	r.src.logs[pA].recs[3].Key = nil
	r.src.logs[pA].recs[4].Value = nil
	r.src.logs[pA].recs[5].Value = []byte{}
	r.src.logs[pA].recs[6].Headers = []catchup.Header{{Key: "h", Value: nil}, {Key: "h", Value: []byte("2")}}
	rep := r.run(t, t.Context(), r.options("run-1"))
	r.checkExactCopy(t)
	want := map[catchup.Partition]int64{pA: 10, pB: 7, pC: 0}
	for _, res := range rep.Partitions {
		if res.Status != StatusDone || res.Copied != want[res.Partition] || res.Next != want[res.Partition] || res.Err != nil {
			t.Errorf("%s: status %s copied %d next %d err %v; want done, %d, %d, nil",
				res.Partition, res.Status, res.Copied, res.Next, res.Err, want[res.Partition], want[res.Partition])
		}
	}
	for p, c := range r.checkpoints(t) {
		if c.Next != want[p] || c.Owner != "" && c.Expires.After(r.clock.now()) {
			t.Errorf("%s: checkpoint next %d owner %q expires %v; want next %d and the lease released", p, c.Next, c.Owner, c.Expires, want[p])
		}
	}
	// A second run finds nothing to do and writes nothing.
	before := r.dst.produces
	rep = r.run(t, t.Context(), r.options("run-2"))
	if r.dst.produces != before {
		t.Errorf("second run sent %d produce requests, want none", r.dst.produces-before)
	}
	for _, res := range rep.Partitions {
		if res.Status != StatusDone || res.Copied != 0 {
			t.Errorf("second run %s: status %s copied %d; want done, 0", res.Partition, res.Status, res.Copied)
		}
	}
}

// TestReleasedFetchesAreNotUsedAgain: the engine releases a fetch's
// memory (catchup.Fetched.Release) only after its records were produced.
func TestReleasedFetchesAreNotUsedAgain(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 20, pB: 9})
	r.src.poisonReleased = true
	r.src.logs[pA].recs[3].Key = nil
	r.src.logs[pA].recs[5].Value = []byte{}
	r.run(t, t.Context(), r.options("run-1"))
	r.checkExactCopy(t)
	// 20 and 9 records at 3 per fetch: 7 and 3 fetches copied.
	if r.src.releases != 10 {
		t.Errorf("%d fetches released, want 10", r.src.releases)
	}
}

func TestOnPlanGivesTheWindowsBeforeCopying(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 10, pB: 7})
	o := r.options("run")
	o.Policy.MaxRecords = 5
	var calls int
	var total int64
	o.OnPlan = func(ws []plan.Planned) {
		calls++
		if r.dst.produces != 0 {
			t.Errorf("OnPlan called after %d produce requests; want it before copying", r.dst.produces)
		}
		for _, w := range ws {
			total += w.Len()
		}
	}
	rep := r.run(t, t.Context(), o)
	if copied, _, _ := rep.Totals(); calls != 1 || total != 10 || copied != 10 {
		t.Errorf("OnPlan called %d times with %d offsets, run copied %d; want 1 call, 10 and 10", calls, total, copied)
	}
}

func TestRunRespectsMaxRecordsWindows(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 10})
	o := r.options("run")
	o.Policy.MaxRecords = 4
	// A window max_records cut short is partial, with what it left as lag:
	// only the window that reaches the source end is done.
	for i, want := range []struct {
		next   int64
		lag    int64
		status Status
	}{{4, 6, StatusPartial}, {8, 2, StatusPartial}, {10, 0, StatusDone}, {10, 0, StatusDone}} {
		rep := r.run(t, t.Context(), o)
		if got := rep.Partitions[0]; got.Next != want.next || got.To != want.next || got.Lag() != want.lag || got.Status != want.status {
			t.Errorf("window %d: next %d to %d lag %d %s; want %d, lag %d %s", i, got.Next, got.To, got.Lag(), got.Status,
				want.next, want.lag, want.status)
		}
	}
	r.checkExactCopy(t)
}

func TestAmbiguousProduceIsReconciledNotRetriedBlindly(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 20, pB: 20})
	var n atomic.Int64
	r.dst.produceFault = func(p catchup.Partition, first int64) (bool, error) {
		switch n.Add(1) % 3 {
		case 1:
			return true, fmt.Errorf("REQUEST_TIMED_OUT after append: %w", catchup.ErrUnknownOutcome)
		case 2:
			return false, fmt.Errorf("connection reset before append: %w", catchup.ErrUnknownOutcome)
		}
		return false, nil
	}
	rep := r.run(t, t.Context(), r.options("run"))
	r.checkExactCopy(t)
	for _, res := range rep.Partitions {
		if res.Status != StatusDone || res.Reconciled == 0 || res.Copied != 20 {
			t.Errorf("%s: status %s reconciled %d copied %d err %v; want done, >0, 20", res.Partition, res.Status, res.Reconciled, res.Copied, res.Err)
		}
	}
}

func TestReconciliationWaitsOutARestartingTarget(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 12})
	var produces, down atomic.Int64
	r.dst.produceFault = func(catchup.Partition, int64) (bool, error) {
		if produces.Add(1) == 3 {
			down.Store(4) // the target dies after appending; the next reads are refused
			return true, fmt.Errorf("connection reset: %w", catchup.ErrUnknownOutcome)
		}
		return false, nil
	}
	r.dst.readFault = func() error {
		if down.Load() > 0 {
			down.Add(-1)
			return fmt.Errorf("dial: connection refused: %w", catchup.ErrRetriable)
		}
		return nil
	}
	rep := r.run(t, t.Context(), r.options("run"))
	r.checkExactCopy(t)
	if res := rep.Partitions[0]; res.Status != StatusDone || res.Retries < 4 || res.Reconciled != 1 {
		t.Errorf("status %s retries %d reconciled %d err %v; want done after 4 retried reads and 1 reconciliation",
			res.Status, res.Retries, res.Reconciled, res.Err)
	}
}

func TestAmbiguousProduceWithoutProvenanceMayDuplicateButNeverLoses(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 10})
	var n atomic.Int64
	r.dst.produceFault = func(catchup.Partition, int64) (bool, error) {
		if n.Add(1) == 2 {
			return true, catchup.ErrUnknownOutcome
		}
		return false, nil
	}
	o := r.options("run")
	o.Provenance = false
	r.run(t, t.Context(), o)
	var offsets []byte
	for _, rec := range r.dst.logs[pA].recs {
		offsets = append(offsets, rec.Key[0])
	}
	// The second request is [2, 4) (newFakeCluster).
	if want := []byte{0, 1, 2, 3, 2, 3, 4, 5, 6, 7, 8, 9}; !slices.Equal(offsets, want) {
		t.Errorf("target keys %v, want %v (one duplicated request, nothing lost)", offsets, want)
	}
}

func TestRetriableProduceIsRetried(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 9})
	var n atomic.Int64
	r.dst.produceFault = func(catchup.Partition, int64) (bool, error) {
		if n.Add(1) <= 3 {
			return false, fmt.Errorf("NOT_LEADER_OR_FOLLOWER: %w", catchup.ErrRetriable)
		}
		return false, nil
	}
	rep := r.run(t, t.Context(), r.options("run"))
	r.checkExactCopy(t)
	if res := rep.Partitions[0]; res.Status != StatusDone || res.Retries != 3 {
		t.Errorf("status %s retries %d; want done, 3", res.Status, res.Retries)
	}
}

func TestRetriesCountFailuresInARowNotRequests(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 60})
	r.dst.perBatch = 1
	var n atomic.Int64
	r.dst.produceFault = func(catchup.Partition, int64) (bool, error) {
		if k := n.Add(1); k%20 == 0 || k%20 == 1 && k > 20 {
			return false, fmt.Errorf("NOT_LEADER_OR_FOLLOWER: %w", catchup.ErrRetriable)
		}
		return false, nil
	}
	o := r.options("run")
	o.BatchRecords, o.Retries = 1, 2
	rep := r.run(t, t.Context(), o)
	r.checkExactCopy(t)
	if res := rep.Partitions[0]; res.Status != StatusDone || res.Retries < 4 {
		t.Errorf("status %s retries %d err %v; want done after several separate retries", res.Status, res.Retries, res.Err)
	}
}

func TestProduceGivesUpAfterRetriesInARow(t *testing.T) {
	for _, tc := range []struct {
		name    string
		retries int // Options.Retries
		want    int // retries made
	}{
		{name: "three", retries: 3, want: 3},
		{name: "zero means none", retries: 0, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(map[catchup.Partition]int{pA: 10})
			r.dst.produceFault = func(_ catchup.Partition, first int64) (bool, error) {
				if first >= 4 { // the third request, [4, 6) (newFakeCluster)
					return false, fmt.Errorf("NOT_LEADER_OR_FOLLOWER: %w", catchup.ErrRetriable)
				}
				return false, nil
			}
			o := r.options("run")
			o.Retries = tc.retries
			rep := r.run(t, t.Context(), o)
			if res := rep.Partitions[0]; res.Status != StatusFailed || res.Retries != tc.want || res.Next != 4 ||
				!strings.Contains(fmt.Sprint(res.Err), fmt.Sprintf("giving up after %d retries", tc.want)) {
				t.Errorf("status %s retries %d next %d err %v; want failed at 4 after %d retries",
					res.Status, res.Retries, res.Next, res.Err, tc.want)
			}
		})
	}
}

func TestFatalProduceErrorStopsWithCheckpointAtLastAck(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 10})
	r.dst.produceFault = func(_ catchup.Partition, first int64) (bool, error) {
		if first >= 4 { // the third request, [4, 6) (newFakeCluster)
			return false, errors.New("MESSAGE_TOO_LARGE")
		}
		return false, nil
	}
	rep := r.run(t, t.Context(), r.options("run"))
	res := rep.Partitions[0]
	if res.Status != StatusFailed || res.Next != 4 || res.Err == nil {
		t.Errorf("status %s next %d err %v; want failed at 4 with an error", res.Status, res.Next, res.Err)
	}
	if c := r.checkpoints(t)[pA]; c.Next != 4 || c.LastError == "" {
		t.Errorf("checkpoint next %d last error %q; want 4 and the error recorded", c.Next, c.LastError)
	}
}

// crashingStore stops committing after a number of commits, as a process
// killed between its produce and its commit would.
type crashingStore struct {
	checkpoint.Store
	mu      sync.Mutex
	commits int
}

func (s *crashingStore) Commit(ctx context.Context, l checkpoint.Lease, c checkpoint.Commit) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.commits--; s.commits < 0 {
		return errors.New("crashed")
	}
	return s.Store.Commit(ctx, l, c)
}

func TestCrashAfterProduceBeforeCommitResumesWithoutDuplicates(t *testing.T) {
	for _, commits := range []int{0, 1, 2, 4} {
		t.Run(fmt.Sprintf("crash after %d commits", commits), func(t *testing.T) {
			r := newRig(map[catchup.Partition]int{pA: 25})
			o := r.options("dies")
			o.Store = &crashingStore{Store: r.store, commits: commits}
			o.CommitInterval = time.Nanosecond
			r.clock.add(0)
			r.run(t, t.Context(), o)
			// The dead run's lease is still live: the next run must wait it out.
			r.clock.add(21 * time.Minute)
			rep := r.run(t, t.Context(), r.options("resumes"))
			r.checkExactCopy(t)
			if res := rep.Partitions[0]; res.Status != StatusDone {
				t.Errorf("resume: status %s err %v; want done", res.Status, res.Err)
			}
		})
	}
}

// TestTakeoverWaitsForTheDeadHoldersLastRequest: a run that takes over a
// lease its holder never released waits until the target's end holds
// still, so that a produce request the holder sent just before it died,
// landing only after the heir first read the target, is reconciled rather
// than copied again. Without the wait (TakeoverSettle 0) the same
// sequence duplicates it, which shows that the test stages the race.
func TestTakeoverWaitsForTheDeadHoldersLastRequest(t *testing.T) {
	for _, tc := range []struct {
		name   string
		settle time.Duration
		dups   int
	}{{"settle", 5 * time.Millisecond, 0}, {"no settle", 0, 3}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(map[catchup.Partition]int{pA: 10})
			// The dead run copied and committed offsets [0, 4), then sent
			// [4, 7) and died holding the lease.
			r.deadRunAt4(t)
			var once sync.Once
			r.dst.afterEndOffsets = func() {
				once.Do(func() { // its request lands just after the heir's first look
					late := slices.Clone(r.src.logs[pA].recs[4:7])
					for i := range late {
						pv := catchup.Provenance{Cluster: "src", Partition: pA, Offset: late[i].Offset}
						late[i].Headers = append(slices.Clone(late[i].Headers), catchup.Header{Key: catchup.ProvenanceHeader, Value: catchup.AppendProvenance(nil, pv)})
					}
					if n, _, err := r.dst.Produce(t.Context(), pA, late, nil); err != nil || n != 2 {
						t.Errorf("late produce: %d, %v", n, err) // perBatch 2: a second request for the third
					}
					if n, _, err := r.dst.Produce(t.Context(), pA, late[2:], nil); err != nil || n != 1 {
						t.Errorf("late produce: %d, %v", n, err)
					}
				})
			}
			o := r.options("heir")
			o.TakeoverSettle = tc.settle
			if tc.settle == 0 {
				o.ReplicationWait = 0 // no wait at all: not even one look at the log end
			}
			rep := r.run(t, t.Context(), o)
			res := rep.Partitions[0]
			if res.Status != StatusDone {
				t.Fatalf("heir: status %s err %v", res.Status, res.Err)
			}
			if got := len(r.dst.logs[pA].recs) - 10; got != tc.dups {
				t.Errorf("target holds %d records for 10: %d duplicated, want %d", got+10, got, tc.dups)
			}
			if tc.dups == 0 {
				r.checkExactCopy(t)
				if res.Settled != 3 || res.Skipped != 3 {
					t.Errorf("settled %d, skipped %d; want 3 and 3", res.Settled, res.Skipped)
				}
			}
		})
	}
}

// TestProduceInDoubtAtTheEndIsResolvedBeforeRelease: a run stopped right
// after a produce whose outcome is unknown finds out what landed (waiting
// for the target to hold still) before its last commit, so that the next
// run, which does not wait, copies nothing twice; and when it cannot find
// out, it keeps the lease, so that the next run waits.
func TestProduceInDoubtAtTheEndIsResolvedBeforeRelease(t *testing.T) {
	// The request in doubt: offsets [6, 8) (newFakeCluster), appended on the
	// target only a moment later, at the next look at its end.
	stage := func(r *rig, cancel func()) {
		var fault, land sync.Once
		r.dst.produceFault = func(p catchup.Partition, first int64) (bool, error) {
			var err error
			if first >= 6 {
				fault.Do(func() {
					cancel()
					err = fmt.Errorf("connection reset after the write: %w", catchup.ErrUnknownOutcome)
					r.dst.afterEndOffsets = func() {
						land.Do(func() {
							if _, _, err := r.dst.Produce(t.Context(), pA, slices.Clone(r.src.logs[pA].recs[6:8]),
								&catchup.Provenance{Cluster: "src", Partition: pA}); err != nil {
								t.Errorf("late produce: %v", err)
							}
						})
					}
				})
			}
			return false, err
		}
	}
	t.Run("resolved", func(t *testing.T) {
		r := newRig(map[catchup.Partition]int{pA: 10})
		ctx, cancel := context.WithCancel(t.Context())
		stage(r, cancel)
		res := r.run(t, ctx, r.options("stops")).Partitions[0]
		if res.Status != StatusPartial || res.Next != 8 || res.Settled != 2 {
			t.Errorf("stopped run: status %s next %d settled %d; want partial, 8 (the late records found), 2", res.Status, res.Next, res.Settled)
		}
		if cp := r.checkpoints(t)[pA]; cp.Next != 8 || cp.Owner != "" {
			t.Errorf("checkpoint next %d owner %q; want 8 and the lease released", cp.Next, cp.Owner)
		}
		r.dst.produceFault = nil
		r.run(t, t.Context(), r.options("next"))
		r.checkExactCopy(t)
	})
	t.Run("unresolved", func(t *testing.T) {
		r := newRig(map[catchup.Partition]int{pA: 10})
		ctx, cancel := context.WithCancel(t.Context())
		stage(r, cancel)
		var down atomic.Bool // the target is unreachable once the request is in doubt
		r.dst.readFault = func() error {
			if r.dst.afterEndOffsets != nil && down.Load() {
				return fmt.Errorf("target down: %w", catchup.ErrRetriable)
			}
			return nil
		}
		inner := r.dst.produceFault
		r.dst.produceFault = func(p catchup.Partition, first int64) (bool, error) {
			ok, err := inner(p, first)
			if err != nil {
				down.Store(true)
			}
			return ok, err
		}
		res := r.run(t, ctx, r.options("worker-1")).Partitions[0]
		if cp := r.checkpoints(t)[pA]; cp.Owner != "worker-1" || res.Next != 6 {
			t.Errorf("checkpoint owner %q, run next %d; want the lease kept by worker-1 and next 6", cp.Owner, res.Next)
		}
		// The target is back; the same worker restarts at once, and its
		// takeover waits for the late request.
		down.Store(false)
		r.dst.produceFault = nil
		res = r.run(t, t.Context(), r.options("worker-1")).Partitions[0]
		if res.Status != StatusDone || res.Settled != 2 {
			t.Errorf("restarted run: status %s settled %d; want done, 2", res.Status, res.Settled)
		}
		r.checkExactCopy(t)
	})
}

// TestProduceInDoubtKeepsTheDeadline: finding out what a request in doubt
// did takes at most half of the time left, so that a run whose target never
// holds still still commits before its deadline, and keeps its lease.
func TestProduceInDoubtKeepsTheDeadline(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 10})
	var fault sync.Once
	r.dst.produceFault = func(p catchup.Partition, first int64) (bool, error) {
		var err error
		if first >= 4 {
			fault.Do(func() { err = fmt.Errorf("connection reset after the write: %w", catchup.ErrUnknownOutcome) })
		}
		return false, err
	}
	var other atomic.Int64
	r.dst.afterEndOffsets = func() { // another producer, once the copy started: the end never holds still
		r.dst.mu.Lock()
		defer r.dst.mu.Unlock()
		if r.dst.produces == 0 {
			return
		}
		other.Add(1)
		r.dst.logs[pA].recs = append(r.dst.logs[pA].recs, catchup.Record{Offset: -1, Value: []byte("foreign")})
	}
	o := r.options("worker-1")
	o.TakeoverSettle = 20 * time.Millisecond
	o.Margin = 400 * time.Millisecond
	deadline := time.Now().Add(600 * time.Millisecond)
	ctx, cancel := context.WithDeadline(t.Context(), deadline)
	defer cancel()
	res := r.run(t, ctx, o).Partitions[0]
	if late := time.Since(deadline); late > 0 {
		t.Errorf("the run ended %s after its deadline", late)
	}
	cp := r.checkpoints(t)[pA]
	if cp.Next != res.Next || cp.Next < 4 || cp.Owner != "worker-1" {
		t.Errorf("checkpoint next %d owner %q, run next %d; want the run's next (at least 4) committed and the lease kept", cp.Next, cp.Owner, res.Next)
	}
	if other.Load() < 3 {
		t.Errorf("the target was read %d times: the run did not try to settle", other.Load())
	}
}

func TestResumeWithASmallerWindowThanTheCrashedRun(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 20})
	o := r.options("dies")
	o.Store = &crashingStore{Store: r.store, commits: 1} // only the commit before the first produce
	o.CommitInterval = time.Nanosecond
	r.run(t, t.Context(), o)
	if n := len(r.dst.logs[pA].recs); n == 0 {
		t.Fatal("the crashed run wrote nothing; the test needs it to have written past its checkpoint")
	}
	r.clock.add(21 * time.Minute)
	small := r.options("small")
	small.Policy.MaxRecords = 1 // a window that ends below what the crashed run wrote
	r.run(t, t.Context(), small)
	r.run(t, t.Context(), r.options("rest"))
	r.checkExactCopy(t)
}

func TestRecreatedSourceTopicRefilledPastTheCheckpointFailsClosed(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 10, pB: 10})
	r.run(t, t.Context(), r.options("first"))
	// Topic a is deleted and recreated, and its new log grows past the old
	// checkpoint: the plan's log-end check cannot see it.
	fresh := newFakeCluster(map[catchup.Partition]int{pA: 15})
	for i := range fresh.logs[pA].recs {
		fresh.logs[pA].recs[i].Value = []byte("new topic")
	}
	r.src.logs[pA] = fresh.logs[pA]
	targetBefore := len(r.dst.logs[pA].recs)
	rep := r.run(t, t.Context(), r.options("second"))
	for _, res := range rep.Partitions {
		switch res.Partition {
		case pA:
			if res.Status != StatusFailed || !errors.Is(res.Err, catchup.ErrTopicRecreated) || !strings.Contains(res.Err.Error(), "catchup reset") {
				t.Errorf("%s: status %s err %v; want failed with ErrTopicRecreated and the reset command", res.Partition, res.Status, res.Err)
			}
		default:
			if res.Status != StatusDone || res.Err != nil {
				t.Errorf("%s: status %s err %v; want done (untouched topic)", res.Partition, res.Status, res.Err)
			}
		}
	}
	if n := len(r.dst.logs[pA].recs); n != targetBefore {
		t.Errorf("target a/0 went from %d to %d records; want nothing copied from the recreated topic", targetBefore, n)
	}
	if c := r.checkpoints(t)[pA]; c.Next != 10 {
		t.Errorf("checkpoint of a/0 moved to %d; want it left at 10", c.Next)
	}
}

func TestLeasedPartitionIsSkipped(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 5, pB: 5})
	if _, _, err := r.store.Acquire(t.Context(), "p1", pB, "someone-else", time.Hour); err != nil {
		t.Fatal(err)
	}
	rep := r.run(t, t.Context(), r.options("run"))
	got := map[catchup.Partition]Status{}
	for _, res := range rep.Partitions {
		got[res.Partition] = res.Status
	}
	if want := map[catchup.Partition]Status{pA: StatusDone, pB: StatusLeased}; !cmp.Equal(got, want) {
		t.Errorf("statuses %v, want %v", got, want)
	}
	if n := len(r.dst.logs[pB].recs); n != 0 {
		t.Errorf("leased partition got %d records in the target, want 0", n)
	}
}

func TestLostLeaseStopsProducing(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 30})
	var taken bool
	var mu sync.Mutex
	r.dst.produceFault = func(_ catchup.Partition, first int64) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		if first >= 10 && !taken {
			// The zombie's lease expires and another run takes the partition.
			taken = true
			r.clock.add(21 * time.Minute)
			if _, _, err := r.store.Acquire(context.Background(), "p1", pA, "usurper", 20*time.Minute); err != nil {
				t.Errorf("usurper Acquire: %v", err)
			}
		}
		return false, nil
	}
	rep := r.run(t, t.Context(), r.options("zombie"))
	res := rep.Partitions[0]
	if res.Status != StatusFenced || !errors.Is(res.Err, checkpoint.ErrFenced) {
		t.Errorf("zombie: status %s err %v; want fenced with ErrFenced", res.Status, res.Err)
	}
	if n := len(r.dst.logs[pA].recs); n > 12 {
		t.Errorf("zombie wrote %d records; want at most the 12 of the request in flight when it lost the lease", n)
	}
	// The usurper's lease expires unused; a new run completes the copy exactly.
	r.clock.add(21 * time.Minute)
	r.dst.produceFault = nil
	rep = r.run(t, t.Context(), r.options("heir"))
	if res := rep.Partitions[0]; res.Status != StatusDone {
		t.Errorf("heir: status %s err %v; want done", res.Status, res.Err)
	}
	r.checkExactCopy(t)
}

func TestCancelledRunCommitsWhatWasAcknowledged(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 40, pB: 40})
	ctx, cancel := context.WithCancel(t.Context())
	var n atomic.Int64
	cancelled := make(chan struct{})
	r.dst.produceFault = func(catchup.Partition, int64) (bool, error) {
		switch k := n.Add(1); {
		case k == 9:
			cancel() // while this request is in flight: it completes, and is committed
			close(cancelled)
		case k > 9:
			// Held until the cancellation: a request counted after the 9th
			// must not let its partition copy on while the 9th's goroutine
			// waits to be scheduled (it once copied a whole partition then).
			<-cancelled
		}
		return false, nil
	}
	rep := r.run(t, ctx, r.options("cancelled"))
	var copied int64
	for _, res := range rep.Partitions {
		if res.Status != StatusPartial && res.Status != StatusNotStarted {
			t.Errorf("%s: status %s err %v; want partial", res.Partition, res.Status, res.Err)
		}
		copied += res.Copied
	}
	for p, c := range r.checkpoints(t) {
		if have := int64(len(r.dst.logs[p].recs)); c.Next != have {
			t.Errorf("%s: checkpoint %d, target holds %d records; want the request in flight at the cancellation committed too", p, c.Next, have)
		}
	}
	if copied == 0 || copied >= 80 {
		t.Errorf("cancelled run copied %d records; want some but not all", copied)
	}
	r.dst.produceFault = nil
	r.run(t, t.Context(), r.options("resumes"))
	r.checkExactCopy(t)
}

func TestDeadlineStopsBeforeItWithAConsistentCheckpoint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(map[catchup.Partition]int{pA: 1000, pB: 1000})
		r.store = checkpoint.NewMemStore(time.Now)
		start := time.Now()
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		var mu sync.Mutex
		var last time.Time
		r.dst.produceFault = func(catchup.Partition, int64) (bool, error) {
			mu.Lock()
			last = time.Now()
			mu.Unlock()
			time.Sleep(100 * time.Millisecond) // a slow target: the backlog cannot drain in time
			return false, nil
		}
		o := r.options("lambda")
		o.Now, o.Margin = time.Now, 2*time.Second
		rep := r.run(t, ctx, o)
		if end := time.Since(start); end > 10*time.Second {
			t.Errorf("run ended %v after start, after its 10s deadline", end)
		}
		// Copying stops at the deadline minus the margin, capped to a tenth of the time: 9s.
		if got := last.Sub(start); got > 9*time.Second {
			t.Errorf("last produce sent %v after start; want none after 9s", got)
		}
		cps := r.checkpoints(t)
		for _, res := range rep.Partitions {
			if res.Duration < 8*time.Second {
				t.Errorf("%s: duration %v; want the 9s or so it copied", res.Partition, res.Duration)
			}
			if res.Status != StatusPartial || res.Err != nil || res.Copied == 0 {
				t.Errorf("%s: status %s copied %d err %v; want partial progress without error", res.Partition, res.Status, res.Copied, res.Err)
			}
			if c := cps[res.Partition]; c.Next != res.Next || c.Next > int64(len(r.dst.logs[res.Partition].recs)) {
				t.Errorf("%s: checkpoint %d, report %d, target holds %d; want the checkpoint at the acknowledged end",
					res.Partition, c.Next, res.Next, len(r.dst.logs[res.Partition].recs))
			}
		}
	})
}

func TestGapFailsWithTheExactRangeOrIsSkipped(t *testing.T) {
	for _, skip := range []bool{false, true} {
		t.Run(fmt.Sprintf("skip=%v", skip), func(t *testing.T) {
			r := newRig(map[catchup.Partition]int{pA: 10})
			o := r.options("run")
			o.Policy.MaxRecords = 3
			r.run(t, t.Context(), o) // copies [0,3)
			l := r.src.logs[pA]
			l.start, l.recs = 7, l.recs[7:] // retention deletes [0,7)
			o.Policy.MaxRecords = 0
			o.Policy.SkipGaps = skip
			rep := r.run(t, t.Context(), o)
			res := rep.Partitions[0]
			want := &catchup.GapError{Partition: pA, From: 3, To: 7}
			if diff := cmp.Diff(want, res.Gap); diff != "" {
				t.Errorf("gap (-want +got):\n%s", diff)
			}
			c := r.checkpoints(t)[pA]
			if !skip {
				var ge *catchup.GapError
				if res.Status != StatusFailed || !errors.As(res.Err, &ge) || c.Next != 3 || len(r.dst.logs[pA].recs) != 3 {
					t.Errorf("status %s err %v checkpoint %d target %d; want failed with the gap, checkpoint 3, nothing more copied",
						res.Status, res.Err, c.Next, len(r.dst.logs[pA].recs))
				}
				return
			}
			if res.Status != StatusDone || c.Next != 10 || len(c.Gaps) != 1 || c.Gaps[0].From != 3 || c.Gaps[0].To != 7 {
				t.Errorf("status %s checkpoint %d gaps %+v; want done at 10 with gap [3,7) recorded", res.Status, c.Next, c.Gaps)
			}
			if n := len(r.dst.logs[pA].recs); n != 6 {
				t.Errorf("target holds %d records, want 3 + 3", n)
			}
		})
	}
}

func TestFailedNewPartitionKeepsNoCheckpoint(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 10})
	r.src.logs[pA].start, r.src.logs[pA].recs = 4, r.src.logs[pA].recs[4:]
	o := r.options("run")
	o.Policy.StartOffsets = map[catchup.Partition]int64{pA: 2} // below the log start: a gap
	rep := r.run(t, t.Context(), o)
	if res := rep.Partitions[0]; res.Status != StatusFailed || res.Gap == nil {
		t.Fatalf("status %s gap %v; want failed with a gap", res.Status, res.Gap)
	}
	if c, ok := r.checkpoints(t)[pA]; ok && c.Exists {
		t.Errorf("checkpoint %+v written for a partition that failed before copying; want none", c)
	}
}

func TestEmptyNewPartitionWithLatestStartKeepsItsPlace(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 0})
	o := r.options("run")
	o.Policy.Start = plan.Latest
	o.Provenance = false
	r.run(t, t.Context(), o)
	r.src.logs[pA].recs = append(r.src.logs[pA].recs, catchup.Record{Offset: 0, Key: []byte{0}})
	rep := r.run(t, t.Context(), o)
	if res := rep.Partitions[0]; res.Copied != 1 {
		t.Errorf("second run copied %d records; want the 1 produced after the first run started at latest", res.Copied)
	}
}

func TestTimestampStartPolicy(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 10})
	o := r.options("run")
	o.Policy.Start = plan.Timestamp
	o.StartTime = time.UnixMilli(1_700_000_000_006)
	rep := r.run(t, t.Context(), o)
	if res := rep.Partitions[0]; res.From != 6 || res.Copied != 4 {
		t.Errorf("from %d copied %d; want 6 and 4", res.From, res.Copied)
	}
}

func TestTimeRangeBackfill(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 10, pB: 10})
	o := r.options("backfill")
	o.Policy.Start = plan.Timestamp
	o.StartTime = time.UnixMilli(1_700_000_000_003)
	o.StopTime = time.UnixMilli(1_700_000_000_007)
	rep := r.run(t, t.Context(), o)
	for _, res := range rep.Partitions {
		if res.From != 3 || res.To != 7 || res.Copied != 4 || res.Status != StatusDone {
			t.Errorf("%s: [%d,%d) copied %d status %s; want [3,7) copied 4 done", res.Partition, res.From, res.To, res.Copied, res.Status)
		}
	}
	// Running it again copies nothing more: the range is done.
	rep = r.run(t, t.Context(), o)
	if copied, _, _ := rep.Totals(); copied != 0 {
		t.Errorf("second backfill run copied %d records, want 0", copied)
	}
}

func TestTargetTopicTemplateAndLoopPrevention(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 6})
	mirror := catchup.Partition{Topic: "a.mirror", Partition: 0}
	r.dst.logs = map[catchup.Partition]*fakeLog{mirror: {}}
	// Records 1 and 4 were copied into the source from the target cluster
	// by the pipeline running the other way.
	for _, i := range []int{1, 4} {
		r.src.logs[pA].recs[i].Headers = []catchup.Header{{Key: catchup.ProvenanceHeader,
			Value: catchup.AppendProvenance(nil, catchup.Provenance{Cluster: "dst", Partition: catchup.Partition{Topic: "a.mirror"}, Offset: 9})}}
	}
	o := r.options("run")
	o.TargetTopic = func(t string) string { return t + ".mirror" }
	o.LoopCluster = "dst"
	rep := r.run(t, t.Context(), o)
	res := rep.Partitions[0]
	if res.Status != StatusDone || res.Copied != 4 || res.LoopSkipped != 2 || res.Next != 6 {
		t.Errorf("status %s copied %d loop-skipped %d next %d err %v; want done, 4, 2, 6", res.Status, res.Copied, res.LoopSkipped, res.Next, res.Err)
	}
	var keys []byte
	for _, rec := range r.dst.logs[mirror].recs {
		if off, ok := catchup.SourceOffset(&rec, "src", pA); !ok || off != int64(rec.Key[0]) {
			t.Errorf("target record %v: provenance offset %d, %v; want the source offset", rec.Key, off, ok)
		}
		keys = append(keys, rec.Key[0])
	}
	if want := []byte{0, 2, 3, 5}; !slices.Equal(keys, want) {
		t.Errorf("target a.mirror/0 keys %v, want %v", keys, want)
	}
	// A resume reconciles through the renamed topic and copies nothing twice.
	r.run(t, t.Context(), o)
	if n := len(r.dst.logs[mirror].recs); n != 4 {
		t.Errorf("after a second run the target holds %d records, want 4", n)
	}
}

func TestTwoTopicsOntoOneTargetTopicIsRefused(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 1, pC: 1})
	o := r.options("run")
	o.TargetTopic = func(string) string { return "all" }
	e, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(t.Context()); err == nil || !strings.Contains(err.Error(), "both map to target topic all") {
		t.Errorf("Run err = %v; want a refusal naming the shared target topic", err)
	}
}
