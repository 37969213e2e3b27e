package crashtest

import (
	"context"
	"errors"
	"maps"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// A kill is aimed at one moment of a child's run, and fired by an event the
// harness observes rather than by a delay that may or may not reach it:
//
//	start-up   the child's first request to the source (the plan's survey):
//	           no partition is leased yet
//	leased     the child's first produce request to the target, which the
//	           target holds until the child is dead and then drops
//	           unanswered and unwritten: leases taken, reconciliation done,
//	           nothing written
//	writing    the child's kth produce request (k from 1 to 3), let through
//	           once the child is dead: written, maybe committed before
//	after a    a commit of the run seen in the store, once the target
//	commit     also grew (polled)
//	random     a delay drawn as before aiming (killLoop), so that kills
//	           also land at moments no event marks
//
// Without a kfake target (the replicated target) the leased and writing
// moments are polled too: a lease of the run in the store, a target end
// offset that grew. What a kill really hit is still judged afterwards from
// the store and the target (classify), and the next aim goes to the moment
// with the fewest kills so far, so every moment gets its share.
type phase int

const (
	phaseStartup phase = iota
	phaseLeased
	phaseWriting
	phaseCommitted
	phaseRandom
)

func (p phase) String() string {
	return [...]string{"start-up", "leased", "writing", "after a commit", "random"}[p]
}

// pollEvery is how often the polled moments look at the store or the target.
const pollEvery = 5 * time.Millisecond

// errHeld closes the connection of a produce request held for a kill.
var errHeld = errors.New("crashtest: produce request held for a kill, dropped")

// aim is the kill planned for one child.
type aim struct {
	phase     phase
	c         *child
	atProduce int64        // writing: kill at this produce request of the child
	produces  atomic.Int64 // produce requests of the child seen by the target
	fired     chan struct{}
	once      sync.Once
}

// kill sends SIGKILL to the child, once, and marks the aim fired.
func (a *aim) kill() {
	a.once.Do(func() {
		_ = a.c.cmd.Process.Signal(syscall.SIGKILL)
		close(a.fired)
	})
}

// nextPhase picks the moment of kill number i (counting kills and runs
// that ended before their kill): every fifth a random one, otherwise the
// moment that has the fewest kills so far.
func (h *harness) nextPhase(i int) phase {
	if i%5 == 4 {
		return phaseRandom
	}
	counts := []int{h.killedStartup, h.killedLeased, h.killedWriting, h.killedAfterCommit}
	best := phase(i % len(counts))
	for k := range counts {
		p := phase((i + k) % len(counts))
		if counts[p] < counts[best] {
			best = p
		}
	}
	return best
}

// installAim puts the controls that fire aims into the clusters: on every
// request to the source, and on every produce request to a kfake target.
// They act only while h.armed holds an aim.
func (h *harness) installAim() {
	h.src.Control(func(kmsg.Request) (kmsg.Response, error, bool) {
		h.src.KeepControl()
		if a := h.armed.Load(); a != nil && a.phase == phaseStartup {
			a.kill()
		}
		return nil, nil, false
	})
	if h.dst == nil {
		return
	}
	h.dst.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		h.dst.KeepControl()
		a := h.armed.Load()
		if a == nil {
			return nil, nil, false
		}
		switch a.phase {
		case phaseLeased:
			// This and every later produce request of the child: the
			// connection is closed and nothing is written.
			a.kill()
			return nil, errHeld, true
		case phaseWriting:
			if a.produces.Add(1) >= a.atProduce {
				a.kill() // before the broker appends: the child sees no answer
			}
		}
		return nil, nil, false
	})
}

// arm plans the kill of c at p and returns the channel that is closed when
// the kill was sent, and a function that stops the polling (to call once
// c has exited). before holds the target ends and store counts read before
// c started.
func (h *harness) arm(ctx context.Context, c *child, p phase, before map[catchup.Partition]int64, leases, commits int64) (<-chan struct{}, func()) {
	a := &aim{phase: p, c: c, atProduce: 1 + h.rng.Int64N(3), fired: make(chan struct{})}
	h.armed.Store(a)
	pollCtx, stop := context.WithCancel(ctx)
	wrote := func() bool {
		ends, err := h.dstAdmin.EndOffsets(pollCtx, allPartitions())
		return err == nil && !maps.Equal(ends, before)
	}
	var poll func() bool
	switch {
	case p == phaseCommitted:
		// A commit with a write of the run: a run also commits without
		// writing (the position reconciliation found, a window of aborted
		// records only).
		poll = func() bool { _, n, ok := h.peekCounts(pollCtx); return ok && n > commits && wrote() }
	case p == phaseLeased && h.dst == nil:
		poll = func() bool { n, _, ok := h.peekCounts(pollCtx); return ok && n > leases }
	case p == phaseWriting && h.dst == nil:
		poll = wrote
	}
	var wg sync.WaitGroup
	if poll != nil {
		wg.Go(func() {
			tick := time.NewTicker(pollEvery)
			defer tick.Stop()
			for {
				select {
				case <-pollCtx.Done():
					return
				case <-tick.C:
				}
				if poll() {
					a.kill()
					return
				}
			}
		})
	}
	return a.fired, func() {
		stop()
		wg.Wait()
		h.armed.Store(nil)
	}
}

// peekCounts returns storeCounts of the store as it is now, while a child
// may be writing it; ok is false when it cannot be read at this instant.
func (h *harness) peekCounts(ctx context.Context) (leases, commits int64, ok bool) {
	cps, err := h.loadStore(ctx)
	if err != nil {
		return 0, 0, false
	}
	leases, commits = storeCounts(cps)
	return leases, commits, true
}
