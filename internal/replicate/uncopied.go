package replicate

// The results of the partitions a run does not copy: gone, idle, not
// started, or leased by another run.

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/plan"
)

// gone returns a failed result for every stored checkpoint of a selected
// topic the source no longer has (deleted, or the source is another
// cluster), sorted by topic and partition. Such a topic is not listed, so
// without this a run would copy nothing of it and report success while its
// checkpoints wait. A run restricted to Options.Partitions has none.
func (e *Engine) gone(marks []catchup.Offsets, cps map[catchup.Partition]checkpoint.Checkpoint) []Result {
	if e.o.Partitions != nil {
		return nil
	}
	listed := map[string]bool{}
	for _, m := range marks {
		listed[m.Topic] = true
	}
	var out []Result
	for p, cp := range cps {
		if listed[p.Topic] || !e.o.Match(p.Topic) || !cp.Exists {
			continue
		}
		out = append(out, Result{Partition: p, Status: StatusFailed, From: cp.Next, To: cp.Next, End: cp.Next, Next: cp.Next,
			Err: fmt.Errorf("%s: source topic %s is gone, but pipeline %s holds its checkpoints (next offset %d): "+
				"if it is to come back, recreate it and run `catchup reset --pipeline %s --topic %s --to earliest --allow-duplicates` "+
				"to copy the new topic from its start; if it is gone for good, add it to topics.exclude: %w",
				p, p.Topic, e.o.Pipeline, cp.Next, e.o.Pipeline, p.Topic, ErrSourceTopicGone)})
	}
	slices.SortFunc(out, func(a, b Result) int {
		if c := cmp.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return cmp.Compare(a.Partition.Partition, b.Partition.Partition)
	})
	return out
}

// ErrSourceTopicGone is wrapped by the error of a partition whose source
// topic no longer exists while the store holds its checkpoint.
var ErrSourceTopicGone = errors.New("source topic gone, checkpoints remain")

// idle returns the result of a partition that needs no work at all, and
// true, when its window is empty and its checkpoint is clean: committed
// before (so there is no start to record), no owner (no dead run's lease to
// take over, nothing in doubt: a run in doubt keeps its lease), no error
// recorded (a commit would clear it) and no gap or plan error. Such a
// partition is not leased, not reconciled with the target and not
// anchor-checked: nothing is fetched, produced or committed, so there is
// nothing to fence or reconcile, and the checks that guard a copy (the
// anchor check of a recreated source topic, the reconciliation with the
// target) run on the first run whose window is not empty, before it copies.
func idle(m catchup.Offsets, pol plan.Policy, cp checkpoint.Checkpoint) (Result, bool) {
	if !cp.Exists || cp.Owner != "" || cp.LastError != "" {
		return Result{}, false
	}
	pl := plan.Window(m, cp, pol)
	if pl.Err != nil || pl.Gap != nil || pl.From != pl.To || pl.From != cp.Next {
		return Result{}, false
	}
	return Result{Partition: m.Partition, Status: StatusDone, From: pl.From, To: pl.To, Next: cp.Next}, true
}

// untouched is the result, with status st and error err, of a partition
// the run did nothing to (not started before the deadline, leased by
// another run, its target topic unusable): the window it would have copied,
// which is the lag it leaves, and its checkpoint where it was. Its lag then
// counts in the report, the Lambda summary and the time figures
// (timeFigures reads the oldest record of every partition with lag), like
// that of a partition the run began.
func untouched(m catchup.Offsets, pol plan.Policy, cp checkpoint.Checkpoint, st Status, err error) Result {
	pl := plan.Window(m, cp, pol)
	return Result{Partition: m.Partition, Status: st, Err: err, From: pl.From, To: pl.To, End: pl.End, Next: pl.From}
}

// leased is the result of a partition whose Acquire failed with err, which
// wraps checkpoint.ErrLeased: the window it would have copied (what is left)
// and the lease's holder and expiry, from err where the store says, else as
// the survey read them in loaded.
func (e *Engine) leased(m catchup.Offsets, pol plan.Policy, loaded checkpoint.Checkpoint, err error) Result {
	res := untouched(m, pol, loaded, StatusLeased, nil)
	res.LeaseOwner, res.LeaseExpires = loaded.Owner, loaded.Expires
	if le := (*checkpoint.LeasedError)(nil); errors.As(err, &le) {
		res.LeaseOwner, res.LeaseExpires = le.Owner, le.Expires
	}
	res.Err = fmt.Errorf("%s is leased by %s until %s: another run is copying it, or a run that died holds it "+
		"until then; run again then, or, if that run is dead, as its owner (catchup run --owner %s)", m.Partition, res.LeaseOwner,
		res.LeaseExpires.UTC().Format(time.RFC3339), res.LeaseOwner)
	e.o.Log.Warn("partition leased by another run", "pipeline", e.o.Pipeline, "topic", m.Topic,
		"partition", m.Partition.Partition, "lease_owner", res.LeaseOwner, "lease_expires", res.LeaseExpires, "lag", res.Lag())
	return res
}
