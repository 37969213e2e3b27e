package crashtest

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The crash-anywhere proof: SIGKILL the real binary at each moment of a
// run (aim_test.go), again and again, then let it finish, and compare.

func TestCrashFileStore(t *testing.T) {
	crash(t, options{store: "file", provenance: true, kills: crashKills(t)})
}

func TestCrashDynamoDB(t *testing.T) {
	crash(t, options{store: "dynamodb", provenance: true, kills: crashKills(t)})
}

// TestCrashNoProvenance shows what provenance buys: without it nothing is
// lost, but killed runs leave duplicates, at most the records acknowledged
// after each kill's last commit.
func TestCrashNoProvenance(t *testing.T) {
	crash(t, options{store: "file", provenance: false, kills: crashKills(t)})
}

// TestCrashAmbiguousProduce drops the response of every fifth produce
// request after the broker appended it, through some kills and a final run.
func TestCrashAmbiguousProduce(t *testing.T) {
	drop := &dropProduce{every: 5}
	h, ctx := start(t, options{store: "file", provenance: true, kills: crashKills(t) / 5}, kfake.ListenFn(drop.listen))
	h.killLoop(ctx)
	before, produces := drop.dropped.Load(), drop.produces.Load()
	rep := h.finish(ctx)
	final, produces := drop.dropped.Load()-before, drop.produces.Load()-produces
	var reconciled int
	for _, p := range rep.Partitions {
		reconciled += p.Reconciled
	}
	tl := h.check(ctx)
	h.summary(tl, "ambiguous produce: responses dropped", drop.dropped.Load())
	t.Logf("crash: ambiguous produce: the final run had %d of %d produce responses dropped and reported %d re-sends and %d reconciliations",
		final, produces, rep.Resent, reconciled)
	// Idempotent produce re-sends a request of unknown outcome with the same
	// sequence (the broker de-duplicates it); a reconciliation covers what
	// the re-sends do not. Either way each drop must be accounted for.
	if final == 0 || rep.Resent+int64(reconciled) < final {
		t.Errorf("final run: %d produce responses dropped, %d re-sends and %d reconciliations reported; want at least one drop and a re-send or reconciliation for each",
			final, rep.Resent, reconciled)
	}
	h.requireExact(tl)
}

// TestCrashSlowTarget delays every produce request in the target, so that
// a killed child often leaves one in flight that lands after the next child
// has started and read the target: the next child's takeover settle
// (takeover_settle) must wait for it before reconciling. With
// CATCHUP_CRASH_TAKEOVER_SETTLE=0s this test shows the duplicates the
// settle prevents.
func TestCrashSlowTarget(t *testing.T) {
	crash(t, options{store: "file", provenance: true, kills: crashKills(t) / 2, produceDelay: 150 * time.Millisecond})
}

func crash(t *testing.T, o options) {
	var dstOpts []kfake.Opt
	if o.produceDelay > 0 {
		dstOpts = append(dstOpts, kfake.SleepOutOfOrder()) // see TestSleepOutOfOrder
	}
	h, ctx := start(t, o, dstOpts...)
	if o.produceDelay > 0 {
		h.dst.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
			h.dst.KeepControl()
			h.dst.SleepControl(func() { time.Sleep(o.produceDelay) })
			return nil, nil, false // then handled as usual, also for a client gone meanwhile
		})
	}
	h.killLoop(ctx)
	h.finish(ctx)
	tl := h.check(ctx)
	if o.provenance {
		h.summary(tl, "records written after the last commit of a killed run, skipped by reconciliation", h.uncommitted)
		h.requireExact(tl)
		if o.replicated {
			h.requireReplicated()
		}
	} else {
		h.summary(tl, "records written after the last commit of a killed run", h.uncommitted)
		h.requireNoLoss(tl)
		// Each run resumes at its partition's last commit, so what a killed
		// run wrote after that commit is copied again, and nothing else: the
		// duplicates are bounded by what one commit interval writes per
		// kill and partition (docs/guarantees.md), and here counted exactly.
		if tl.duplicated != h.uncommitted {
			t.Errorf("%d duplicates, want exactly the %d records written after the last commit of the killed runs", tl.duplicated, h.uncommitted)
		}
		// Without provenance, kills while writing must leave duplicates:
		// if they did not, the zero of the other tests would prove nothing.
		if h.killedWriting >= 10 && tl.duplicated == 0 {
			t.Errorf("no duplicates after %d kills while the child was writing: the kills do not land between acknowledgement and commit", h.killedWriting)
		}
	}
	// The kills are aimed at each moment (aim_test.go), so each gets about
	// a fifth of them: a moment with fewer than a tenth was not reached.
	if min := h.kills / 10; min > 0 && (h.killedStartup < min || h.killedLeased < min || h.killedWriting < min || h.killedAfterCommit < min) {
		t.Errorf("kills: %d in start-up, %d with leases before writing, %d while writing, %d after a commit: want at least %d of each",
			h.killedStartup, h.killedLeased, h.killedWriting, h.killedAfterCommit, min)
	}
}

// start makes the harness and seeds the backlog.
func start(t *testing.T, o options, dstOpts ...kfake.Opt) (*harness, context.Context) {
	// A kill loop takes about a second per kill at most, even under -race
	// (a kill after a commit waits for the commit, on a slow target too).
	// On the replicated target a child may wait out a follower stall.
	perKill := 2 * time.Second
	if o.replicated {
		perKill = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute+time.Duration(o.kills)*perKill)
	t.Cleanup(cancel)
	h := newHarness(t, o, dstOpts...)
	h.began = time.Now()
	h.seedBacklog(ctx)
	return h, ctx
}

// summary logs the result line, and extra with its value when given.
func (h *harness) summary(tl tally, extra string, value int64) {
	store := h.o.store
	if !h.o.provenance {
		store += " provenance=off"
	}
	h.t.Logf("crash: store=%s kills=%d records=%d lost=%d duplicated=%d out_of_order=%d differing=%d aborted_in_source=%d aborted_copied=%d seed=%d elapsed=%s",
		store, h.kills, tl.records, tl.lost, tl.duplicated, tl.outOfOrder, tl.differing, tl.aborted, tl.foreign, h.seed, time.Since(h.began).Round(time.Millisecond))
	if extra != "" {
		h.t.Logf("crash: %s: %d", extra, value)
	}
	if ev := h.storeEventsSummary(); ev != "" {
		h.t.Logf("crash: %s", ev)
	}
}

func (h *harness) requireNoLoss(tl tally) {
	t := h.t
	t.Helper()
	if tl.records == 0 {
		t.Fatal("the source holds no records")
	}
	if tl.lost != 0 || tl.outOfOrder != 0 || tl.differing != 0 || tl.foreign != 0 {
		t.Errorf("target vs source: %d lost, %d out of order, %d differing, %d not committed source records (aborted); want 0\nlast child's output:\n%s",
			tl.lost, tl.outOfOrder, tl.differing, tl.foreign, h.lastOutput)
	}
}

func (h *harness) requireExact(tl tally) {
	t := h.t
	t.Helper()
	h.requireNoLoss(tl)
	if tl.duplicated != 0 || tl.badOffset != 0 {
		t.Errorf("target vs source: %d duplicated, %d copies naming another source offset; want 0", tl.duplicated, tl.badOffset)
	}
	for _, p := range tl.verifyProbs {
		t.Errorf("verify: %s", p)
	}
}
