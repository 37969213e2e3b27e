package replicate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/kafka-catchup/catchup/internal/backoff"
	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/plan"
)

// resolveDoubt tries, at the end of a run left in doubt, to find out under
// ctx (which outlives the copy but not the caller's deadline) what the
// target holds: it waits for the target to hold still, then reconciles from
// the last acknowledged end, as the next run would. On success the run is
// no longer in doubt and its last commit covers what landed. It returns the
// error that left it in doubt.
func (pc *partitionCopy) resolveDoubt(ctx context.Context) error {
	if pc.state != stateInDoubt || pc.targetEnd < 0 || pc.next < 0 {
		return nil // nothing planned (taken over, then the plan failed) or known to reconcile from: the next run settles
	}
	if dl, ok := ctx.Deadline(); ok {
		// At most half the time left: the last commit needs the rest.
		// (The wall clock, not Options.Now: a context's deadline fires on
		// it.)
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
		pc.enter(stateCopying)
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
		if !backoff.Sleep(ctx, poll) {
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
				"the target topic was truncated or recreated; run `catchup reset --pipeline %s --topic %s --to earliest --allow-duplicates` "+
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
	return pc.lastCopy(ctx, floor, end, pc.next, 0)
}

// lastCopy returns the highest source offset of pc.p, from from on and
// below pc.stop, that the target partition holds a copy of between floor
// and end, reading backwards one batch at a time, at most batches of them
// (0: down to floor).
func (pc *partitionCopy) lastCopy(ctx context.Context, floor, end, from int64, batches int) (int64, bool, error) {
	tp := pc.targetPartition()
	for n := 0; end > floor && (batches == 0 || n < batches); n++ {
		recs, base, err := pc.e.o.Target.ReadBack(ctx, tp, end)
		if err != nil {
			return 0, false, err
		}
		for i := len(recs) - 1; i >= 0; i-- {
			if recs[i].Offset < floor || recs[i].Offset >= end {
				continue
			}
			if off, ok := catchup.SourceOffset(&recs[i], pc.e.o.Cluster, pc.p); ok && off >= from && off < pc.stop {
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

// leaderEnd returns, for a partition whose target end offset (its high
// watermark) is 0, the log end of the target partition's leader: above 0
// when it appended records its followers have not replicated yet, which
// only a settle makes visible. Without Options.ReplicationWait the high
// watermark is trusted (0). It reads the end surveyed at plan time once,
// as targetEndOffset does.
func (pc *partitionCopy) leaderEnd(ctx context.Context) (int64, error) {
	if pc.e.o.ReplicationWait <= 0 {
		return 0, nil
	}
	if end := pc.surveyedLogEnd; end >= 0 {
		pc.surveyedLogEnd = -1
		return end, nil
	}
	tp := pc.targetPartition()
	le, err := pc.e.o.Target.LogEnd(ctx, tp)
	if err != nil {
		return 0, fmt.Errorf("log end of %s: %w", tp, err)
	}
	return le.End, nil
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

// targetEnds reads the target end offsets of every partition the run will
// copy (without Provenance, of those without a checkpoint only), in one Target.EndOffsets call (one ListOffsets
// request per target broker) instead of one call per partition: the end
// reconciliation starts from (see partitionCopy.surveyedEnd for when a
// partition may use it). On an error it returns nil and each partition reads
// its own, as it would without this. Partitions of topics in bad (missing
// or short on the target) are not asked for.
func (e *Engine) targetEnds(ctx context.Context, marks []catchup.Offsets, pol plan.Policy, cps map[catchup.Partition]checkpoint.Checkpoint,
	bad map[string]error) (ends, logEnds map[catchup.Partition]int64) {
	var (
		tps []catchup.Partition
		err error
	)
	for _, m := range marks {
		cp := cps[m.Partition]
		if _, ok := idle(m, pol, cp); ok || cp.Owner != "" || bad[m.Topic] != nil {
			continue // not copied (idle, or its target topic is missing or short), or a takeover: settle reads the end again
		}
		if !e.o.Provenance && cp.Exists {
			continue // without provenance only a partition without a checkpoint reads its target end (refuseUnaccounted)
		}
		tps = append(tps, e.targetPartition(m.Partition))
	}
	if len(tps) == 0 {
		return nil, nil
	}
	ends, err = e.o.Target.EndOffsets(ctx, tps)
	if err != nil {
		e.o.Log.DebugContext(ctx, "target end offsets not read at plan time; each partition reads its own", "pipeline", e.o.Pipeline,
			"partitions", len(tps), "error", err)
		return nil, nil
	}
	if e.o.ReplicationWait <= 0 {
		return ends, nil
	}
	// A partition without a checkpoint over an empty-looking target
	// partition asks its leader's log end (leaderEnd): asked here for all
	// of them at once, a first run over 10,000 new partitions costs one
	// request per broker, not three per partition.
	var empty []catchup.Partition
	for _, m := range marks {
		tp := e.targetPartition(m.Partition)
		if end, ok := ends[tp]; ok && end <= 0 && !cps[m.Partition].Exists && cps[m.Partition].Owner == "" {
			empty = append(empty, tp)
		}
	}
	if len(empty) == 0 {
		return ends, nil
	}
	les, err := e.o.Target.LogEnds(ctx, empty)
	if err != nil {
		e.o.Log.DebugContext(ctx, "target log ends not read at plan time; each partition reads its own", "pipeline", e.o.Pipeline,
			"partitions", len(empty), "error", err)
		return ends, nil
	}
	logEnds = make(map[catchup.Partition]int64, len(les))
	for tp, le := range les {
		logEnds[tp] = le.End
	}
	return ends, logEnds
}

// adopters are the target partitions that adopt will settle and read
// back, for presettle: those of partitions without a checkpoint whose
// target end at plan time (ends, from targetEnds) is above 0. Nil when
// adopt does not settle (no provenance, no wait configured).
func (e *Engine) adopters(marks []catchup.Offsets, pol plan.Policy, cps map[catchup.Partition]checkpoint.Checkpoint,
	bad map[string]error, ends map[catchup.Partition]int64) map[catchup.Partition]bool {
	if !e.o.Provenance || e.o.TakeoverSettle <= 0 && e.o.ReplicationWait <= 0 {
		return nil
	}
	var out map[catchup.Partition]bool
	for _, m := range marks {
		cp := cps[m.Partition]
		if _, ok := idle(m, pol, cp); ok || cp.Exists || cp.Owner != "" || bad[m.Topic] != nil {
			continue
		}
		if tp := e.targetPartition(m.Partition); ends[tp] > 0 {
			if out == nil {
				out = make(map[catchup.Partition]bool)
			}
			out[tp] = true
		}
	}
	return out
}

// presettle settles the adopters together, while the other partitions
// copy: it reads their leaders' log ends and epochs, waits TakeoverSettle,
// reads them again and then the high watermarks, all in one call each,
// and returns the partitions whose log end and epoch held still and whose
// high watermark reached the log end, as settle would have found them at
// that moment, so that adopt reads them back without a settle of its own.
// Settled one at a time, each would hold one of the Parallelism workers
// for a whole TakeoverSettle (a store lost over 10,000 partitions: 10,000
// s over 8 workers); here the adopters wait one TakeoverSettle in all. A
// partition left out (its end moved, a new leader, a high watermark below
// the log end, a read that failed) settles on its own as before. What is
// read here holds for a partition only while nothing of catchup's writes
// to it, which needs its lease: a partition whose lease was taken since
// the survey settles again (copyPartition's clean acquire).
func (e *Engine) presettle(ctx context.Context, adopters map[catchup.Partition]bool) map[catchup.Partition]bool {
	if len(adopters) == 0 {
		return nil
	}
	tps := slices.Collect(maps.Keys(adopters))
	first, err := e.o.Target.LogEnds(ctx, tps)
	if err != nil {
		e.o.Log.DebugContext(ctx, "target log ends not read before adopting; each partition settles on its own", "pipeline", e.o.Pipeline,
			"partitions", len(tps), "error", err)
		return nil
	}
	second := first // without TakeoverSettle, one look (settle's first read)
	if e.o.TakeoverSettle > 0 {
		if !backoff.Sleep(ctx, e.o.TakeoverSettle) {
			return nil
		}
		if second, err = e.o.Target.LogEnds(ctx, tps); err != nil {
			return nil
		}
	}
	var hwms map[catchup.Partition]int64
	if e.o.ReplicationWait > 0 {
		if hwms, err = e.o.Target.EndOffsets(ctx, tps); err != nil {
			return nil
		}
	}
	settled := make(map[catchup.Partition]bool, len(tps))
	for _, tp := range tps {
		a, ok := first[tp]
		b, ok2 := second[tp]
		if !ok || !ok2 || a.End != b.End || a.Epoch != b.Epoch {
			continue
		}
		if hwm, ok := hwms[tp]; e.o.ReplicationWait > 0 && (!ok || hwm < b.End) {
			continue
		}
		settled[tp] = true
	}
	e.o.Log.InfoContext(ctx, "target partitions without a checkpoint settled at once", "pipeline", e.o.Pipeline,
		"partitions", len(tps), "settled", len(settled), "waited", e.o.TakeoverSettle)
	return settled
}

// targetPartition is the target partition p is copied to.
func (e *Engine) targetPartition(p catchup.Partition) catchup.Partition {
	return catchup.Partition{Topic: e.o.TargetTopic(p.Topic), Partition: p.Partition}
}

// adoptBatches bounds how many target batches adopt reads back, from the
// end down, looking for a copy of the partition.
const adoptBatches = anchorBatches

// adopt is the reconciliation of a partition the store holds no checkpoint
// of: a store lost, recreated, restored from before the partition's first
// commit or pointed elsewhere, a renamed pipeline. The store cannot vouch
// that nothing was copied, so the target is the truth. An empty target
// partition (its end, read at plan time with the others, is 0) costs
// nothing more. Otherwise adopt waits, as a takeover does, until what was
// appended is visible (settle: a killed run's last request, a stalled
// follower), reads the target's tail back, and returns pl planned again as
// if the checkpoint were after the last copy of pc.p found there, with
// adopted true; a window that starts later stays when its start was chosen
// (start_offsets, a start time, a backfill job). A tail without such a copy
// fails the partition with catchup.ErrTargetAhead, unless the start was
// chosen or Options.AllowDuplicates: the target was written by someone
// else, or without provenance, and where the copy stands is not known.
func (pc *partitionCopy) adopt(ctx context.Context, m catchup.Offsets, pol plan.Policy, pl plan.Planned) (_ plan.Planned, adopted bool, _ error) {
	var (
		last, end int64
		found     bool
		ordered   = true
	)
	_, explicit := pc.e.o.Policy.StartOffsets[pc.p]
	chosen := explicit || pol.Start == plan.Timestamp
	err := pc.retry(ctx, func() (err error) {
		if end, err = pc.targetEndOffset(ctx); err != nil {
			return err
		}
		if end <= 0 {
			// Nothing visible; but a follower that stalled before the
			// first copy was replicated leaves the high watermark at 0
			// over a leader's log that holds them.
			if le, err := pc.leaderEnd(ctx); err != nil || le <= 0 {
				return err
			}
		}
		if pc.presettled {
			pc.presettled = false // once: a retry settles on its own
		} else if err := pc.settle(ctx); err != nil {
			return err
		}
		if end, err = pc.targetEndOffset(ctx); err != nil {
			return err
		}
		batches := adoptBatches
		if pc.e.o.LoopCluster != "" && !chosen {
			// Active-active: the target's own producers may have written
			// any number of batches since the last copy.
			batches = 0
		}
		last, found, ordered, err = pc.tailCopies(ctx, end, batches)
		if err != nil {
			return fmt.Errorf("read back %s for the copies of %s: %w", pc.targetPartition(), pc.p, err)
		}
		return nil
	})
	if err != nil || end <= 0 {
		pc.targetEnd = max(end, pc.targetEnd)
		return pl, false, err
	}
	pc.targetEnd = end
	if !found {
		if pc.e.o.LoopCluster != "" && !chosen && !pc.e.o.AllowDuplicates {
			// Active-active: the target has producers of its own, and
			// records that are not copies are its normal tail.
			pc.e.o.Log.WarnContext(ctx, "partition without a checkpoint: no copy of it in the target's tail; copying from the start policy",
				"pipeline", pc.e.o.Pipeline, "topic", pc.p.Topic, "partition", pc.p.Partition, "target_end", end, "from", pl.From)
		}
		if chosen || pc.e.o.AllowDuplicates || pc.e.o.LoopCluster != "" {
			return pl, false, nil
		}
		return pl, false, pc.targetAhead(end, pol)
	}
	if chosen && last+1 <= pc.next {
		return pl, false, nil // the chosen start is past every copy
	}
	if !ordered && !chosen && !pc.e.o.AllowDuplicates {
		return pl, false, pc.copiesOutOfOrder(end, last)
	}
	pc.e.o.Log.InfoContext(ctx, "partition without a checkpoint resumes after its last copy in the target", "pipeline", pc.e.o.Pipeline,
		"topic", pc.p.Topic, "partition", pc.p.Partition, "next", last+1, "planned_from", pl.From, "target_end", end)
	adoptedPlan := plan.Window(m, checkpoint.Checkpoint{Partition: pc.p, Exists: true, Next: last + 1}, pol)
	if n := adoptedPlan.From - pl.From; n > 0 {
		pc.res.Skipped += n
	}
	pc.res.Reconciled++
	return adoptedPlan, true, nil
}

// tailCopies reads the target partition back from end down, one batch at a
// time, at most batches of them (0: down to its start), and returns the
// source offset of the last copy of pc.p there (the first found from the
// end) and whether the copies it read name ever lower source offsets going
// down, as one pipeline's copies do. Under a limit it reads on past the
// last copy, up to the limit, for the order; without one it stops there. A
// copy of a higher source offset below a lower one means a second writer
// of the same source partition (a backfill job, a run with
// --allow-duplicates, a source topic recreated): the copy found last need
// not be where this pipeline stood, and resuming after it could copy twice,
// or skip.
func (pc *partitionCopy) tailCopies(ctx context.Context, end int64, batches int) (last int64, found, ordered bool, _ error) {
	tp := pc.targetPartition()
	ordered = true
	below := int64(math.MaxInt64) // the source offset of the copy read before, higher in the target
	for n := 0; end > 0 && (batches == 0 || n < batches); n++ {
		recs, base, err := pc.e.o.Target.ReadBack(ctx, tp, end)
		if err != nil {
			return 0, false, false, err
		}
		for i := len(recs) - 1; i >= 0; i-- {
			if recs[i].Offset >= end {
				continue
			}
			off, ok := catchup.SourceOffset(&recs[i], pc.e.o.Cluster, pc.p)
			if !ok || off >= pc.stop {
				continue
			}
			if !found {
				last, found = off, true
			}
			if off > below {
				return last, found, false, nil
			}
			below = off
		}
		if found && batches == 0 || base >= end {
			break
		}
		end = base
	}
	return last, found, ordered, nil
}

// copiesOutOfOrder is the error of a partition without a checkpoint whose
// target tail holds copies of it out of source order (copiesInOrder).
func (pc *partitionCopy) copiesOutOfOrder(end, last int64) error {
	tp := pc.targetPartition()
	return fmt.Errorf("%s: the checkpoint store holds no checkpoint for it, and the last records of target partition %s "+
		"(end offset %d) hold copies of it out of source order (the last is of source offset %d, and an earlier one of a higher "+
		"offset): a second writer of this source partition, such as a backfill job, so where this pipeline's copy stands is not "+
		"known. Nothing was copied. Choose where the copy resumes: `catchup reset --pipeline %s --topic %s --partition %d --to OFFSET` "+
		"(the next source offset to copy), or set start_offsets, or run with --allow-duplicates to copy from the start policy: %w",
		pc.p, tp, end, last, pc.e.o.Pipeline, pc.p.Topic, pc.p.Partition, catchup.ErrTargetAhead)
}

// targetAhead is the error of a partition without a checkpoint whose target
// partition holds end records, none of them in its tail a copy of it: where
// to copy from must be chosen.
func (pc *partitionCopy) targetAhead(end int64, pol plan.Policy) error {
	tp := pc.targetPartition()
	how := fmt.Sprintf("its last records carry no provenance header of source cluster %q for it", pc.e.o.Cluster)
	if !pc.e.o.Provenance {
		how = "provenance is off, so the target cannot say how far it was copied"
	}
	return fmt.Errorf("%s: the checkpoint store holds no checkpoint for it, but target partition %s already holds records "+
		"(end offset %d), and %s: a lost, new or restored store, a renamed pipeline, or another writer. Nothing was copied. "+
		"Choose where the copy resumes: `catchup reset --pipeline %s --topic %s --partition %d --to OFFSET` (the next source offset "+
		"to copy; `latest` takes the target as complete), or set start_offsets, or run with --allow-duplicates to copy from "+
		"the start policy (%s) and accept copies twice: %w",
		pc.p, tp, end, how, pc.e.o.Pipeline, pc.p.Topic, pc.p.Partition, startName(pol.Start), catchup.ErrTargetAhead)
}

// startName names a start policy as the configuration spells it.
func startName(k plan.StartKind) string {
	switch k {
	case plan.Latest:
		return "start: latest"
	case plan.Timestamp:
		return "a start time"
	}
	return "start: earliest"
}
