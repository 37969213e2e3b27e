package replicate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sort"
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
	// not the caller's deadline.
	lasting context.Context
	// takeover: the lease was found unreleased, so its holder may have
	// left a produce request in flight (see settle).
	takeover bool
	// inDoubt: a produce request may have been appended, or may still be,
	// and this run has not found out (a takeover not yet reconciled, a
	// produce whose outcome is unknown when the run stops or its
	// reconciliation fails). The lease is then not released at the end, so
	// that the next run settles first.
	inDoubt  bool
	planned  bool // the window was planned (resolveDoubt moves nothing on a run that failed its plan)
	released bool // the last commit released the lease
	// anchorPending: the anchor check (see checkAnchor) is still to be
	// made, on the first batch of the copy, whose fetch starts at next-1;
	// nothing is committed or produced before it passes.
	anchorPending bool

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
	lastCommit             time.Time

	// surveyedEnd is the target end offset the run read for this partition
	// at plan time, with the others (Engine.targetEnds), for the first
	// targetEndOffset to use instead of a request of its own; -1 none. It
	// is kept only when the lease was free at the survey and nobody took it
	// in between (the acquire moved the epoch by exactly one): then nothing
	// of catchup's wrote to the target partition since, because writing
	// needs the lease. A takeover, or a lease another run took and released
	// since, reads the end again.
	surveyedEnd int64
}

// batch is what the fetch loop hands to the produce loop.
type batch struct {
	recs    []catchup.Record
	next    int64 // offset after the last offset this batch covers, at most the window end
	err     error
	retries int // fetches retried before this batch
	// anchor is, in the first batch of a fetch loop started for the anchor
	// check, the source record at next-1 when the fetch began with it (it is
	// not in recs); nil otherwise.
	anchor  *catchup.Record
	release func() // catchup.Fetched.Release of the fetch, or nil
}

// copyPartition leases m's partition, copies its window and commits. loaded
// is its checkpoint as the run's survey read it, before the lease was taken;
// surveyedEnd the target end offset read at plan time, or -1.
func (e *Engine) copyPartition(ctx, copyCtx context.Context, m catchup.Offsets, pol plan.Policy, loaded checkpoint.Checkpoint, surveyedEnd int64) (res Result) {
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
		lastCommit: e.o.Now(), surveyedEnd: -1,
	}
	if loaded.Owner == "" && cp.Epoch == loaded.Epoch+1 {
		pc.surveyedEnd = surveyedEnd
	}
	if !cp.Exists {
		// Commit the start even of an empty window: with start: latest, the
		// next run must begin here, not at its own latest.
		pc.committedNext = -1
	}
	defer func() {
		if pc.released {
			return // by the last commit
		}
		if pc.inDoubt {
			// Kept, so that the next run waits for the target to hold
			// still before it reconciles (see settle).
			e.o.Log.WarnContext(ctx, "lease kept: a produce request may still land in the target", "pipeline", e.o.Pipeline,
				"topic", m.Topic, "partition", m.Partition.Partition, "next", pc.next)
			return
		}
		rctx, cancel := pc.storeCall()
		defer cancel()
		if err := e.o.Store.Release(rctx, pc.lease); err != nil && !errors.Is(err, checkpoint.ErrFenced) {
			e.o.Log.WarnContext(ctx, "lease not released", "pipeline", e.o.Pipeline, "topic", m.Topic,
				"partition", m.Partition.Partition, "error", err)
		}
	}()

	// A lease still recorded when the survey read the store was never
	// released: its holder died (or is this owner, restarted) and may have
	// left a produce request in flight.
	pc.takeover = loaded.Owner != ""
	pc.inDoubt = pc.takeover && e.o.Provenance
	err = pc.run(copyCtx, m, cp, pol)
	if pc.inDoubt && !errors.Is(err, errInDoubt) {
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
		if cerr := pc.commitWith(true, res.Err, !pc.inDoubt); cerr != nil {
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

// storeCallTimeout bounds one store call (the SDK retries within it).
const storeCallTimeout = 30 * time.Second

// lastingContext returns a context that is not cancelled with ctx but keeps
// its deadline.
func (e *Engine) lastingContext(ctx context.Context) (context.Context, context.CancelFunc) {
	lctx := context.WithoutCancel(ctx)
	if dl, ok := ctx.Deadline(); ok {
		return context.WithDeadline(lctx, dl)
	}
	return context.WithCancel(lctx)
}

// storeCall returns the context of one store call.
func (pc *partitionCopy) storeCall() (context.Context, context.CancelFunc) {
	return context.WithTimeout(pc.lasting, storeCallTimeout)
}

// run plans the window, reconciles with the target and copies.
func (pc *partitionCopy) run(ctx context.Context, m catchup.Offsets, cp checkpoint.Checkpoint, pol plan.Policy) error {
	e := pc.e
	pl := plan.Window(m, cp, pol)
	pc.res.From, pc.res.To, pc.res.End, pc.res.Gap = pl.From, pl.To, pl.End, pl.Gap
	if pl.Err != nil {
		return pl.Err
	}
	pc.planned = true
	pc.next, pc.stop = pl.From, math.MaxInt64
	if cp.Start == nil && cp.Records == 0 {
		// Nothing was copied before: copying begins here (a checkpoint
		// with copies and no start predates recorded starts).
		from := pl.From
		pc.start = &from
	}
	if stop, ok := pol.StopOffsets[pc.p]; ok {
		pc.stop = stop
	}
	if pl.Gap != nil {
		pc.pendGap = &checkpoint.Gap{From: pl.Gap.From, To: pl.Gap.To, At: e.o.Now()}
	}
	if e.o.Provenance {
		if pc.takeover {
			if err := pc.retry(ctx, func() error { return pc.settle(ctx) }); err != nil {
				return err
			}
		}
		if err := pc.retry(ctx, func() error { return pc.reconcileFrom(ctx, cp.TargetEnd) }); err != nil {
			return err
		}
		pc.inDoubt = false
		// The anchor check rides on the first fetch of the copy (copyFrom),
		// and so does the commit below. A window left empty makes neither:
		// nothing is produced, and the last commit stores what reconciliation
		// found.
		pc.anchorPending = cp.Exists && cp.TargetEnd > 0 && pc.next > 0
	}
	if !pc.anchorPending {
		// Commit the start and the target end before producing anything, so
		// that a crash after the first produce can be reconciled.
		if err := pc.commit(true, nil); err != nil {
			return err
		}
	}
	pc.res.From = min(pc.next, pl.To)
	return pc.copy(ctx, pl.To)
}

// resolveDoubt tries, at the end of a run left in doubt, to find out under
// ctx (which outlives the copy but not the caller's deadline) what the
// target holds: it waits for the target to hold still, then reconciles from
// the last acknowledged end, as the next run would. On success the run is
// no longer in doubt and its last commit covers what landed. It returns the
// error that left it in doubt.
func (pc *partitionCopy) resolveDoubt(ctx context.Context) error {
	if !pc.planned || pc.targetEnd < 0 || pc.next < 0 {
		return nil // nothing known to reconcile from: the next run settles
	}
	if dl, ok := ctx.Deadline(); ok {
		// At most half the time left: the last commit needs the rest.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Until(dl)/2)
		defer cancel()
	}
	floor := pc.targetEnd
	err := pc.retry(ctx, func() error {
		if err := pc.settle(ctx); err != nil {
			return err
		}
		return pc.reconcileFrom(ctx, floor)
	})
	if err == nil {
		pc.inDoubt = false
	}
	return err
}

// TakeoverSettleMax bounds how long settle waits for the target's log end
// to hold still: a target written to continuously by something else never
// does. (Its high watermark reaching the log end is bounded by
// Options.ReplicationWait instead.)
const TakeoverSettleMax = 30 * time.Second

// settlePoll is how often settle reads the log end when TakeoverSettle is
// off.
const settlePoll = 200 * time.Millisecond

// errInDoubt marks the error of a partition whose target did not make
// visible, within Options.ReplicationWait, what its leader had appended:
// the partition ends StatusInDoubt.
var errInDoubt = errors.New("in doubt")

// settle waits, before a reconciliation, until everything that was
// appended to the target partition is visible to it:
//
//   - the leader's log end (Target.LogEnd) holds still for TakeoverSettle
//     (see Options.TakeoverSettle): a produce request of a dead process,
//     or one cut off on its way, may still land;
//   - and the high watermark has reached that log end: reconciliation reads
//     below the high watermark only, and on a replicated target whose
//     followers lag, records appended above it (by a request that timed
//     out) would otherwise be copied a second time. Two equal reads of the
//     high watermark are no evidence that nothing is in flight.
//
// A new leader epoch starts the wait over: a new leader truncates what its
// predecessor had not replicated. The wait for the high watermark is
// bounded by Options.ReplicationWait: when it runs out, settle returns an
// error wrapping errInDoubt. A log end that never holds still (another
// writer) is given up on after TakeoverSettleMax once it is visible.
func (pc *partitionCopy) settle(ctx context.Context) error {
	e := pc.e
	if e.o.TakeoverSettle <= 0 && e.o.ReplicationWait <= 0 {
		return nil // turned off
	}
	tp := pc.targetPartition()
	poll := settlePoll
	if e.o.TakeoverSettle > 0 {
		poll = e.o.TakeoverSettle
	}
	// Time is counted in the sleeps between reads (the requests add to
	// it), so that a test's frozen clock cannot stall the wait.
	var (
		elapsed time.Duration // slept so far
		last    catchup.LogEnd
		read    bool          // last holds a read
		since   time.Duration // elapsed when last.End was first read at its value
		waited  bool          // the high watermark was found below the log end
	)
	defer func() {
		if waited {
			pc.res.ReplicationWaits++
			pc.res.ReplicationWaited += elapsed
		}
	}()
	for {
		le, err := e.o.Target.LogEnd(ctx, tp)
		switch {
		case err != nil:
			// A transient error (a leader moving) is the caller's to
			// retry, with its backoff and its count: settle starts over.
			return fmt.Errorf("settle %s: %w", tp, err)
		case !read || le.Epoch != last.Epoch:
			if read {
				e.o.Log.InfoContext(ctx, "target leader epoch changed while waiting for replication", "pipeline", e.o.Pipeline,
					"topic", tp.Topic, "partition", tp.Partition, "epoch", le.Epoch, "was", last.Epoch, "end", le.End, "was_end", last.End)
			}
			last, read, since = le, true, elapsed
		case le.End != last.End:
			pc.res.Settled += le.End - last.End
			last, since = le, elapsed
		default:
			last = le // a new high watermark, the same end
		}
		visible := e.o.ReplicationWait <= 0 || last.HighWatermark >= last.End
		still := e.o.TakeoverSettle <= 0 || elapsed-since >= e.o.TakeoverSettle
		switch {
		case visible && still:
			return nil
		case visible && elapsed >= TakeoverSettleMax:
			e.o.Log.WarnContext(ctx, "target partition did not hold still", "pipeline", e.o.Pipeline,
				"topic", tp.Topic, "partition", tp.Partition, "waited", elapsed, "end", last.End)
			return nil
		case !visible && elapsed >= e.o.ReplicationWait:
			// (Only a high watermark below the log end is in doubt: a
			// visible log end that keeps moving is another writer's,
			// bounded by TakeoverSettleMax above.)
			return fmt.Errorf("settle %s: the target's high watermark %d stayed below its leader's log end %d (epoch %d) for %v "+
				"(replication_wait): the records in between may be copies this pipeline sent, which catchup cannot read yet; "+
				"the lease is kept and nothing is re-sent. Run again once the target's followers have caught up "+
				"or left the in-sync replicas: %w",
				tp, last.HighWatermark, last.End, last.Epoch, elapsed, errInDoubt)
		}
		if !visible && !waited {
			waited = true
			e.o.Log.InfoContext(ctx, "waiting for the target to replicate before reconciling", "pipeline", e.o.Pipeline,
				"topic", tp.Topic, "partition", tp.Partition, "high_watermark", last.HighWatermark, "log_end", last.End, "epoch", last.Epoch)
		}
		if !sleep(ctx, poll) {
			return fmt.Errorf("settle %s: %w", tp, ctx.Err())
		}
		elapsed += poll
	}
}

// reconcileFrom finds what was written to the target after the end offset
// floor (the stored end at the start of a run, the last acknowledged one at
// the end of a run in doubt; -1: unknown, nothing to read back) and moves
// next past it. A target that ends below floor was truncated or recreated:
// that fails, and nothing moves.
func (pc *partitionCopy) reconcileFrom(ctx context.Context, floor int64) error {
	end, err := pc.targetEndOffset(ctx)
	if err != nil {
		return err
	}
	if floor >= 0 {
		if end < floor {
			return fmt.Errorf("target partition %s ends at %d, below the end %d recorded at the last commit: "+
				"the target topic was truncated or recreated; run `catchup reset --pipeline %s --topic %s --to earliest` "+
				"to copy again deliberately", pc.targetPartition(), end, floor, pc.e.o.Pipeline, pc.p.Topic)
		}
		if end > floor {
			if err := pc.reconcile(ctx, floor, end); err != nil {
				return err
			}
		}
	}
	pc.targetEnd = end
	return nil
}

// anchorBatches bounds how many target batches checkAnchor reads back.
const anchorBatches = 4

// checkAnchor compares the source record at next-1, the last one copied,
// with its copy in the target. A difference means the source topic was
// deleted and recreated (and refilled past the checkpoint, or the plan would
// have seen its log end below it): copying on from the checkpoint would
// skip the new topic's first records, so the partition fails closed. When
// either record cannot be found cheaply (a transaction marker or a
// compacted record at next-1, retention, loop prevention) there is nothing
// to compare and the check passes.
//
// committedEnd is the target end stored with the checkpoint: this
// pipeline's copy of next-1 was acknowledged before it, so a record at or
// above it that claims to be that copy is foreign (another pipeline or
// producer writing copies of the same source partition). A foreign copy
// that differs is passed over, and blamed, not the source, when this
// pipeline's own copy is not found or matches.
//
// checkAnchor reads the source record with a fetch of its own (plan's
// CheckAnchors); a run's copy reads it from its first fetch (see copyFrom).
func (pc *partitionCopy) checkAnchor(ctx context.Context, committedEnd int64) error {
	anchor := pc.next - 1
	// The source record and the target's last batch are read at once: two
	// round trips in the time of one.
	first := pc.readBackEnd(ctx)
	f, err := pc.e.o.Source.Fetch(ctx, pc.p, anchor, 1)
	var gap *catchup.GapError
	switch {
	case errors.As(err, &gap):
		return nil // retention passed it; the gap, if any, is the copy's business
	case err != nil:
		return fmt.Errorf("read the source record at %s offset %d: %w", pc.p, anchor, err)
	case len(f.Records) == 0 || f.Records[0].Offset != anchor:
		return nil
	}
	return pc.compareAnchor(ctx, &f.Records[0], committedEnd, first)
}

// readBack is the outcome of one Target.ReadBack.
type readBack struct {
	recs []catchup.Record
	base int64
	err  error
}

// readBackEnd reads back, in the background, the target batch that holds
// offset targetEnd-1 (no records when the target is empty), for
// compareAnchor's first batch.
func (pc *partitionCopy) readBackEnd(ctx context.Context) <-chan readBack {
	first := make(chan readBack, 1)
	tp, end := pc.targetPartition(), pc.targetEnd
	go func() {
		if end <= 0 {
			first <- readBack{}
			return
		}
		recs, base, err := pc.e.o.Target.ReadBack(ctx, tp, end)
		first <- readBack{recs, base, err}
	}()
	return first
}

// compareAnchor is checkAnchor's comparison of src, the source record at
// next-1, with its copy, read back from the target's end down: first, if
// not nil, gives the last batch (readBackEnd), the others are read here.
func (pc *partitionCopy) compareAnchor(ctx context.Context, src *catchup.Record, committedEnd int64, first <-chan readBack) error {
	anchor := pc.next - 1
	tp := pc.targetPartition()
	end := pc.targetEnd
	var foreign *catchup.Record // a differing copy written after the last commit
	defer func() {
		if foreign != nil {
			pc.e.o.Log.WarnContext(ctx, "foreign record in the target", "pipeline", pc.e.o.Pipeline, "topic", tp.Topic,
				"partition", tp.Partition, "target_offset", foreign.Offset, "source_offset", anchor)
		}
	}()
	for range anchorBatches {
		if end <= 0 {
			return nil
		}
		var rb readBack
		if first != nil {
			rb, first = <-first, nil
		} else {
			rb.recs, rb.base, rb.err = pc.e.o.Target.ReadBack(ctx, tp, end)
		}
		recs, base, err := rb.recs, rb.base, rb.err
		if err != nil {
			return fmt.Errorf("read back %s for the copy of source offset %d: %w", tp, anchor, err)
		}
		for i := len(recs) - 1; i >= 0; i-- {
			off, ok := catchup.SourceOffset(&recs[i], pc.e.o.Cluster, pc.p)
			switch {
			case !ok || off > anchor:
				continue
			case off < anchor:
				return pc.foreignAnchor(foreign, anchor, committedEnd) // copies are in order: the anchor was never copied (loop prevention)
			case !catchup.SameContent(src, &recs[i], true) && committedEnd >= 0 && recs[i].Offset >= committedEnd:
				if foreign == nil {
					foreign = &recs[i]
				}
				continue
			case !catchup.SameContent(src, &recs[i], true):
				return fmt.Errorf("%s: the source record at offset %d differs from its copy at target offset %d "+
					"(%s): the source topic was deleted and recreated; copying on from the checkpoint would skip "+
					"its first %d offsets. Run `catchup reset --pipeline %s --topic %s --to earliest` to copy it again "+
					"deliberately: %w", pc.p, anchor, recs[i].Offset, tp, pc.next, pc.e.o.Pipeline, pc.p.Topic, catchup.ErrTopicRecreated)
			default:
				return nil
			}
		}
		if base >= end {
			return pc.foreignAnchor(foreign, anchor, committedEnd)
		}
		end = base
	}
	return pc.foreignAnchor(foreign, anchor, committedEnd)
}

// foreignAnchor is checkAnchor's verdict when this pipeline's copy of the
// anchor was not found: an error naming the foreign record if one claimed
// to be that copy with other content, nil if none.
func (pc *partitionCopy) foreignAnchor(foreign *catchup.Record, anchor, committedEnd int64) error {
	if foreign == nil {
		return nil
	}
	tp := pc.targetPartition()
	return fmt.Errorf("%s: target %s offset %d holds a record whose provenance header says it is the copy of source "+
		"offset %d, but its content differs from the source record, and it was written after this pipeline's last "+
		"commit (target end %d): another writer (a second pipeline with source cluster name %q, or a producer) writes "+
		"into this target partition. The source topic was not shown to be recreated; stop the other writer, then run "+
		"again: %w", pc.p, tp, foreign.Offset, anchor, committedEnd, pc.e.o.Cluster, catchup.ErrForeignRecord)
}

// reconcile reads the target partition backwards from end down to floor,
// finds the highest source offset of pc.p already written there and moves
// next after it.
func (pc *partitionCopy) reconcile(ctx context.Context, floor, end int64) error {
	pc.res.Reconciled++
	last, found, err := pc.lastWritten(ctx, floor, end)
	if err != nil {
		return fmt.Errorf("reconcile %s with the target between offsets %d and %d: %w", pc.p, floor, end, err)
	}
	if found && last >= pc.next {
		pc.res.Skipped += last + 1 - pc.next
		pc.next = last + 1
	}
	return nil
}

// lastWritten returns the highest source offset of pc.p that this partition's
// copies wrote to the target partition between floor and end, reading
// backwards one batch at a time.
//
// Since floor (the target end at the last commit, or after the last
// acknowledged produce) the copies under this checkpoint namespace wrote
// only source offsets from pc.next on, in order, and a bounded job only
// below its stop offset. A copy of pc.p outside that range was written by
// another writer of the same target partition: a backfill job and its
// pipeline write there under two checkpoint namespaces, and a job resumed
// after the pipeline copied later offsets must not take those for its own
// and skip the rest of its range. (The window end is no bound: an earlier
// run of the same namespace may have had a larger window.)
func (pc *partitionCopy) lastWritten(ctx context.Context, floor, end int64) (int64, bool, error) {
	tp := pc.targetPartition()
	for end > floor {
		recs, base, err := pc.e.o.Target.ReadBack(ctx, tp, end)
		if err != nil {
			return 0, false, err
		}
		for i := len(recs) - 1; i >= 0; i-- {
			if recs[i].Offset < floor || recs[i].Offset >= end {
				continue
			}
			if off, ok := catchup.SourceOffset(&recs[i], pc.e.o.Cluster, pc.p); ok && off >= pc.next && off < pc.stop {
				return off, true, nil
			}
		}
		if base >= end {
			break
		}
		end = base
	}
	return 0, false, nil
}

// targetPartition is the partition of the target that pc.p is copied into.
func (pc *partitionCopy) targetPartition() catchup.Partition {
	return catchup.Partition{Topic: pc.e.o.TargetTopic(pc.p.Topic), Partition: pc.p.Partition}
}

// dropLooped removes the records that were copied from the target cluster
// (loop prevention) and counts them.
func (pc *partitionCopy) dropLooped(recs []catchup.Record) []catchup.Record {
	if pc.e.o.LoopCluster == "" {
		return recs
	}
	kept := -1 // records before kept are all kept, in place
	for i := range recs {
		looped := catchup.CopiedFrom(&recs[i], pc.e.o.LoopCluster)
		switch {
		case looped && kept < 0:
			kept = i
			pc.res.LoopSkipped++
		case looped:
			pc.res.LoopSkipped++
		case kept >= 0:
			recs[kept] = recs[i]
			kept++
		}
	}
	if kept < 0 {
		return recs
	}
	return recs[:kept]
}

func (pc *partitionCopy) targetEndOffset(ctx context.Context) (int64, error) {
	if end := pc.surveyedEnd; end >= 0 {
		pc.surveyedEnd = -1 // once: every later read is after something may have changed
		return end, nil
	}
	tp := pc.targetPartition()
	ends, err := pc.e.o.Target.EndOffsets(ctx, []catchup.Partition{tp})
	if err != nil {
		return 0, fmt.Errorf("target end offset of %s: %w", tp, err)
	}
	end, ok := ends[tp]
	if !ok {
		return 0, fmt.Errorf("target end offset of %s: not reported", tp)
	}
	return end, nil
}

// copy copies [pc.next, to), fetching the next batch while the current one
// is produced, and commits on the way.
func (pc *partitionCopy) copy(ctx context.Context, to int64) error {
	e := pc.e
	if e.o.MaxDuration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.o.MaxDuration)
		defer cancel()
	}
	for pc.next < to {
		restart, err := pc.copyFrom(ctx, to)
		if err != nil && ctx.Err() != nil && pc.e.o.MaxDuration > 0 && !errors.Is(err, context.Canceled) {
			// The window's own duration ran out: a partial window, not a failure.
			// (When the run's deadline ran out too, copyPartition still sees it.)
			return nil
		}
		if err != nil || !restart {
			return err
		}
	}
	return nil
}

// copyFrom runs one fetch loop from pc.next. It returns restart true when the
// fetch position must jump (a gap skipped with on_gap: skip).
func (pc *partitionCopy) copyFrom(ctx context.Context, to int64) (restart bool, err error) {
	e := pc.e
	fctx, cancel := context.WithCancel(ctx)
	ch := make(chan batch) // the next batch is fetched while one is produced
	done := make(chan struct{})
	anchored := pc.anchorPending
	go func() {
		defer close(done)
		pc.fetchLoop(fctx, pc.next, to, anchored, ch)
	}()
	defer func() {
		cancel()
		for range ch { // let the fetch loop finish
		}
		<-done
	}()
	var first <-chan readBack
	if anchored {
		first = pc.readBackEnd(fctx) // while the first batch is fetched
	}
	for b := range ch {
		pc.res.Retries += b.retries
		if pc.anchorPending {
			if err := pc.passAnchor(ctx, b.anchor, first); err != nil {
				return false, err
			}
		}
		if b.err != nil {
			var gap *catchup.GapError
			if errors.As(b.err, &gap) && e.o.Policy.SkipGaps && gap.From == pc.next {
				pc.res.Gap = gap
				pc.pendGap = &checkpoint.Gap{From: gap.From, To: gap.To, At: e.o.Now()}
				pc.next = gap.To
				return true, pc.commit(true, nil)
			}
			return false, b.err
		}
		if recs := pc.dropLooped(b.recs); len(recs) > 0 {
			if err := pc.produce(ctx, recs); errors.Is(err, errWindowFull) {
				// pc.next is after the last record acknowledged.
				if b.release != nil {
					b.release()
				}
				return false, pc.commit(true, nil)
			} else if err != nil {
				return false, err
			}
		}
		if b.release != nil {
			b.release() // nothing refers to the records once they are produced
		}
		pc.next = b.next
		if err := pc.commit(false, nil); err != nil {
			return false, err
		}
		if e.o.MaxBytes > 0 && pc.res.Bytes >= e.o.MaxBytes {
			return false, nil
		}
	}
	return false, ctx.Err()
}

// passAnchor ends the anchor check on the first batch of the copy: it
// compares src, the source record at next-1 (nil when the first fetch did
// not begin with it: a marker, a compacted record, retention), with its copy
// in the target, then makes the commit that run left to it, before anything
// is produced.
func (pc *partitionCopy) passAnchor(ctx context.Context, src *catchup.Record, first <-chan readBack) error {
	if src != nil {
		err := pc.retry(ctx, func() error {
			err := pc.compareAnchor(ctx, src, pc.committedTargetEnd, first)
			first = nil // a retry reads back again
			return err
		})
		if err != nil {
			return err
		}
	}
	pc.anchorPending = false
	// The start and the target end, so that a crash after the first produce
	// can be reconciled.
	return pc.commit(true, nil)
}

// fetchLoop fetches [from, to) into ch and closes it. An error is sent as the
// last batch. With anchor, the first fetch starts at from-1, and the record
// there, if the response begins with it, goes to the first batch's anchor
// field rather than its records.
func (pc *partitionCopy) fetchLoop(ctx context.Context, from, to int64, anchor bool, ch chan<- batch) {
	defer close(ch)
	e := pc.e
	retries := 0
	send := func(b batch) bool {
		select {
		case ch <- b:
			return true
		case <-ctx.Done():
			return false
		}
	}
	off := from
	if anchor {
		off = from - 1
	}
	for off < to {
		f, err := e.o.Source.Fetch(ctx, pc.p, off, e.o.FetchBytes)
		var gap *catchup.GapError
		if off < from && errors.As(err, &gap) {
			if gap.To <= from {
				off = from // retention deleted the anchor only: nothing to compare
				continue
			}
			err = &catchup.GapError{Partition: gap.Partition, From: from, To: gap.To}
		}
		if err == nil && f.Next <= off {
			err = fmt.Errorf("fetch %s at offset %d: no records although the window ends at %d: %w",
				pc.p, off, to, catchup.ErrRetriable)
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, catchup.ErrRetriable) && retries < e.o.Retries {
				retries++
				if !sleep(ctx, backoff(e.o.RetryBackoff, retries)) {
					return
				}
				continue
			}
			send(batch{err: err, retries: retries})
			return
		}
		recs := f.Records
		var a *catchup.Record
		if off < from && len(recs) > 0 && recs[0].Offset == off {
			a, recs = &recs[0], recs[1:]
		}
		if n := len(recs); n > 0 && recs[n-1].Offset >= to {
			recs = recs[:sort.Search(n, func(i int) bool { return recs[i].Offset >= to })]
		}
		next := min(f.Next, to)
		if !send(batch{recs: recs, next: next, retries: retries, anchor: a, release: f.Release}) {
			return
		}
		retries = 0
		off = next
	}
}

// produce writes recs to the target, retrying what was not written and
// reconciling with the target what may have been.
func (pc *partitionCopy) produce(ctx context.Context, recs []catchup.Record) error {
	e := pc.e
	tp := pc.targetPartition()
	attempt := 0 // failed attempts in a row
	for len(recs) > 0 {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("produce %s at offset %d: %w", tp, recs[0].Offset, err)
		}
		if e.o.MaxBytes > 0 && pc.res.Bytes >= e.o.MaxBytes {
			return errWindowFull
		}
		if err := pc.keepLease(); err != nil {
			return err
		}
		// One request's worth at a time, so that the lease is checked before
		// every produce request, not once per fetched batch.
		// The request is not cut off when ctx ends (see lasting): ctx only
		// stops the next one.
		acked, end, err := e.o.Target.Produce(pc.lasting, tp, recs[:pc.requestLen(recs)], pc.stamp())
		if acked > 0 {
			pc.acked(recs[:acked], end)
			recs = recs[acked:]
			attempt = 0
		}
		switch {
		case err == nil:
			continue
		case ctx.Err() != nil:
			// The outcome of the request in flight is unknown; it is not
			// committed, and the next run reconciles.
			pc.inDoubt = pc.inDoubt || (e.o.Provenance && errors.Is(err, catchup.ErrUnknownOutcome))
			return fmt.Errorf("produce %s at offset %d: %w", tp, recs[0].Offset, ctx.Err())
		case errors.Is(err, catchup.ErrUnknownOutcome) && e.o.Provenance && pc.targetEnd >= 0:
			// Never retried blindly: find out what was appended first,
			// waiting out a target that is restarting.
			var n int
			rerr := pc.retry(ctx, func() (err error) {
				n, err = pc.reconcileProduce(ctx, recs)
				return err
			})
			if rerr != nil {
				pc.inDoubt = true
				return errors.Join(err, rerr)
			}
			recs = recs[n:]
		case errors.Is(err, catchup.ErrRetriable), errors.Is(err, catchup.ErrUnknownOutcome):
			// Nothing was written, or provenance is off and a possible
			// duplicate is the price of not losing the records (README).
		default:
			return fmt.Errorf("produce %s at offset %d: %w", tp, recs[0].Offset, err)
		}
		if len(recs) == 0 {
			break
		}
		if attempt++; attempt > e.o.Retries {
			return fmt.Errorf("produce %s at offset %d: giving up after %d retries: %w", tp, recs[0].Offset, e.o.Retries, err)
		}
		pc.res.Retries++
		e.o.Log.WarnContext(ctx, "produce retried", "pipeline", e.o.Pipeline, "topic", tp.Topic,
			"partition", tp.Partition, "offset", recs[0].Offset, "attempt", attempt, "error", err)
		if !sleep(ctx, backoff(e.o.RetryBackoff, attempt)) {
			return fmt.Errorf("produce %s at offset %d: %w", tp, recs[0].Offset, ctx.Err())
		}
	}
	return nil
}

// errWindowFull stops produce when the window's bytes reached
// Options.MaxBytes with records left: pc.next is after the last one
// acknowledged.
var errWindowFull = errors.New("window max_bytes reached")

// requestLen is how many leading records of recs the next produce call
// sends: at most BatchRecords and, with MaxBytes, no more than it takes to
// reach the bytes left in the window (at least one), counted as countCopied
// counts them. So a window stops within one record of MaxBytes whatever the
// fetch size or the source's compression (a compressed fetch can decode to
// ten times its size).
func (pc *partitionCopy) requestLen(recs []catchup.Record) int {
	n := min(len(recs), pc.e.o.BatchRecords)
	if pc.e.o.MaxBytes <= 0 {
		return n
	}
	left := pc.e.o.MaxBytes - pc.res.Bytes
	stamp := pc.stamp()
	for i := range n {
		if left -= pc.sizeAsWritten(&recs[i], stamp); left <= 0 {
			return i + 1
		}
	}
	return n
}

// sizeAsWritten is r's size as counted in Result.Bytes: catchup.Record.Size
// plus, with stamp, the provenance header's key and value.
func (pc *partitionCopy) sizeAsWritten(r *catchup.Record, stamp *catchup.Provenance) int64 {
	n := int64(r.Size())
	if stamp != nil {
		stamp.Offset = r.Offset
		n += int64(len(catchup.ProvenanceHeader) + catchup.ProvenanceLen(*stamp))
	}
	return n
}

// reconcileProduce finds out, after a produce whose outcome is unknown, how
// many leading records of recs the target holds, and accounts for them.
func (pc *partitionCopy) reconcileProduce(ctx context.Context, recs []catchup.Record) (int, error) {
	// The request may still be on its way to the broker (a connection
	// lost after the write): let it land first.
	if err := pc.settle(ctx); err != nil {
		return 0, err
	}
	end, err := pc.targetEndOffset(ctx)
	if err != nil {
		return 0, err
	}
	pc.res.Reconciled++
	last, found, err := pc.lastWritten(ctx, pc.targetEnd, end)
	if err != nil {
		return 0, fmt.Errorf("reconcile %s with the target between offsets %d and %d: %w", pc.p, pc.targetEnd, end, err)
	}
	n := 0
	if found {
		n = sort.Search(len(recs), func(i int) bool { return recs[i].Offset > last })
	}
	if n > 0 {
		pc.acked(recs[:n], end)
	}
	pc.targetEnd = end
	return n, nil
}

// stamp returns the provenance the target stamps on each record, nil
// without provenance.
func (pc *partitionCopy) stamp() *catchup.Provenance {
	if !pc.e.o.Provenance {
		return nil
	}
	return &catchup.Provenance{Cluster: pc.e.o.Cluster, Partition: pc.p}
}

// acked records that recs were written and the target ended at end.
func (pc *partitionCopy) acked(recs []catchup.Record, end int64) {
	pc.countCopied(recs)
	pc.next = recs[len(recs)-1].Offset + 1
	if end >= 0 {
		pc.targetEnd = end
	}
}

func (pc *partitionCopy) countCopied(recs []catchup.Record) {
	var n int64
	stamp := pc.stamp()
	for i := range recs {
		n += pc.sizeAsWritten(&recs[i], stamp) // as written: with the provenance header
		if ts := recs[i].Timestamp; ts.After(pc.res.Newest) {
			pc.res.Newest = ts
		}
	}
	pc.res.Copied += int64(len(recs))
	pc.res.Bytes += n
	pc.pendRecords += int64(len(recs))
	pc.pendBytes += n
	pc.e.progress(int64(len(recs)), n)
}

// keepLease renews the lease when half of it is gone. A lease that cannot be
// renewed because another run took it fails with checkpoint.ErrFenced, and
// nothing more is produced.
func (pc *partitionCopy) keepLease() error {
	e := pc.e
	if e.o.Now().Before(pc.lease.Expires.Add(-e.o.LeaseTTL / 2)) {
		return nil
	}
	sctx, cancel := pc.storeCall()
	defer cancel()
	l, err := e.o.Store.Renew(sctx, pc.lease, e.o.LeaseTTL)
	if err != nil {
		return fmt.Errorf("renew lease of %s: %w", pc.p, err)
	}
	pc.lease = l
	return nil
}

// commit writes the checkpoint if force is set or CommitInterval has passed
// since the last commit, and there is something new to write.
func (pc *partitionCopy) commit(force bool, cause error) error {
	return pc.commitWith(force, cause, false)
}

// commitWith is commit that, with release, also frees the lease in the same
// write (checkpoint.Commit.Release): a run's last commit.
func (pc *partitionCopy) commitWith(force bool, cause error, release bool) error {
	e := pc.e
	now := e.o.Now()
	if !force && now.Sub(pc.lastCommit) < e.o.CommitInterval {
		return nil
	}
	if pc.next == pc.committedNext && pc.targetEnd == pc.committedTargetEnd && pc.pendGap == nil &&
		pc.pendRecords == 0 && cause == nil {
		return nil
	}
	if pc.committedNext < 0 && pc.pendRecords == 0 && cause != nil {
		// A partition that failed before its first commit keeps no
		// checkpoint, so that the next run starts by the start policy again.
		return nil
	}
	c := checkpoint.Commit{Next: pc.next, TargetEnd: pc.targetEnd, Records: pc.pendRecords, Bytes: pc.pendBytes, Gap: pc.pendGap,
		Start: pc.start, Release: release}
	if cause != nil {
		c.Error = cause.Error()
	}
	sctx, cancel := pc.storeCall()
	defer cancel()
	if err := e.o.Store.Commit(sctx, pc.lease, c); err != nil {
		return fmt.Errorf("commit %s at %d: %w", pc.p, pc.next, err)
	}
	pc.released, pc.start = release, nil
	pc.committedNext, pc.committedTargetEnd = pc.next, pc.targetEnd
	pc.pendRecords, pc.pendBytes, pc.pendGap = 0, 0, nil
	pc.lastCommit = now
	return nil
}

// retry calls fn until it succeeds, fails with an error that does not wrap
// catchup.ErrRetriable, or has failed Retries+1 times in a row.
func (pc *partitionCopy) retry(ctx context.Context, fn func() error) error {
	for attempt := 0; ; attempt++ {
		err := fn()
		if err == nil || !errors.Is(err, catchup.ErrRetriable) || attempt >= pc.e.o.Retries {
			return err
		}
		pc.res.Retries++
		if !sleep(ctx, backoff(pc.e.o.RetryBackoff, attempt+1)) {
			return errors.Join(err, ctx.Err())
		}
	}
}

// backoff is the wait before retry n (from 1): base doubled each time, at most 5s.
func backoff(base time.Duration, n int) time.Duration {
	d := base << min(n-1, 16)
	return min(d, 5*time.Second)
}

// sleep waits d or until ctx is done; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
