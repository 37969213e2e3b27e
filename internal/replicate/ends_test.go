package replicate

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
)

// TestTargetEndsReadOncePerRun pins the target end-offset reads of a run to
// one call for all the partitions it copies (one ListOffsets request per
// target broker), not one per partition: the first run, where every
// partition reconciles, and an all-active run.
func TestTargetEndsReadOncePerRun(t *testing.T) {
	parts := map[catchup.Partition]int{pA: 5, pB: 5, pC: 5}
	r := newRig(parts)
	for _, tc := range []struct {
		name   string
		before func()
	}{
		{name: "first run"},
		{name: "all active", before: func() {
			for p := range parts {
				r.appendRecords(p, 2)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.before != nil {
				tc.before()
			}
			target := &countingTarget{Target: r.dst}
			o := r.options("run")
			o.Target = target
			for _, res := range r.run(t, t.Context(), o).Partitions {
				if res.Status != StatusDone {
					t.Errorf("%s: status %s err %v, want done", res.Partition, res.Status, res.Err)
				}
			}
			if n := target.endOffsets.Load(); n != 1 {
				t.Errorf("target end offsets read %d times for %d partitions, want once", n, len(parts))
			}
		})
	}
	r.checkExactCopy(t)
}

// racingStore runs other, once, just before the first Acquire of p: another
// run that takes, uses and releases the lease between the survey and the
// acquire.
type racingStore struct {
	checkpoint.Store
	p     catchup.Partition
	other func(ctx context.Context)
	once  sync.Once
}

func (s *racingStore) Acquire(ctx context.Context, pipeline string, p catchup.Partition, owner string, ttl time.Duration) (checkpoint.Lease, checkpoint.Checkpoint, error) {
	if p == s.p {
		s.once.Do(func() { s.other(ctx) })
	}
	return s.Store.Acquire(ctx, pipeline, p, owner, ttl)
}

// TestSurveyedEndNotUsedAfterAnotherRun: when another run copies a
// partition between this run's plan-time read of the target end and its
// acquire, the end read at plan time is stale (below the end the other run
// committed) and must be read again; used, it looks like a truncated target.
func TestSurveyedEndNotUsedAfterAnotherRun(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 5, pB: 5})
	r.run(t, t.Context(), r.options("first"))
	r.appendRecords(pA, 3)

	o := r.options("late")
	o.Store = &racingStore{Store: r.store, p: pA, other: func(ctx context.Context) {
		oo := r.options("other")
		oo.Partitions = []catchup.Partition{pA}
		if res := r.run(t, ctx, oo).Partitions[0]; res.Status != StatusDone || res.Copied != 3 {
			t.Errorf("the other run: status %s copied %d err %v, want done and 3", res.Status, res.Copied, res.Err)
		}
	}}
	for _, res := range r.run(t, t.Context(), o).Partitions {
		if res.Status != StatusDone || res.Copied != 0 {
			t.Errorf("%s: status %s copied %d err %v, want done and 0 (the other run copied them)", res.Partition, res.Status, res.Copied, res.Err)
		}
	}
	r.checkExactCopy(t)
}

// TestEmptyWindowLogsAtDebug: at 10,000 partitions a first run would print
// a line for each empty window; those are debug, a window with records is info.
func TestEmptyWindowLogsAtDebug(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 3, pB: 0})
	var out bytes.Buffer
	o := r.options("run")
	o.Log = slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelInfo}))
	r.run(t, t.Context(), o)
	lines := strings.Count(out.String(), "window copied")
	if lines != 1 || !strings.Contains(out.String(), "partition=0") {
		t.Errorf("info log has %d \"window copied\" lines, want 1 (partition a/0, the one with records):\n%s", lines, out.String())
	}
}
