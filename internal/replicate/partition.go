package replicate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/plan"
)

// partitionCopy is the state of one partition's copy within one run. It is
// used by one goroutine, except fetchLoop which only reads the fields set
// before it starts.
type partitionCopy struct {
	e     *Engine
	p     catchup.Partition
	lease checkpoint.Lease
	res   *Result
	// lasting survives the cancellation of the copy but not the caller's
	// deadline: store calls and the produce request in flight run under it,
	// so that what was sent is acknowledged and committed (a produce cut
	// off mid-flight could land after the next run's reconciliation).
	lasting context.Context
	// state is where the copy stands (state.go; doc.go draws the machine).
	state copyState

	next      int64 // offset after the last acknowledged record (or covered marker)
	stop      int64 // a bounded job's stop offset; math.MaxInt64 for a pipeline
	targetEnd int64 // target end offset after the last acknowledged produce; -1 unknown
	// start is the offset where copying of the partition begins, for the
	// next commit to store (checkpoint.Commit.Start); nil once stored or
	// when the checkpoint knows its start or cannot know it.
	start *int64

	// What the next commit adds.
	pendRecords, pendBytes int64
	pendGap                *checkpoint.Gap
	committedNext          int64
	committedTargetEnd     int64
	// unvouched: the store holds no checkpoint of the partition and the
	// target has not yet said where the copy stands (adopt,
	// refuseUnaccounted): until it has, no commit may store the start
	// policy as the position, or a run stopped meanwhile would hand the
	// next run a checkpoint that reads nothing back.
	unvouched  bool
	lastCommit time.Time

	// surveyedEnd is the target end offset the run read for this partition
	// at plan time, with the others (Engine.targetEnds), for the first
	// targetEndOffset to use instead of a request of its own; -1 none. It
	// is kept only when the lease was free at the survey and nobody took it
	// in between (the acquire moved the epoch by exactly one): then nothing
	// of catchup's wrote to the target partition since, because writing
	// needs the lease. A takeover, or a lease another run took and released
	// since, reads the end again.
	surveyedEnd int64
	// surveyedLogEnd is, like surveyedEnd and under the same condition,
	// the leader's log end the run read at plan time for a partition
	// without a checkpoint whose surveyed end was 0 (Engine.targetEnds);
	// -1 none.
	surveyedLogEnd int64
	// presettled: the run settled the target partition before the copies
	// began (Engine.presettle), under the same condition as surveyedEnd;
	// adopt's first attempt skips its settle.
	presettled bool
	// held and bridged are the records held back from the last batch and
	// those of the request that bridges two batches (copyloop.go), reused.
	held    heldTail
	bridged []catchup.Record
	// stampLen is stampFixed's length once computed; 0 before.
	stampLen int
}

// surveyed is what the run read of a target partition at plan time: its
// end offset and its leader's log end, -1 where not read, and whether it
// settled it (Engine.presettle).
type surveyed struct {
	end, logEnd int64
	settled     bool
}

// copyPartition leases m's partition, copies its window and commits. loaded
// is its checkpoint as the run's survey read it, before the lease was taken;
// sv what the run read of its target partition at plan time.
func (e *Engine) copyPartition(ctx, copyCtx context.Context, m catchup.Offsets, pol plan.Policy, loaded checkpoint.Checkpoint, sv surveyed) (res Result) {
	start := e.o.Now()
	res.Partition = m.Partition
	defer func() { res.Duration = e.o.Now().Sub(start) }()
	lasting, cancel := e.lastingContext(ctx)
	defer cancel()
	storeCtx, cancelAcquire := context.WithTimeout(lasting, storeCallTimeout)
	defer cancelAcquire()

	lease, cp, err := e.o.Store.Acquire(storeCtx, e.o.Pipeline, m.Partition, e.o.Owner, e.o.LeaseTTL)
	switch {
	case errors.Is(err, checkpoint.ErrLeased):
		return e.leased(m, pol, loaded, err)
	case err != nil:
		res.Status, res.Err = StatusFailed, fmt.Errorf("lease %s: %w", m.Partition, err)
		return res
	}
	pc := &partitionCopy{
		e: e, p: m.Partition, lease: lease, res: &res, lasting: lasting,
		next: cp.Next, targetEnd: cp.TargetEnd,
		committedNext: cp.Next, committedTargetEnd: cp.TargetEnd,
		lastCommit: e.o.Now(), surveyedEnd: -1, surveyedLogEnd: -1,
	}
	// A lease still recorded when the survey read the store was never
	// released: its holder died (or is this owner, restarted) and may have
	// left a produce request in flight. An epoch that moved by more than
	// our acquire means another run held the lease after the survey, and
	// the acquire cannot say whether it released it. Only a clean acquire
	// may use what the survey read of the target.
	clean := loaded.Owner == "" && cp.Epoch == loaded.Epoch+1
	if !clean && e.o.Provenance {
		pc.state = stateTakenOver
	}
	if clean {
		pc.surveyedEnd, pc.surveyedLogEnd, pc.presettled = sv.end, sv.logEnd, sv.settled
	}
	if !cp.Exists {
		// Commit the start even of an empty window: with start: latest, the
		// next run must begin here, not at its own latest.
		pc.committedNext = -1
	}
	defer func() {
		switch {
		case pc.state == stateReleased:
			// by the last commit
		case pc.state.inDoubt():
			// Kept, so that the next run waits for the target to hold
			// still before it reconciles (see settle).
			e.o.Log.WarnContext(ctx, "lease kept: a produce request may still land in the target", "pipeline", e.o.Pipeline,
				"topic", m.Topic, "partition", m.Partition.Partition, "next", pc.next)
		default:
			pc.release(ctx)
		}
	}()

	err = pc.run(copyCtx, m, cp, pol)
	if pc.state.inDoubt() && !errors.Is(err, errInDoubt) {
		// (Not after the replication wait ran out already: the next run
		// waits again.)
		if derr := pc.resolveDoubt(lasting); errors.Is(derr, errInDoubt) {
			err = errors.Join(err, derr)
		}
	}
	res.Next = pc.next
	switch {
	case errors.Is(err, errInDoubt):
		res.Status, res.Err = StatusInDoubt, err
		e.o.Log.ErrorContext(ctx, "partition in doubt: lease kept, nothing re-sent", "pipeline", e.o.Pipeline,
			"topic", m.Topic, "partition", m.Partition.Partition, "next", pc.next, "error", err)
	case errors.Is(err, checkpoint.ErrFenced):
		res.Status, res.Err = StatusFenced, err
		if pc.committedNext >= 0 {
			// What this run last committed, as when its last commit is
			// fenced (below): the store refused everything after it.
			res.Next = pc.committedNext
		}
	case err != nil && copyCtx.Err() != nil && errors.Is(err, copyCtx.Err()):
		res.Status = StatusPartial // stopped by the deadline or a cancellation
	case err != nil:
		res.Status, res.Err = StatusFailed, err
	case pc.next >= max(res.To, res.End):
		res.Status = StatusDone
	default:
		res.Status = StatusPartial
	}
	if res.Status != StatusFenced {
		// The last commit releases the lease in the same write, unless
		// the run is in doubt: then the lease stays.
		last := pc.commitAndRelease
		if pc.state.inDoubt() {
			last = pc.keepInDoubt
		}
		if cerr := last(res.Err); cerr != nil {
			if errors.Is(cerr, checkpoint.ErrFenced) {
				res.Status = StatusFenced
			} else if res.Status != StatusFailed {
				res.Status = StatusFailed
			}
			res.Err = errors.Join(res.Err, cerr)
			res.Next = pc.committedNext
		}
	}
	level := slog.LevelInfo
	if res.From == res.To && res.Copied == 0 && res.Status == StatusDone {
		level = slog.LevelDebug // an empty window: at 10,000 partitions, thousands of lines saying nothing
	}
	e.o.Log.Log(ctx, level, "window copied", "pipeline", e.o.Pipeline, "topic", m.Topic,
		"partition", m.Partition.Partition, "from", res.From, "to", res.To, "next", res.Next,
		"records", res.Copied, "bytes", res.Bytes, "status", string(res.Status))
	return res
}

// run plans the window, reconciles with the target and copies.
func (pc *partitionCopy) run(ctx context.Context, m catchup.Offsets, cp checkpoint.Checkpoint, pol plan.Policy) error {
	e := pc.e
	pl := plan.Window(m, cp, pol)
	if err := pc.planned(pl); err != nil {
		return err
	}
	if pc.state == stateTakenOver {
		pc.enter(stateInDoubt) // planned, and in doubt until settled and reconciled
	}
	pc.next, pc.stop = pl.From, math.MaxInt64
	if stop, ok := pol.StopOffsets[pc.p]; ok {
		pc.stop = stop
	}
	adopted := false
	pc.unvouched = !cp.Exists
	switch {
	case e.o.Provenance:
		if pc.state == stateInDoubt { // a takeover
			if err := pc.retry(ctx, func() error { return pc.settle(ctx) }); err != nil {
				return err
			}
		}
		if !cp.Exists {
			// The store cannot vouch that nothing was copied: the target
			// says (adopt).
			var err error
			if pl, adopted, err = pc.adopt(ctx, m, pol, pl); err != nil {
				return err
			}
			if err := pc.planned(pl); err != nil {
				return err
			}
			pc.next = pl.From
			break
		}
		if err := pc.retry(ctx, func() error { return pc.reconcileFrom(ctx, cp.TargetEnd) }); err != nil {
			return err
		}
	case !cp.Exists:
		if err := pc.refuseUnaccounted(ctx, pol); err != nil {
			return err
		}
	}
	pc.unvouched = false
	if cp.Start == nil && cp.Records == 0 && !adopted {
		// Nothing was copied before: copying begins here (a checkpoint
		// with copies and no start predates recorded starts; adopted
		// copies began before this store knew of them).
		from := pl.From
		pc.start = &from
	}
	if pl.Gap != nil {
		pc.pendGap = &checkpoint.Gap{From: pl.Gap.From, To: pl.Gap.To, At: e.o.Now()}
	}
	if e.o.Provenance && pc.next > 0 && pc.targetEnd > 0 && (cp.Exists && cp.TargetEnd > 0 || adopted) {
		// The anchor check rides on the first fetch of the copy (copyFrom),
		// and so does the commit below (passAnchor). A window left empty
		// makes neither: nothing is produced, and the last commit stores
		// what reconciliation found.
		pc.enter(stateAnchoring)
	} else {
		pc.enter(stateCopying)
		// Commit the start and the target end before producing anything, so
		// that a crash after the first produce can be reconciled.
		if err := pc.commitProgress(); err != nil {
			return err
		}
	}
	pc.res.From = min(pc.next, pl.To)
	return pc.copy(ctx, pl.To)
}

// planned records pl as the window of the result and returns its error.
func (pc *partitionCopy) planned(pl plan.Planned) error {
	pc.res.From, pc.res.To, pc.res.End, pc.res.Gap = pl.From, pl.To, pl.End, pl.Gap
	return pl.Err
}

// refuseUnaccounted is, without provenance, the check of a partition the
// store holds no checkpoint of: a target partition that already holds
// records fails it with catchup.ErrTargetAhead (nothing says how far it was
// copied, and copying from the start policy may write them all again),
// unless its start was chosen (start_offsets, a start time) or
// Options.AllowDuplicates.
func (pc *partitionCopy) refuseUnaccounted(ctx context.Context, pol plan.Policy) error {
	if _, explicit := pc.e.o.Policy.StartOffsets[pc.p]; explicit || pol.Start == plan.Timestamp || pc.e.o.AllowDuplicates {
		return nil
	}
	var end int64
	err := pc.retry(ctx, func() (err error) {
		end, err = pc.targetEndOffset(ctx)
		return err
	})
	if err == nil && end <= 0 {
		err = pc.retry(ctx, func() (err error) {
			end, err = pc.leaderEnd(ctx)
			return err
		})
	}
	switch {
	case err != nil:
		return err
	case end > 0:
		return pc.targetAhead(end, pol)
	}
	return nil
}
