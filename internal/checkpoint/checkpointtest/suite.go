package checkpointtest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
)

// TTL is the lease ttl the suite uses. The suite's clock starts at a whole
// second and moves in whole seconds, and every time it passes to a store is a
// whole second in UTC, so a store may keep times with second precision.
const TTL = 15 * time.Minute

// Run runs the conformance suite against the stores newStore makes, one
// subtest per sentence of the Store contract.
//
// Each subtest calls newStore once with its own fake clock; the store must
// read the time only from now. Run closes every store it gets when the
// subtest ends and fails the subtest if Close returns an error; the factory
// may register its own cleanup (a temporary directory, a table) with t,
// which runs after that Close. The pipelines a subtest uses must start empty;
// they are named after it with a random suffix, so a store may share its
// backend (one DynamoDB table) across calls and runs.
//
// Subtests do not run in parallel with each other; some start goroutines
// that call one store concurrently.
func Run(t *testing.T, newStore func(t *testing.T, now func() time.Time) checkpoint.Store) {
	t.Helper()
	suffix := fmt.Sprintf("%08x", rand.Uint32())
	for _, tc := range append(subtests(), beginSubtests()...) {
		t.Run(tc.name, func(t *testing.T) {
			clk := &clock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
			s := newStore(t, clk.Now)
			if s == nil {
				t.Fatal("newStore returned a nil store")
			}
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tc.run(t, &env{t: t, s: s, clk: clk, pipeline: tc.name + "-" + suffix})
		})
	}
}

// subtests lists the subtests in the order of the Store contract.
func subtests() []struct {
	name string
	run  func(t *testing.T, e *env)
} {
	return []struct {
		name string
		run  func(t *testing.T, e *env)
	}{
		{"LoadUnknownPipeline", testLoadUnknownPipeline},
		{"AcquireNew", testAcquireNew},
		{"AcquireLeased", testAcquireLeased},
		{"AcquireAfterExpiry", testAcquireAfterExpiry},
		{"AcquireBySameOwner", testAcquireBySameOwner},
		{"AcquireReturnsState", testAcquireReturnsState},
		{"Renew", testRenew},
		{"RenewExpiredUntaken", testRenewExpiredUntaken},
		{"Release", testRelease},
		{"CommitAndRelease", testCommitAndRelease},
		{"Commit", testCommit},
		{"CommitGaps", testCommitGaps},
		{"CommitGapsBounded", testCommitGapsBounded},
		{"CommitLastError", testCommitLastError},
		{"CommitExpiredUntaken", testCommitExpiredUntaken},
		{"CommitRegress", testCommitRegress},
		{"CommitEqualNext", testCommitEqualNext},
		{"CommitWithoutLease", testCommitWithoutLease},
		{"CommitStart", testCommitStart},
		{"Reset", testReset},
		{"ResetUnknownPartition", testResetUnknownPartition},
		{"ResetLeased", testResetLeased},
		{"ResetAfterExpiry", testResetAfterExpiry},
		{"RecordVerification", testRecordVerification},
		{"RecordVerificationChangesNothingElse", testRecordVerificationChangesNothingElse},
		{"RecordVerificationReplaces", testRecordVerificationReplaces},
		{"RecordVerificationLeased", testRecordVerificationLeased},
		{"RecordVerificationUnknownPartition", testRecordVerificationUnknownPartition},
		{"ExistsOnlyOnceCommitted", testExistsOnlyOnceCommitted},
		{"LoadManyPartitions", testLoadManyPartitions},
		{"LoadPartitions", testLoadPartitions},
		{"LoadPartitionsNone", testLoadPartitionsNone},
		{"PipelinesIndependent", testPipelinesIndependent},
		{"Names", testNames},
		{"LargeOffsets", testLargeOffsets},
		{"LoadReturnsCopies", testLoadReturnsCopies},
		{"ConcurrentAcquire", testConcurrentAcquire},
		{"ConcurrentCommits", testConcurrentCommits},
	}
}

func testLoadUnknownPipeline(t *testing.T, e *env) {
	if got := e.load(e.pipeline); len(got) != 0 {
		t.Errorf("Load(%q) of an unknown pipeline = %v, want nothing", e.pipeline, got)
	}
}

func testAcquireNew(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 3}
	l, got, err := e.s.Acquire(t.Context(), e.pipeline, p, "run-a", TTL)
	if err != nil {
		t.Fatalf("Acquire(%s) of a new partition: %v", p, err)
	}
	wantLease := checkpoint.Lease{Pipeline: e.pipeline, Partition: p, Owner: "run-a", Epoch: 1, Expires: e.clk.Now().Add(TTL)}
	if d := cmp.Diff(wantLease, l); d != "" {
		t.Errorf("Acquire(%s) lease mismatch (-want +got):\n%s", p, d)
	}
	want := checkpoint.Checkpoint{Partition: p, TargetEnd: -1, Owner: "run-a", Epoch: 1, Expires: e.clk.Now().Add(TTL)}
	if d := diff(want, got); d != "" {
		t.Errorf("Acquire(%s) checkpoint mismatch (-want +got):\n%s", p, d)
	}
	e.check(p, want)
}

func testAcquireLeased(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 0}
	la := e.acquire(p, "run-a")
	e.commit(la, checkpoint.Commit{Next: 10, TargetEnd: 10, Records: 10, Bytes: 100})
	for _, d := range []time.Duration{0, TTL - time.Second, time.Second} { // the lease is free after Expires, not at it
		e.clk.Advance(d)
		e.unchanged(func() {
			_, _, err := e.s.Acquire(t.Context(), e.pipeline, p, "run-b", TTL)
			wantErr(t, fmt.Sprintf("Acquire by another owner %s before expiry", la.Expires.Sub(e.clk.Now())), err, checkpoint.ErrLeased)
		})
	}
}

func testAcquireAfterExpiry(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 0}
	la := e.acquire(p, "run-a")
	e.commit(la, checkpoint.Commit{Next: 10, TargetEnd: 7, Records: 10, Bytes: 100})
	e.clk.Advance(TTL + time.Second)

	lb, got, err := e.s.Acquire(t.Context(), e.pipeline, p, "run-b", TTL)
	if err != nil {
		t.Fatalf("Acquire by another owner after expiry: %v", err)
	}
	if lb.Epoch != 2 || lb.Owner != "run-b" {
		t.Errorf("Acquire after expiry = owner %q epoch %d, want run-b epoch 2", lb.Owner, lb.Epoch)
	}
	want := checkpoint.Checkpoint{
		Partition: p, Exists: true, Next: 10, TargetEnd: 7, Records: 10, Bytes: 100, Commits: 1,
		Owner: "run-b", Epoch: 2, Expires: e.clk.Now().Add(TTL),
	}
	if d := diff(want, got); d != "" {
		t.Errorf("Acquire after expiry checkpoint mismatch (-want +got):\n%s", d)
	}
	e.check(p, want)
	e.fenced(la)
	e.commit(lb, checkpoint.Commit{Next: 20, TargetEnd: 17})
}

func testAcquireBySameOwner(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 1}
	l1 := e.acquire(p, "run-a")
	e.clk.Advance(time.Minute)
	l2 := e.acquire(p, "run-a")
	if l2.Epoch != l1.Epoch+1 {
		t.Errorf("re-Acquire by the same owner: epoch %d, want %d", l2.Epoch, l1.Epoch+1)
	}
	if want := e.clk.Now().Add(TTL); !l2.Expires.Equal(want) {
		t.Errorf("re-Acquire by the same owner: expires %s, want %s", l2.Expires, want)
	}
	e.fenced(l1)
	e.commit(l2, checkpoint.Commit{Next: 5, TargetEnd: 5})
}

func testAcquireReturnsState(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 2}
	la := e.acquire(p, "run-a")
	gap := checkpoint.Gap{From: 0, To: 40, At: e.clk.Now()}
	e.commit(la, checkpoint.Commit{Next: 100, TargetEnd: 60, Records: 60, Bytes: 6000, Gap: &gap, Error: "produce: timeout"})
	e.release(la)
	e.clk.Advance(time.Minute)

	_, got, err := e.s.Acquire(t.Context(), e.pipeline, p, "run-b", TTL)
	if err != nil {
		t.Fatalf("Acquire of a released partition: %v", err)
	}
	want := checkpoint.Checkpoint{
		Partition: p, Exists: true, Next: 100, TargetEnd: 60, Records: 60, Bytes: 6000, Commits: 1,
		Owner: "run-b", Epoch: 2, Expires: e.clk.Now().Add(TTL),
		LastError: "produce: timeout", Gaps: []checkpoint.Gap{gap},
	}
	if d := diff(want, got); d != "" {
		t.Errorf("Acquire checkpoint mismatch (-want +got):\n%s", d)
	}
	e.check(p, want)
}

func testRenew(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 0}
	l := e.acquire(p, "run-a")
	e.clk.Advance(10 * time.Minute)
	renewed, err := e.s.Renew(t.Context(), l, TTL)
	if err != nil {
		t.Fatalf("Renew of a live lease: %v", err)
	}
	want := l
	want.Expires = e.clk.Now().Add(TTL)
	if d := cmp.Diff(want, renewed); d != "" {
		t.Errorf("Renew lease mismatch (-want +got):\n%s", d)
	}
	e.check(p, checkpoint.Checkpoint{Partition: p, TargetEnd: -1, Owner: "run-a", Epoch: 1, Expires: want.Expires})

	e.clk.Advance(TTL - 10*time.Minute + time.Second) // past the first expiry, before the renewed one
	e.unchanged(func() {
		_, _, err := e.s.Acquire(t.Context(), e.pipeline, p, "run-b", TTL)
		wantErr(t, "Acquire by another owner of a renewed lease", err, checkpoint.ErrLeased)
	})
	// The epoch is unchanged, so the lease from before the renewal still commits.
	e.commit(l, checkpoint.Commit{Next: 1, TargetEnd: 1})
}

func testRenewExpiredUntaken(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 0}
	l := e.acquire(p, "run-a")
	e.clk.Advance(TTL + time.Hour)
	renewed, err := e.s.Renew(t.Context(), l, TTL)
	if err != nil {
		t.Fatalf("Renew of an expired lease nobody took: %v", err)
	}
	if want := e.clk.Now().Add(TTL); renewed.Epoch != l.Epoch || !renewed.Expires.Equal(want) {
		t.Errorf("Renew = epoch %d expires %s, want epoch %d expires %s", renewed.Epoch, renewed.Expires, l.Epoch, want)
	}
	_, _, err = e.s.Acquire(t.Context(), e.pipeline, p, "run-b", TTL)
	wantErr(t, "Acquire by another owner after Renew", err, checkpoint.ErrLeased)
}

func testRelease(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 0}
	la := e.acquire(p, "run-a")
	e.commit(la, checkpoint.Commit{Next: 5, TargetEnd: 5, Records: 5, Bytes: 50})
	e.release(la)
	e.check(p, checkpoint.Checkpoint{Partition: p, Exists: true, Next: 5, TargetEnd: 5, Records: 5, Bytes: 50, Commits: 1, Epoch: 1})
	e.fenced(la)

	lb := e.acquire(p, "run-b") // at once, no wait for the ttl
	if lb.Epoch != 2 {
		t.Errorf("Acquire after Release: epoch %d, want 2", lb.Epoch)
	}
	e.fenced(la)
}

func testCommitAndRelease(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 0}
	la := e.acquire(p, "run-a")
	e.commit(la, checkpoint.Commit{Next: 5, TargetEnd: 5, Records: 5, Bytes: 50})
	e.clk.Advance(time.Minute)
	e.commit(la, checkpoint.Commit{Next: 8, TargetEnd: 8, Records: 3, Bytes: 30, Error: "stopped", Release: true})
	e.checkUpdated(p, checkpoint.Checkpoint{Partition: p, Exists: true, Next: 8, TargetEnd: 8, Records: 8, Bytes: 80, Commits: 2,
		Epoch: 1, LastError: "stopped", Updated: e.clk.Now()})
	e.fenced(la) // released: neither commit, renew nor release goes through

	lb := e.acquire(p, "run-b") // at once, no wait for the ttl
	if lb.Epoch != 2 {
		t.Errorf("Acquire after a releasing Commit: epoch %d, want 2", lb.Epoch)
	}
	e.commit(lb, checkpoint.Commit{Next: 9, TargetEnd: 9, Records: 1, Bytes: 10, Release: true}) // also without an error to clear
	e.check(p, checkpoint.Checkpoint{Partition: p, Exists: true, Next: 9, TargetEnd: 9, Records: 9, Bytes: 90, Commits: 3, Epoch: 2})
	e.fenced(lb)
}

func testCommit(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 0}
	l := e.acquire(p, "run-a")
	expires := l.Expires
	e.clk.Advance(time.Minute)
	e.commit(l, checkpoint.Commit{Next: 100, TargetEnd: 90, Records: 100, Bytes: 1000})
	want := checkpoint.Checkpoint{
		Partition: p, Exists: true, Next: 100, TargetEnd: 90, Records: 100, Bytes: 1000, Commits: 1,
		Owner: "run-a", Epoch: 1, Expires: expires, Updated: e.clk.Now(),
	}
	e.checkUpdated(p, want)

	e.clk.Advance(time.Minute)
	e.commit(l, checkpoint.Commit{Next: 150, TargetEnd: 140, Records: 50, Bytes: 600})
	want.Next, want.TargetEnd, want.Records, want.Bytes, want.Commits, want.Updated = 150, 140, 150, 1600, 2, e.clk.Now()
	e.checkUpdated(p, want)
}

// testCommitStart: Commit stores c.Start if the checkpoint has none yet and
// never changes it after; Reset and RecordVerification leave it.
func testCommitStart(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 0}
	l := e.acquire(p, "run-a")
	e.commit(l, checkpoint.Commit{Next: 40, TargetEnd: 0})
	if got := e.get(p).Start; got != nil {
		t.Errorf("Start after a commit without one = %d, want none", *got)
	}
	start, later := int64(40), int64(70)
	e.commit(l, checkpoint.Commit{Next: 50, TargetEnd: 10, Records: 10, Start: &start})
	start = 41 // the store keeps its own copy
	e.commit(l, checkpoint.Commit{Next: 70, TargetEnd: 30, Records: 20, Start: &later})
	e.commit(l, checkpoint.Commit{Next: 80, TargetEnd: 40, Records: 10})
	e.release(l)
	e.reset(p, 5)
	e.recordVerification(p, e.verification())
	if got := e.get(p).Start; got == nil || *got != 40 {
		t.Errorf("Start after commits with starts 40 then 70, a reset and a verification = %v, want 40", ptr(got))
	}
	// A partition whose checkpoint holds only a verification takes the
	// first commit's start.
	q := catchup.Partition{Topic: "orders", Partition: 1}
	e.recordVerification(q, e.verification())
	lq := e.acquire(q, "run-a")
	e.commit(lq, checkpoint.Commit{Next: 9, TargetEnd: 9, Records: 9, Start: &later})
	if got := e.get(q).Start; got == nil || *got != 70 {
		t.Errorf("Start of a verified-only partition after a commit with start 70 = %v, want 70", ptr(got))
	}
}

// ptr formats an optional offset.
func ptr(v *int64) string {
	if v == nil {
		return "none"
	}
	return fmt.Sprint(*v)
}

func testCommitGaps(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 0}
	l := e.acquire(p, "run-a")
	g1 := checkpoint.Gap{From: 0, To: 10, At: e.clk.Now()}
	e.commit(l, checkpoint.Commit{Next: 10, TargetEnd: 0, Gap: &g1})
	e.clk.Advance(time.Minute)
	e.commit(l, checkpoint.Commit{Next: 20, TargetEnd: 10, Records: 10})
	if got := e.get(p).Gaps; !cmp.Equal(got, []checkpoint.Gap{g1}) {
		t.Errorf("gaps after a commit without a gap = %v, want %v", got, []checkpoint.Gap{g1})
	}
	e.clk.Advance(time.Minute)
	g2 := checkpoint.Gap{From: 20, To: 35, At: e.clk.Now()}
	e.commit(l, checkpoint.Commit{Next: 35, TargetEnd: 10, Gap: &g2})
	if d := cmp.Diff([]checkpoint.Gap{g1, g2}, e.get(p).Gaps); d != "" {
		t.Errorf("gaps, oldest first, mismatch (-want +got):\n%s", d)
	}
}

// testCommitGapsBounded: a partition that skips a gap on every run (a
// pipeline behind retention, on_gap: skip) keeps its last MaxGaps gaps, so
// that its checkpoint never outgrows what the store holds in one item and
// its commits keep working.
func testCommitGapsBounded(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 0}
	l := e.acquire(p, "run-a")
	var want []checkpoint.Gap
	for i := range int64(checkpoint.MaxGaps + 3) {
		g := checkpoint.Gap{From: i * 10, To: i*10 + 5, At: e.clk.Now()}
		e.commit(l, checkpoint.Commit{Next: g.To, TargetEnd: i, Gap: &g})
		want = append(want, g)
		e.clk.Advance(time.Second)
	}
	want = want[len(want)-checkpoint.MaxGaps:]
	if d := cmp.Diff(want, e.get(p).Gaps); d != "" {
		t.Errorf("gaps after %d gap commits, want the last %d (-want +got):\n%s", checkpoint.MaxGaps+3, checkpoint.MaxGaps, d)
	}
}

func testCommitLastError(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 0}
	l := e.acquire(p, "run-a")
	e.commit(l, checkpoint.Commit{Next: 10, TargetEnd: 10, Error: "produce orders/0: NOT_ENOUGH_REPLICAS"})
	if got := e.get(p).LastError; got != "produce orders/0: NOT_ENOUGH_REPLICAS" {
		t.Errorf("LastError after a commit with an error = %q, want it recorded", got)
	}
	e.commit(l, checkpoint.Commit{Next: 20, TargetEnd: 20})
	if got := e.get(p).LastError; got != "" {
		t.Errorf("LastError after a clean commit = %q, want empty", got)
	}
}

func testCommitExpiredUntaken(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 0}
	l := e.acquire(p, "run-a")
	e.clk.Advance(TTL + time.Hour)
	e.commit(l, checkpoint.Commit{Next: 10, TargetEnd: 10, Records: 10, Bytes: 10})
	e.checkUpdated(p, checkpoint.Checkpoint{
		Partition: p, Exists: true, Next: 10, TargetEnd: 10, Records: 10, Bytes: 10, Commits: 1,
		Owner: "run-a", Epoch: 1, Expires: l.Expires, Updated: e.clk.Now(),
	})
}

func testCommitRegress(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 0}
	l := e.acquire(p, "run-a")
	e.commit(l, checkpoint.Commit{Next: 100, TargetEnd: 100, Records: 100, Bytes: 100})
	e.clk.Advance(time.Minute)
	e.unchanged(func() {
		gap := checkpoint.Gap{From: 1, To: 2, At: e.clk.Now()}
		err := e.s.Commit(t.Context(), l, checkpoint.Commit{Next: 99, TargetEnd: 200, Records: 1, Bytes: 1, Gap: &gap, Error: "x"})
		wantErr(t, "Commit below the stored next offset", err, checkpoint.ErrRegress)
	})
}

func testCommitEqualNext(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 0}
	l := e.acquire(p, "run-a")
	e.commit(l, checkpoint.Commit{Next: 100, TargetEnd: 90, Records: 100, Bytes: 100})
	e.clk.Advance(time.Minute)
	e.commit(l, checkpoint.Commit{Next: 100, TargetEnd: 95})
	e.checkUpdated(p, checkpoint.Checkpoint{
		Partition: p, Exists: true, Next: 100, TargetEnd: 95, Records: 100, Bytes: 100, Commits: 2,
		Owner: "run-a", Epoch: 1, Expires: l.Expires, Updated: e.clk.Now(),
	})
}

func testCommitWithoutLease(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 0}
	forged := checkpoint.Lease{Pipeline: e.pipeline, Partition: p, Owner: "run-a", Epoch: 1, Expires: e.clk.Now().Add(TTL)}
	err := e.s.Commit(t.Context(), forged, checkpoint.Commit{Next: 1, TargetEnd: 1})
	wantErr(t, "Commit on a partition never acquired", err, checkpoint.ErrFenced)
	if got := e.load(e.pipeline); len(got) != 0 {
		t.Errorf("Load after a fenced Commit = %v, want nothing", got)
	}

	// A reset partition is free at epoch 0: a zero owner must not match it.
	e.reset(p, 5)
	e.fenced(checkpoint.Lease{Pipeline: e.pipeline, Partition: p})
}

func testReset(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 0}
	l := e.acquire(p, "run-a")
	gap := checkpoint.Gap{From: 0, To: 3, At: e.clk.Now()}
	e.commit(l, checkpoint.Commit{Next: 100, TargetEnd: 90, Records: 97, Bytes: 970, Gap: &gap, Error: "e"})
	e.release(l)
	want := checkpoint.Checkpoint{
		Partition: p, Exists: true, Next: 40, TargetEnd: -1, Records: 97, Bytes: 970, Commits: 1,
		Epoch: 1, LastError: "e", Gaps: []checkpoint.Gap{gap},
	}

	for _, next := range []int64{40, 500, 0} { // backwards, forwards, to the start
		e.clk.Advance(time.Minute)
		e.reset(p, next)
		want.Next, want.Updated = next, e.clk.Now()
		e.checkUpdated(p, want)
	}
	if lb := e.acquire(p, "run-b"); lb.Epoch != 2 {
		t.Errorf("Acquire after Reset: epoch %d, want 2", lb.Epoch)
	}
}

func testResetUnknownPartition(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 7}
	e.reset(p, 42)
	e.checkUpdated(p, checkpoint.Checkpoint{Partition: p, Exists: true, Next: 42, TargetEnd: -1, Updated: e.clk.Now()})
	_, got, err := e.s.Acquire(t.Context(), e.pipeline, p, "run-a", TTL)
	if err != nil {
		t.Fatalf("Acquire after Reset: %v", err)
	}
	want := checkpoint.Checkpoint{Partition: p, Exists: true, Next: 42, TargetEnd: -1, Owner: "run-a", Epoch: 1, Expires: e.clk.Now().Add(TTL)}
	if d := diff(want, got); d != "" {
		t.Errorf("Acquire after Reset checkpoint mismatch (-want +got):\n%s", d)
	}
}

func testResetLeased(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 0}
	l := e.acquire(p, "run-a")
	e.commit(l, checkpoint.Commit{Next: 100, TargetEnd: 100})
	for _, d := range []time.Duration{0, TTL - time.Second, time.Second} { // the lease is free after Expires, not at it
		e.clk.Advance(d)
		e.unchanged(func() {
			err := e.s.Reset(t.Context(), e.pipeline, p, 0)
			wantErr(t, fmt.Sprintf("Reset %s before the lease expires", l.Expires.Sub(e.clk.Now())), err, checkpoint.ErrLeased)
		})
	}
}

func testResetAfterExpiry(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 0}
	l := e.acquire(p, "run-a")
	e.commit(l, checkpoint.Commit{Next: 100, TargetEnd: 100, Records: 100, Bytes: 100})
	e.clk.Advance(TTL + time.Second)
	e.reset(p, 10)
	e.checkUpdated(p, checkpoint.Checkpoint{
		Partition: p, Exists: true, Next: 10, TargetEnd: -1, Records: 100, Bytes: 100, Commits: 1,
		Epoch: 1, Updated: e.clk.Now(),
	})
	// The expired holder must not undo the reset.
	e.fenced(l)
	if l2 := e.acquire(p, "run-a"); l2.Epoch != 2 {
		t.Errorf("Acquire after Reset of an expired lease: epoch %d, want 2", l2.Epoch)
	}
}

// verification returns a Verification at the clock's time that found every
// kind of problem, so that a store that drops a field fails.
func (e *env) verification() checkpoint.Verification {
	return checkpoint.Verification{
		At: e.clk.Now(), From: 3, To: 120, Source: 117, Matched: 110,
		Missing: 2, Duplicated: 3, Differing: 4, OutOfOrder: 1,
		LoopSkipped: 5, Replaced: 6, Foreign: 7, Outside: 8, Target: 9, Behind: 10,
		Stuck: "produce orders/0 at 120: MESSAGE_TOO_LARGE",
		First: "source offset 57: missing in the target",
	}
}

func testRecordVerification(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 0}
	l := e.acquire(p, "run-a")
	e.commit(l, checkpoint.Commit{Next: 120, TargetEnd: 120, Records: 120, Bytes: 1200})
	e.release(l)
	e.clk.Advance(time.Minute)
	v := e.verification()
	e.recordVerification(p, v)
	if d := cmp.Diff(&v, e.get(p).LastVerification); d != "" {
		t.Errorf("LastVerification after RecordVerification mismatch (-want +got):\n%s", d)
	}
}

func testRecordVerificationChangesNothingElse(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 0}
	q := catchup.Partition{Topic: "orders", Partition: 1}
	l := e.acquire(p, "run-a")
	gap := checkpoint.Gap{From: 0, To: 3, At: e.clk.Now()}
	e.commit(l, checkpoint.Commit{Next: 120, TargetEnd: 117, Records: 117, Bytes: 1170, Gap: &gap, Error: "produce: timeout"})
	e.reset(q, 40)
	before := e.load(e.pipeline)
	e.clk.Advance(time.Minute) // a store that wrote Updated would show it
	v := e.verification()
	e.recordVerification(p, v)
	after := e.load(e.pipeline)
	if d := cmp.Diff(before, after, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(checkpoint.Checkpoint{}, "LastVerification")); d != "" {
		t.Errorf("RecordVerification changed more than the verification (-before +after):\n%s", d)
	}
	if d := cmp.Diff(&v, after[p].LastVerification); d != "" {
		t.Errorf("LastVerification of %s mismatch (-want +got):\n%s", p, d)
	}
	if got := after[q].LastVerification; got != nil {
		t.Errorf("LastVerification of %s, never verified = %+v, want nil", q, got)
	}
}

func testRecordVerificationReplaces(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 0}
	e.reset(p, 120)
	e.recordVerification(p, e.verification())
	e.clk.Advance(time.Hour)
	v2 := checkpoint.Verification{At: e.clk.Now(), From: 0, To: 120, Source: 120, Matched: 120} // clean: no First
	e.recordVerification(p, v2)
	if d := cmp.Diff(&v2, e.get(p).LastVerification); d != "" {
		t.Errorf("LastVerification after a second RecordVerification mismatch (-want +got):\n%s", d)
	}
}

// testRecordVerificationLeased records verifications on a partition another
// run holds: the holder is not fenced and keeps its lease, and the
// verification survives every other method.
func testRecordVerificationLeased(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 0}
	l := e.acquire(p, "run-a")
	e.commit(l, checkpoint.Commit{Next: 100, TargetEnd: 100, Records: 100, Bytes: 1000})
	e.clk.Advance(time.Minute)
	v := e.verification()
	e.recordVerification(p, v)
	want := checkpoint.Checkpoint{
		Partition: p, Exists: true, Next: 100, TargetEnd: 100, Records: 100, Bytes: 1000, Commits: 1,
		Owner: "run-a", Epoch: 1, Expires: l.Expires, LastVerification: &v,
	}
	e.check(p, want)

	e.unchanged(func() {
		_, _, err := e.s.Acquire(t.Context(), e.pipeline, p, "run-b", TTL)
		wantErr(t, "Acquire by another owner after RecordVerification", err, checkpoint.ErrLeased)
	})
	e.commit(l, checkpoint.Commit{Next: 150, TargetEnd: 150, Records: 50, Bytes: 500})
	l, err := e.s.Renew(t.Context(), l, TTL)
	if err != nil {
		t.Fatalf("Renew after RecordVerification by another: %v", err)
	}
	want.Next, want.TargetEnd, want.Records, want.Bytes, want.Commits, want.Expires = 150, 150, 150, 1500, 2, l.Expires
	e.check(p, want)

	e.release(l)
	e.reset(p, 10)
	want.Owner, want.Next, want.TargetEnd = "", 10, -1
	e.check(p, want)
	l2 := e.acquire(p, "run-b")
	want.Owner, want.Epoch, want.Expires = "run-b", 2, l2.Expires
	e.check(p, want)
}

func testRecordVerificationUnknownPartition(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 5}
	v := checkpoint.Verification{At: e.clk.Now(), From: 7, To: 7}
	e.recordVerification(p, v)
	want := checkpoint.Checkpoint{Partition: p, TargetEnd: -1, LastVerification: &v}
	e.checkUpdated(p, want)

	e.clk.Advance(time.Minute)
	l, got, err := e.s.Acquire(t.Context(), e.pipeline, p, "run-a", TTL)
	if err != nil {
		t.Fatalf("Acquire after RecordVerification on a new partition: %v", err)
	}
	want.Owner, want.Epoch, want.Expires = "run-a", 1, e.clk.Now().Add(TTL)
	if d := diff(want, got); d != "" {
		t.Errorf("Acquire after RecordVerification checkpoint mismatch (-want +got):\n%s", d)
	}
	e.commit(l, checkpoint.Commit{Next: 10, TargetEnd: 10, Records: 3, Bytes: 30})
}

// testExistsOnlyOnceCommitted: a partition has Exists false, and TargetEnd
// -1, until a Commit or a Reset succeeds on it, whatever else was done to it
// (leases taken, renewed, released, expired and taken over, a verification
// recorded, a commit refused): the engine reads the target back before
// copying a partition without a checkpoint, and one that showed Exists with
// nothing committed would be copied from its start policy over the copies.
func testExistsOnlyOnceCommitted(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 6}
	l := e.acquire(p, "run-a")
	if _, err := e.s.Renew(t.Context(), l, TTL); err != nil {
		t.Fatalf("Renew: %v", err)
	}
	e.release(l)
	e.recordVerification(p, checkpoint.Verification{At: e.clk.Now(), From: 1, To: 2})
	l = e.acquire(p, "run-b")
	e.clk.Advance(TTL + time.Second)
	taken := e.acquire(p, "run-c")
	if err := e.s.Commit(t.Context(), l, checkpoint.Commit{Next: 5, TargetEnd: 5}); !errors.Is(err, checkpoint.ErrFenced) {
		t.Fatalf("Commit of a lease taken over: %v, want ErrFenced", err)
	}
	cp := e.load(e.pipeline)[p]
	if cp.Exists || cp.TargetEnd != -1 || cp.Next != 0 {
		t.Fatalf("after leases, a verification and a refused commit: Exists %v, Next %d, TargetEnd %d; want false, 0, -1", cp.Exists, cp.Next, cp.TargetEnd)
	}
	e.commit(taken, checkpoint.Commit{Next: 0, TargetEnd: 9})
	if cp := e.load(e.pipeline)[p]; !cp.Exists || cp.TargetEnd != 9 {
		t.Errorf("after a Commit: Exists %v, TargetEnd %d; want true, 9", cp.Exists, cp.TargetEnd)
	}
}

func testLoadManyPartitions(t *testing.T, e *env) {
	other := e.pipeline + "-other"
	if _, _, err := e.s.Acquire(t.Context(), other, catchup.Partition{Topic: "orders", Partition: 0}, "run-x", TTL); err != nil {
		t.Fatalf("Acquire in pipeline %s: %v", other, err)
	}
	want := make(map[catchup.Partition]checkpoint.Checkpoint)
	for i, topic := range []string{"orders", "payments", "audit"} {
		for n := range int32(50) {
			p := catchup.Partition{Topic: topic, Partition: n}
			l := e.acquire(p, "run-a")
			cp := checkpoint.Checkpoint{Partition: p, TargetEnd: -1, Owner: "run-a", Epoch: 1, Expires: l.Expires}
			if topic != "audit" { // audit partitions are only leased
				next := int64(i)*1000 + int64(n)
				e.commit(l, checkpoint.Commit{Next: next, TargetEnd: next, Records: next, Bytes: 2 * next})
				cp.Exists, cp.Next, cp.TargetEnd, cp.Records, cp.Bytes, cp.Commits = true, next, next, next, 2*next, 1
			}
			want[p] = cp
		}
	}
	got := e.load(e.pipeline)
	if d := cmp.Diff(want, got, cmpopts.IgnoreFields(checkpoint.Checkpoint{}, "Updated"), cmpopts.EquateEmpty()); d != "" {
		t.Errorf("Load(%s) of 150 partitions mismatch (-want +got):\n%s", e.pipeline, d)
	}

	// All 150 and 20 that have no checkpoint, in reverse: more than one
	// DynamoDB BatchGetItem holds.
	var ps []catchup.Partition
	for _, topic := range []string{"payments", "orders", "audit"} {
		for n := int32(59); n >= 0; n-- {
			ps = append(ps, catchup.Partition{Topic: topic, Partition: n})
		}
	}
	if d := cmp.Diff(sorted(want), e.loadPartitions(ps), cmpopts.IgnoreFields(checkpoint.Checkpoint{}, "Updated"), cmpopts.EquateEmpty()); d != "" {
		t.Errorf("LoadPartitions(%s) of 180 partitions, 150 with a checkpoint, mismatch (-want +got):\n%s", e.pipeline, d)
	}
}

// testLoadPartitions checks that LoadPartitions returns the checkpoints of
// the partitions asked for that have one, sorted, each once, as Load has
// them, and copies.
func testLoadPartitions(t *testing.T, e *env) {
	other := e.pipeline + "-other"
	p := func(topic string, n int32) catchup.Partition { return catchup.Partition{Topic: topic, Partition: n} }
	if _, _, err := e.s.Acquire(t.Context(), other, p("orders", 5), "run-x", TTL); err != nil {
		t.Fatalf("Acquire in pipeline %s: %v", other, err)
	}
	for n := range int32(8) {
		l := e.acquire(p("orders", n), "run-a")
		e.commit(l, checkpoint.Commit{Next: int64(n) * 10, TargetEnd: int64(n), Gap: &checkpoint.Gap{From: 0, To: 1, At: e.clk.Now()}, Release: n%2 == 0})
	}
	e.reset(p("audit", 2), 7)
	e.recordVerification(p("audit", 3), e.verification())
	all := e.load(e.pipeline)

	ask := []catchup.Partition{p("orders", 6), p("audit", 3), p("orders", 1), p("orders", 6), p("orders", 9), p("billing", 0), p("audit", 2)}
	want := []checkpoint.Checkpoint{all[p("audit", 2)], all[p("audit", 3)], all[p("orders", 1)], all[p("orders", 6)]}
	got := e.loadPartitions(ask)
	if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("LoadPartitions(%s, %v) mismatch with Load (-want +got):\n%s", e.pipeline, ask, d)
	}
	if len(got) == len(want) {
		got[3].Gaps[0].From = 999
		got[1].LastVerification.Missing = 999
		if d := cmp.Diff(want, e.loadPartitions(ask), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("checkpoints changed by writing to loaded ones (-want +got):\n%s", d)
		}
	}
	if got := e.loadPartitionsIn(other, ask); len(got) != 0 {
		t.Errorf("LoadPartitions(%s, %v) = %v, want nothing: %s/5 only has a checkpoint there", other, ask, got, "orders")
	}
}

func testLoadPartitionsNone(t *testing.T, e *env) {
	e.reset(catchup.Partition{Topic: "orders", Partition: 0}, 1)
	for _, ps := range [][]catchup.Partition{nil, {}} {
		if got := e.loadPartitions(ps); len(got) != 0 {
			t.Errorf("LoadPartitions(%s, %#v) = %v, want nothing", e.pipeline, ps, got)
		}
	}
}

// sorted returns the checkpoints of cps sorted by partition.
func sorted(cps map[catchup.Partition]checkpoint.Checkpoint) []checkpoint.Checkpoint {
	out := make([]checkpoint.Checkpoint, 0, len(cps))
	for _, cp := range cps {
		out = append(out, cp)
	}
	slices.SortFunc(out, func(a, b checkpoint.Checkpoint) int { return a.Partition.Compare(b.Partition) })
	return out
}

func testPipelinesIndependent(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 0}
	p1, p2 := e.pipeline+"-east", e.pipeline+"-west"
	l1, _, err := e.s.Acquire(t.Context(), p1, p, "run-a", TTL)
	if err != nil {
		t.Fatalf("Acquire(%s, %s): %v", p1, p, err)
	}
	l2, _, err := e.s.Acquire(t.Context(), p2, p, "run-b", TTL)
	if err != nil {
		t.Fatalf("Acquire(%s, %s) while %s holds it in %s: %v", p2, p, l1.Owner, p1, err)
	}
	if l2.Epoch != 1 {
		t.Errorf("Acquire(%s, %s) epoch %d, want 1", p2, p, l2.Epoch)
	}
	e.commit(l1, checkpoint.Commit{Next: 10, TargetEnd: 10})
	e.commit(l2, checkpoint.Commit{Next: 20, TargetEnd: 20})

	// A lease of one pipeline means nothing in the other.
	wrong := l1
	wrong.Pipeline = p2
	e.fenced(wrong)

	e.release(l1)
	e.resetIn(p1, p, 3)
	for _, c := range []struct {
		pipeline string
		next     int64
	}{{p1, 3}, {p2, 20}} {
		got := e.load(c.pipeline)
		if len(got) != 1 || got[p].Next != c.next {
			t.Errorf("Load(%s) = %v, want only %s at %d", c.pipeline, got, p, c.next)
		}
	}
}

func testNames(t *testing.T, e *env) {
	// Pipelines that are prefixes of each other, and topics that would collide
	// in a key built without a separator ("t"+"11" and "t1"+"1").
	base := "orders.eu-west_1-" + e.pipeline
	pipelines := []string{base, base + ".x", base + "_x", base + "-x"}
	parts := []catchup.Partition{
		{Topic: "t", Partition: 11}, {Topic: "t1", Partition: 1}, {Topic: "t.1", Partition: 0},
		{Topic: "t_1", Partition: 0}, {Topic: "t-1", Partition: 0}, {Topic: "__consumer_offsets", Partition: 49},
		{Topic: "a.b-c_D9", Partition: 7},
	}
	for i, pipeline := range pipelines {
		for j, p := range parts {
			l, _, err := e.s.Acquire(t.Context(), pipeline, p, "run-a", TTL)
			if err != nil {
				t.Fatalf("Acquire(%s, %s): %v", pipeline, p, err)
			}
			e.commit(l, checkpoint.Commit{Next: int64(100*i + j), TargetEnd: 0})
		}
	}
	for i, pipeline := range pipelines {
		got := e.load(pipeline)
		want := make(map[catchup.Partition]int64)
		for j, p := range parts {
			want[p] = int64(100*i + j)
		}
		nexts := make(map[catchup.Partition]int64)
		for p, cp := range got {
			nexts[p] = cp.Next
		}
		if d := cmp.Diff(want, nexts); d != "" {
			t.Errorf("Load(%s) next offsets mismatch (-want +got):\n%s", pipeline, d)
		}
	}
}

func testLargeOffsets(t *testing.T, e *env) {
	const big = math.MaxInt64 - 1
	p := catchup.Partition{Topic: "orders", Partition: math.MaxInt32}
	l := e.acquire(p, "run-a")
	gap := checkpoint.Gap{From: big - 1, To: big, At: e.clk.Now()}
	e.commit(l, checkpoint.Commit{Next: big, TargetEnd: big, Records: big, Bytes: big, Gap: &gap})
	e.check(p, checkpoint.Checkpoint{
		Partition: p, Exists: true, Next: big, TargetEnd: big, Records: big, Bytes: big, Commits: 1,
		Owner: "run-a", Epoch: 1, Expires: l.Expires, Gaps: []checkpoint.Gap{gap},
	})

	q := catchup.Partition{Topic: "orders", Partition: 0}
	e.reset(q, big)
	if got := e.get(q).Next; got != big {
		t.Errorf("Reset(%s, %d) then Load: next %d", q, int64(big), got)
	}

	v := checkpoint.Verification{At: e.clk.Now(), From: 0, To: big, Source: big, Matched: big - 3, Missing: 1, Duplicated: big, Differing: 1, OutOfOrder: 1}
	e.recordVerification(q, v)
	if d := cmp.Diff(&v, e.get(q).LastVerification); d != "" {
		t.Errorf("LastVerification with large counts mismatch (-want +got):\n%s", d)
	}
}

func testLoadReturnsCopies(t *testing.T, e *env) {
	p := catchup.Partition{Topic: "orders", Partition: 0}
	l := e.acquire(p, "run-a")
	gap := checkpoint.Gap{From: 0, To: 10, At: e.clk.Now()}
	e.commit(l, checkpoint.Commit{Next: 10, TargetEnd: 0, Gap: &gap})
	cps, err := e.s.Load(t.Context(), e.pipeline)
	if err != nil || len(cps) != 1 || len(cps[0].Gaps) != 1 {
		t.Fatalf("Load(%s) = %v, %v; want one checkpoint with one gap", e.pipeline, cps, err)
	}
	cps[0].Gaps[0].From = 999
	cps[0].Gaps = append(cps[0].Gaps, checkpoint.Gap{From: 1, To: 2})
	if d := cmp.Diff([]checkpoint.Gap{gap}, e.get(p).Gaps); d != "" {
		t.Errorf("gaps changed by writing to a loaded checkpoint (-want +got):\n%s", d)
	}

	v := e.verification()
	e.recordVerification(p, v)
	loaded := e.get(p)
	loaded.LastVerification.Missing, loaded.LastVerification.First = 999, "changed"
	if d := cmp.Diff(&v, e.get(p).LastVerification); d != "" {
		t.Errorf("verification changed by writing to a loaded checkpoint (-want +got):\n%s", d)
	}
}

func testConcurrentAcquire(t *testing.T, e *env) {
	const runs = 16
	p := catchup.Partition{Topic: "orders", Partition: 0}
	var (
		start  = make(chan struct{})
		wg     sync.WaitGroup
		mu     sync.Mutex
		owners []string
	)
	for i := range runs {
		wg.Go(func() {
			owner := fmt.Sprintf("run-%d", i)
			<-start
			l, _, err := e.s.Acquire(t.Context(), e.pipeline, p, owner, TTL)
			switch {
			case err == nil:
				mu.Lock()
				owners = append(owners, l.Owner)
				mu.Unlock()
			case !errors.Is(err, checkpoint.ErrLeased):
				t.Errorf("Acquire by %s racing %d others = %v, want nil or an error wrapping %v", owner, runs-1, err, checkpoint.ErrLeased)
			}
		})
	}
	close(start)
	wg.Wait()
	if len(owners) != 1 {
		t.Fatalf("%d runs racing for a free partition: %d won (%v), want exactly one", runs, len(owners), owners)
	}
	if cp := e.get(p); cp.Owner != owners[0] || cp.Epoch != 1 {
		t.Errorf("after the race: owner %q epoch %d, want %q epoch 1", cp.Owner, cp.Epoch, owners[0])
	}
}

func testConcurrentCommits(t *testing.T, e *env) {
	const runs, commits = 8, 40
	var wg sync.WaitGroup
	for i := range int32(runs) {
		p := catchup.Partition{Topic: "orders", Partition: i}
		l := e.acquire(p, fmt.Sprintf("run-%d", i))
		wg.Go(func() {
			for n := range int64(commits) {
				if err := e.s.Commit(t.Context(), l, checkpoint.Commit{Next: n + 1, TargetEnd: n + 1, Records: 1, Bytes: 10}); err != nil {
					t.Errorf("Commit(%s, next %d) beside %d other runs: %v", p, n+1, runs-1, err)
					return
				}
			}
		})
	}
	wg.Wait()
	got := e.load(e.pipeline)
	for i := range int32(runs) {
		p := catchup.Partition{Topic: "orders", Partition: i}
		cp := got[p]
		if cp.Next != commits || cp.TargetEnd != commits || cp.Records != commits || cp.Bytes != 10*commits || cp.Commits != commits {
			t.Errorf("%s after %d concurrent commits: next %d target end %d records %d bytes %d commits %d; want %d %d %d %d %d",
				p, commits, cp.Next, cp.TargetEnd, cp.Records, cp.Bytes, cp.Commits, commits, commits, commits, 10*commits, commits)
		}
	}
}

// env is what a subtest works with: the store under test, its clock and a
// pipeline name of its own.
type env struct {
	t        *testing.T
	s        checkpoint.Store
	clk      *clock
	pipeline string
}

func (e *env) acquire(p catchup.Partition, owner string) checkpoint.Lease {
	e.t.Helper()
	l, _, err := e.s.Acquire(e.t.Context(), e.pipeline, p, owner, TTL)
	if err != nil {
		e.t.Fatalf("Acquire(%s, %s, %s): %v", e.pipeline, p, owner, err)
	}
	return l
}

func (e *env) commit(l checkpoint.Lease, c checkpoint.Commit) {
	e.t.Helper()
	if err := e.s.Commit(e.t.Context(), l, c); err != nil {
		e.t.Fatalf("Commit(%s %s epoch %d, next %d): %v", l.Pipeline, l.Partition, l.Epoch, c.Next, err)
	}
}

func (e *env) release(l checkpoint.Lease) {
	e.t.Helper()
	if err := e.s.Release(e.t.Context(), l); err != nil {
		e.t.Fatalf("Release(%s %s epoch %d): %v", l.Pipeline, l.Partition, l.Epoch, err)
	}
}

func (e *env) reset(p catchup.Partition, next int64) {
	e.t.Helper()
	e.resetIn(e.pipeline, p, next)
}

func (e *env) resetIn(pipeline string, p catchup.Partition, next int64) {
	e.t.Helper()
	if err := e.s.Reset(e.t.Context(), pipeline, p, next); err != nil {
		e.t.Fatalf("Reset(%s, %s, %d): %v", pipeline, p, next, err)
	}
}

func (e *env) recordVerification(p catchup.Partition, v checkpoint.Verification) {
	e.t.Helper()
	if err := e.s.RecordVerification(e.t.Context(), e.pipeline, p, v); err != nil {
		e.t.Fatalf("RecordVerification(%s, %s): %v", e.pipeline, p, err)
	}
}

// load returns the checkpoints of pipeline by partition, failing on
// duplicates.
func (e *env) load(pipeline string) map[catchup.Partition]checkpoint.Checkpoint {
	e.t.Helper()
	cps, err := e.s.Load(e.t.Context(), pipeline)
	if err != nil {
		e.t.Fatalf("Load(%s): %v", pipeline, err)
	}
	m := make(map[catchup.Partition]checkpoint.Checkpoint, len(cps))
	for _, cp := range cps {
		if _, dup := m[cp.Partition]; dup {
			e.t.Fatalf("Load(%s) returned %s twice", pipeline, cp.Partition)
		}
		m[cp.Partition] = cp
	}
	return m
}

// loadPartitions returns LoadPartitions of ps in e.pipeline, failing on an
// error.
func (e *env) loadPartitions(ps []catchup.Partition) []checkpoint.Checkpoint {
	e.t.Helper()
	return e.loadPartitionsIn(e.pipeline, ps)
}

func (e *env) loadPartitionsIn(pipeline string, ps []catchup.Partition) []checkpoint.Checkpoint {
	e.t.Helper()
	cps, err := e.s.LoadPartitions(e.t.Context(), pipeline, ps)
	if err != nil {
		e.t.Fatalf("LoadPartitions(%s, %d partitions): %v", pipeline, len(ps), err)
	}
	return cps
}

// get returns the checkpoint of p in e.pipeline, failing if there is none.
func (e *env) get(p catchup.Partition) checkpoint.Checkpoint {
	e.t.Helper()
	cp, ok := e.load(e.pipeline)[p]
	if !ok {
		e.t.Fatalf("Load(%s) has no checkpoint for %s", e.pipeline, p)
	}
	return cp
}

// check compares p's stored checkpoint with want, but not Updated, which the
// suite checks only after Commit and Reset (whether lease calls set it is
// left to the store).
func (e *env) check(p catchup.Partition, want checkpoint.Checkpoint) {
	e.t.Helper()
	if d := diff(want, e.get(p)); d != "" {
		e.t.Errorf("Load(%s) %s mismatch (-want +got):\n%s", e.pipeline, p, d)
	}
}

// checkUpdated compares p's stored checkpoint with want, Updated included.
func (e *env) checkUpdated(p catchup.Partition, want checkpoint.Checkpoint) {
	e.t.Helper()
	if d := cmp.Diff(normalize(want), normalize(e.get(p)), cmpopts.EquateEmpty()); d != "" {
		e.t.Errorf("Load(%s) %s mismatch (-want +got):\n%s", e.pipeline, p, d)
	}
}

// unchanged fails if f changes anything Load returns for e.pipeline,
// Updated included.
func (e *env) unchanged(f func()) {
	e.t.Helper()
	e.unchangedIn(e.pipeline, f)
}

func (e *env) unchangedIn(pipeline string, f func()) {
	e.t.Helper()
	before := e.load(pipeline)
	f()
	if d := cmp.Diff(before, e.load(pipeline), cmpopts.EquateEmpty()); d != "" {
		e.t.Errorf("a refused call changed the store (-before +after):\n%s", d)
	}
}

// fenced checks that Commit, Renew and Release of l are all refused with
// ErrFenced and change nothing.
func (e *env) fenced(l checkpoint.Lease) {
	e.t.Helper()
	e.unchangedIn(l.Pipeline, func() {
		gap := checkpoint.Gap{From: 0, To: 1, At: e.clk.Now()}
		err := e.s.Commit(e.t.Context(), l, checkpoint.Commit{Next: math.MaxInt64 - 1, TargetEnd: 1, Records: 1, Bytes: 1, Gap: &gap, Error: "x"})
		wantErr(e.t, fmt.Sprintf("Commit with lease %+v", l), err, checkpoint.ErrFenced)
		_, err = e.s.Renew(e.t.Context(), l, TTL)
		wantErr(e.t, fmt.Sprintf("Renew of lease %+v", l), err, checkpoint.ErrFenced)
		err = e.s.Release(e.t.Context(), l)
		wantErr(e.t, fmt.Sprintf("Release of lease %+v", l), err, checkpoint.ErrFenced)
	})
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s = %v, want an error wrapping %q", what, err, want)
	}
}

// diff compares checkpoints without Updated (see check).
func diff(want, got checkpoint.Checkpoint) string {
	return cmp.Diff(normalize(want), normalize(got), cmpopts.EquateEmpty(), cmpopts.IgnoreFields(checkpoint.Checkpoint{}, "Updated"))
}

// normalize forgets the expiry of a free partition, which the contract leaves
// unspecified.
func normalize(cp checkpoint.Checkpoint) checkpoint.Checkpoint {
	if cp.Owner == "" {
		cp.Expires = time.Time{}
	}
	return cp
}

// clock is a fake clock that moves only when told to.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

// Now returns the clock's time.
func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
