package replicate

import (
	"context"
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
