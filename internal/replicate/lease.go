package replicate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kafka-catchup/catchup/internal/checkpoint"
)

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

// commitProgress writes the checkpoint now if there is something new to
// write: the start and the target end before the first produce, a gap
// skipped, a window that reached its bytes.
func (pc *partitionCopy) commitProgress() error {
	return pc.storeCommit(pc.e.o.Now(), nil, false)
}

// commitIfDue is commitProgress once CommitInterval has passed since the
// last commit, and nothing otherwise: the commits made while copying.
func (pc *partitionCopy) commitIfDue() error {
	now := pc.e.o.Now()
	if now.Sub(pc.lastCommit) < pc.e.o.CommitInterval {
		return nil
	}
	return pc.storeCommit(now, nil, false)
}

// commitAndRelease is a run's last commit: it records what was copied and
// cause, the error that ended the run (nil: none), and frees the lease in
// the same write (checkpoint.Commit.Release). The copy is then released.
func (pc *partitionCopy) commitAndRelease(cause error) error {
	return pc.storeCommit(pc.e.o.Now(), cause, true)
}

// keepInDoubt is the last commit of a run in doubt: it records what was
// acknowledged and cause, and keeps the lease, so that the next run takes it
// over and settles before it reconciles (see settle).
func (pc *partitionCopy) keepInDoubt(cause error) error {
	return pc.storeCommit(pc.e.o.Now(), cause, false)
}

// storeCommit writes the checkpoint, as of now, if there is something new
// to write: what was copied since the last commit and cause (its message
// is stored as the checkpoint's last error); with release it frees the
// lease in the same write.
func (pc *partitionCopy) storeCommit(now time.Time, cause error, release bool) error {
	if pc.next == pc.committedNext && pc.targetEnd == pc.committedTargetEnd && pc.pendGap == nil &&
		pc.pendRecords == 0 && cause == nil {
		return nil
	}
	if pc.committedNext < 0 && pc.pendRecords == 0 && (cause != nil || pc.unvouched) {
		// A partition that failed, or stopped before the target said where
		// its copy stands, before its first commit keeps no checkpoint, so
		// that the next run starts by the start policy again, or reads the
		// target back again.
		return nil
	}
	c := checkpoint.Commit{Next: pc.next, TargetEnd: pc.targetEnd, Records: pc.pendRecords, Bytes: pc.pendBytes, Gap: pc.pendGap,
		Start: pc.start, Release: release}
	if cause != nil {
		c.Error = cause.Error()
	}
	sctx, cancel := pc.storeCall()
	defer cancel()
	if err := pc.e.o.Store.Commit(sctx, pc.lease, c); err != nil {
		return fmt.Errorf("commit %s at %d: %w", pc.p, pc.next, err)
	}
	if release {
		pc.enter(stateReleased)
	}
	pc.start = nil
	pc.committedNext, pc.committedTargetEnd = pc.next, pc.targetEnd
	pc.pendRecords, pc.pendBytes, pc.pendGap = 0, 0, nil
	pc.lastCommit = now
	return nil
}

// release frees the lease of a run whose last commit did not (it had
// nothing to write, or it failed, or the copy was fenced): a lease another
// run took meanwhile is not an error.
func (pc *partitionCopy) release(ctx context.Context) {
	rctx, cancel := pc.storeCall()
	defer cancel()
	err := pc.e.o.Store.Release(rctx, pc.lease)
	switch {
	case err == nil:
		pc.enter(stateReleased)
	case !errors.Is(err, checkpoint.ErrFenced):
		pc.e.o.Log.WarnContext(ctx, "lease not released", "pipeline", pc.e.o.Pipeline, "topic", pc.p.Topic,
			"partition", pc.p.Partition, "error", err)
	}
}
