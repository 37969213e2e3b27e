package replicate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/plan"
)

// grow appends n records to partition p of c, as a producer would.
func (c *fakeCluster) grow(p catchup.Partition, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.logs[p]
	for range n {
		i := c.end(p)
		l.recs = append(l.recs, catchup.Record{
			Offset: i, Key: []byte{byte(i)}, Value: []byte(p.String()),
			Timestamp: time.UnixMilli(1_700_000_000_000 + i),
		})
	}
}

// copiesOf returns, by source offset of p, how many copies the target holds.
func (r *rig) copiesOf(p catchup.Partition) map[int64]int {
	r.dst.mu.Lock()
	defer r.dst.mu.Unlock()
	out := map[int64]int{}
	for i := range r.dst.logs[p].recs {
		if off, ok := catchup.SourceOffset(&r.dst.logs[p].recs[i], "src", p); ok {
			out[off]++
		}
	}
	return out
}

// checkCopiedOnce fails unless the target holds exactly one copy of each
// source offset of p in [from, the source end), and none other.
func (r *rig) checkCopiedOnce(t *testing.T, p catchup.Partition, from int64) {
	t.Helper()
	r.src.mu.Lock()
	end := r.src.end(p)
	r.src.mu.Unlock()
	copies := r.copiesOf(p)
	var lost, dup []int64
	for off := from; off < end; off++ {
		switch n := copies[off]; {
		case n == 0:
			lost = append(lost, off)
		case n > 1:
			dup = append(dup, off)
		}
		delete(copies, off)
	}
	if len(lost) > 0 || len(dup) > 0 || len(copies) > 0 {
		t.Errorf("%s: %d lost %v, %d duplicated %v, %d outside [%d, %d); want each copied once",
			p, len(lost), lost, len(dup), dup, len(copies), from, end)
	}
}

// TestLostStoreResumesAfterTheTargetsCopies: when the store holds no
// checkpoint of a partition whose target already holds its copies (a store
// lost or new, a renamed pipeline), the run reads the target back and
// resumes after the last copy, under every start policy; without the
// read-back (today's behaviour before it) the same run copied each record
// a second time (earliest) or skipped the records written while the store
// was gone (latest).
func TestLostStoreResumesAfterTheTargetsCopies(t *testing.T) {
	for _, tc := range []struct {
		name   string
		start  plan.StartKind
		rename bool
	}{
		{"earliest, store lost", plan.Earliest, false},
		{"latest, store lost", plan.Latest, false},
		{"earliest, pipeline renamed", plan.Earliest, true},
		{"timestamp, store lost", plan.Timestamp, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(map[catchup.Partition]int{pA: 10, pB: 10})
			o := r.options("first")
			o.Policy.Start = tc.start
			from := int64(0)
			if tc.start == plan.Latest {
				// Begun at 10; the next 7 records are copied.
				r.run(t, t.Context(), o)
				r.src.grow(pA, 7)
				r.src.grow(pB, 7)
				from = 10
			}
			r.run(t, t.Context(), o)
			r.src.grow(pA, 5)
			r.src.grow(pB, 5)
			// The store is lost: a new one, empty.
			r.store = checkpoint.NewMemStore(r.clock.now)
			o = r.options("second")
			o.Policy.Start = tc.start
			if tc.rename {
				o.Pipeline = "p2"
			}
			rep := r.run(t, t.Context(), o)
			for _, res := range rep.Partitions {
				if res.Status != StatusDone || res.Copied != 5 {
					t.Errorf("%s: status %s, %d copied, err %v; want done, the 5 new records", res.Partition, res.Status, res.Copied, res.Err)
				}
			}
			r.checkCopiedOnce(t, pA, from)
			r.checkCopiedOnce(t, pB, from)
			// The next run has a checkpoint: nothing more to read back.
			r.src.grow(pA, 1)
			rep = r.run(t, t.Context(), o)
			if res := rep.Partitions[0]; res.Status != StatusDone || res.Copied != 1 || res.Reconciled != 0 {
				t.Errorf("run after: %s %d copied, %d reconciled, err %v; want done, 1, 0", res.Status, res.Copied, res.Reconciled, res.Err)
			}
			r.checkCopiedOnce(t, pA, from)
		})
	}
}

// TestLostStoreWaitsForReplication: a run killed with its last request
// appended but not replicated (a follower stalled) and its store lost: the
// next run, which finds no checkpoint and no lease, still waits for the
// target's high watermark to reach its log end before it reads back, so the
// invisible records are found, not copied again; without the wait
// (ReplicationWait 0) the same stall duplicates them.
func TestLostStoreWaitsForReplication(t *testing.T) {
	for _, tc := range []struct {
		name string
		wait time.Duration
		dups int
	}{
		{"with the wait", time.Second, 0},
		{"no wait", 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(map[catchup.Partition]int{pA: 10})
			deadRunInFlight(t, r)
			r.store = checkpoint.NewMemStore(r.clock.now)
			r.dst.onLogEnd = replicateAfter(3)
			if tc.wait == 0 {
				r.catchUpOnFirstProduce()
			}
			o := r.options("heir")
			o.ReplicationWait = tc.wait
			if res := r.run(t, t.Context(), o).Partitions[0]; res.Status != StatusDone {
				t.Fatalf("heir: status %s err %v; want done", res.Status, res.Err)
			}
			r.checkDuplicates(t, 10, tc.dups)
		})
	}
}

// TestLostStoreNothingReplicatedYet: a run killed with every request it
// sent appended by the target's leader but none replicated (a follower
// stalled before the first one), and its store lost. The target's high
// watermark is 0, as for a partition never written to, but its leader's log
// is not empty: the next run must wait for the copies to become visible and
// resume after them (provenance), or fail closed (provenance off), never take
// the partition for empty and copy it again. Without the wait
// (ReplicationWait 0) the high watermark is taken for the end, and the copies
// are duplicated, as docs/configuration.md says of replication_wait: 0.
func TestLostStoreNothingReplicatedYet(t *testing.T) {
	for _, tc := range []struct {
		name       string
		provenance bool
		wait       time.Duration
		dups       int
		ahead      bool // fails with ErrTargetAhead
	}{
		{"provenance, with the wait", true, time.Second, 0, false},
		{"provenance, with the wait, no survey", true, time.Second, 0, false},
		{"provenance, no wait", true, 0, 4, false},
		{"provenance off, with the wait", false, time.Second, 0, true},
		{"provenance off, with the wait, no survey", false, time.Second, 0, true},
		{"provenance off, no wait", false, 0, 4, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(map[catchup.Partition]int{pA: 10})
			r.dst.mu.Lock()
			r.dst.logs[pA].stalledAt = 0
			r.dst.mu.Unlock()
			var stamp *catchup.Provenance
			if tc.provenance {
				stamp = &catchup.Provenance{Cluster: "src", Partition: pA}
			}
			for _, w := range [][2]int{{0, 2}, {2, 4}} {
				if n, _, err := r.dst.Produce(t.Context(), pA, slices.Clone(r.src.logs[pA].recs[w[0]:w[1]]), stamp); err != nil || n != w[1]-w[0] {
					t.Fatalf("dead run's request: %d, %v", n, err)
				}
			}
			r.dst.onLogEnd = replicateAfter(3)
			if tc.wait == 0 {
				r.catchUpOnFirstProduce()
			}
			o := r.options("heir")
			o.Provenance, o.ReplicationWait = tc.provenance, tc.wait
			if strings.HasSuffix(tc.name, "no survey") {
				// The plan-time read of the log ends failed: the partition reads its own.
				o.Target = noLogEndsTarget{r.dst}
			}
			res := r.run(t, t.Context(), o).Partitions[0]
			if tc.ahead {
				if res.Status != StatusFailed || !errors.Is(res.Err, catchup.ErrTargetAhead) {
					t.Fatalf("heir: status %s err %v; want failed with ErrTargetAhead", res.Status, res.Err)
				}
				r.dst.mu.Lock()
				n := len(r.dst.logs[pA].recs)
				r.dst.mu.Unlock()
				if n != 4 {
					t.Errorf("target holds %d records; want the dead run's 4, nothing copied", n)
				}
				return
			}
			if res.Status != StatusDone {
				t.Fatalf("heir: status %s err %v; want done", res.Status, res.Err)
			}
			r.checkDuplicates(t, 10, tc.dups)
		})
	}
}

// TestLostStoreSettlesAtOnce: a run over partitions without a checkpoint
// settles their target partitions together (one wait, not one per
// partition), and a partition whose log end or leader moved during that
// wait settles on its own. Here a dead run's last two requests to pB land
// late: the first between the shared looks, the second at pB's next look
// at its log end, or, had the run taken pB for still, at its first
// produce, after the read-back, where it would duplicate source offset 11.
// pC's leader changes between the shared looks.
func TestLostStoreSettlesAtOnce(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 10, pB: 10, pC: 10})
	r.run(t, t.Context(), r.options("first"))
	for _, p := range []catchup.Partition{pA, pB, pC} {
		r.src.grow(p, 5)
	}
	r.store = checkpoint.NewMemStore(r.clock.now) // the store is lost
	var late []catchup.Record                     // the dead run's copies of pB's offsets 10 and 11
	for _, rec := range r.src.logs[pB].recs[10:12] {
		rec.Headers = []catchup.Header{{Key: catchup.ProvenanceHeader,
			Value: catchup.AppendProvenance(nil, catchup.Provenance{Cluster: "src", Partition: pB, Offset: rec.Offset})}}
		late = append(late, rec)
	}
	land := func(l *fakeLog) { // under r.dst.mu
		if len(late) == 0 {
			return
		}
		rec := late[0]
		rec.Offset = l.start + int64(len(l.recs))
		l.batches, l.recs, late = append(l.batches, rec.Offset), append(l.recs, rec), late[1:]
	}
	looks := map[catchup.Partition]int{}
	var lookedAt []time.Time // pA's looks
	r.dst.onLogEnd = func(p catchup.Partition, l *fakeLog) {
		looks[p]++
		switch {
		case p == pA:
			lookedAt = append(lookedAt, time.Now())
		case p == pB && looks[p] >= 2:
			land(l)
		case p == pC && looks[p] == 2:
			l.epoch++ // a new leader, the log as it was
		}
	}
	r.dst.produceFault = func(p catchup.Partition, _ int64) (bool, error) {
		if p == pB {
			r.dst.mu.Lock()
			land(r.dst.logs[pB])
			r.dst.mu.Unlock()
		}
		return false, nil
	}
	r.dst.mu.Lock()
	r.dst.logEndBatches = 0 // the first run's, over empty targets
	r.dst.mu.Unlock()
	o := r.options("second")
	o.TakeoverSettle = 20 * time.Millisecond
	rep := r.run(t, t.Context(), o)
	want := map[catchup.Partition]int64{pA: 5, pB: 3, pC: 5}
	for _, res := range rep.Partitions {
		if res.Status != StatusDone || res.Copied != want[res.Partition] {
			t.Errorf("%s: status %s, %d copied, err %v; want done, %d", res.Partition, res.Status, res.Copied, res.Err, want[res.Partition])
		}
	}
	for _, p := range []catchup.Partition{pA, pB, pC} {
		r.checkCopiedOnce(t, p, 0)
	}
	r.dst.mu.Lock()
	defer r.dst.mu.Unlock()
	if r.dst.logEndBatches != 2 || looks[pA] != 2 || looks[pB] < 4 || looks[pC] < 4 {
		t.Errorf("%d batched log end calls; looks at the log end: %d of %s, %d of %s, %d of %s; "+
			"want 2; 2 (the shared settle), 4 or more (its own too), 4 or more", r.dst.logEndBatches, looks[pA], pA, looks[pB], pB, looks[pC], pC)
	}
	if len(lookedAt) == 2 && lookedAt[1].Sub(lookedAt[0]) < o.TakeoverSettle {
		t.Errorf("the shared looks came %v apart; want takeover_settle (%v) or more", lookedAt[1].Sub(lookedAt[0]), o.TakeoverSettle)
	}
}

// TestPresettleWithoutTakeoverSettleLooksOnce: with takeover_settle 0 the
// shared settle only checks that the high watermark reached the log end,
// as settle does: one look at the log ends, not two around no wait.
func TestPresettleWithoutTakeoverSettleLooksOnce(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 10, pB: 10})
	r.run(t, t.Context(), r.options("first"))
	r.src.grow(pA, 5)
	r.src.grow(pB, 5)
	r.store = checkpoint.NewMemStore(r.clock.now)
	r.dst.mu.Lock()
	r.dst.logEndBatches, r.dst.logEnds = 0, 0
	r.dst.mu.Unlock()
	o := r.options("second")
	o.TakeoverSettle = 0
	for _, res := range r.run(t, t.Context(), o).Partitions {
		if res.Status != StatusDone || res.Copied != 5 {
			t.Errorf("%s: status %s, %d copied, err %v; want done, 5", res.Partition, res.Status, res.Copied, res.Err)
		}
	}
	r.checkCopiedOnce(t, pA, 0)
	r.checkCopiedOnce(t, pB, 0)
	r.dst.mu.Lock()
	defer r.dst.mu.Unlock()
	if r.dst.logEndBatches != 1 || r.dst.logEnds != 0 {
		t.Errorf("%d batched log end calls, %d single ones; want 1, 0", r.dst.logEndBatches, r.dst.logEnds)
	}
}

// TestAdoptersSettleWhileOthersCopy: the shared settle of the partitions
// without a checkpoint holds only them: a partition with a checkpoint
// copies meanwhile, as it did when each settled on its own.
func TestAdoptersSettleWhileOthersCopy(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 10, pB: 10})
	r.run(t, t.Context(), r.options("first"))
	r.src.grow(pA, 5)
	r.src.grow(pB, 5)
	// pB's checkpoint is lost; pA's is put back.
	r.store = checkpoint.NewMemStore(r.clock.now)
	if err := r.store.Reset(t.Context(), "p1", pA, 10); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var events []string
	event := func(s string) {
		mu.Lock()
		events = append(events, s)
		mu.Unlock()
	}
	looks := 0
	r.dst.onLogEnd = func(p catchup.Partition, _ *fakeLog) {
		if p == pB {
			looks++
			event(fmt.Sprintf("look %d at %s", looks, pB))
		}
	}
	r.dst.produceFault = func(p catchup.Partition, _ int64) (bool, error) {
		event("produce " + p.String())
		return false, nil
	}
	o := r.options("second")
	o.TakeoverSettle = 200 * time.Millisecond
	for _, res := range r.run(t, t.Context(), o).Partitions {
		if res.Status != StatusDone || res.Copied != 5 {
			t.Errorf("%s: status %s, %d copied, err %v; want done, 5", res.Partition, res.Status, res.Copied, res.Err)
		}
	}
	r.checkCopiedOnce(t, pA, 0)
	r.checkCopiedOnce(t, pB, 0)
	mu.Lock()
	defer mu.Unlock()
	produced := slices.Index(events, "produce "+pA.String())
	second := slices.Index(events, "look 2 at "+pB.String())
	if produced < 0 || second < 0 || produced > second {
		t.Errorf("events %q: want %s produced before the shared settle's second look at %s", events, pA, pB)
	}
}

// TestPresettledAdoptRetrySettles: a partition settled with the others
// whose read-back fails settles on its own before it reads back again:
// the shared settle counts for the first attempt only.
func TestPresettledAdoptRetrySettles(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 10})
	r.run(t, t.Context(), r.options("first"))
	r.src.grow(pA, 5)
	r.store = checkpoint.NewMemStore(r.clock.now)
	looks := 0
	r.dst.onLogEnd = func(catchup.Partition, *fakeLog) { looks++ }
	o := r.options("second")
	o.Target = &failFirstReadBack{Target: r.dst}
	res := r.run(t, t.Context(), o).Partitions[0]
	if res.Status != StatusDone || res.Copied != 5 {
		t.Fatalf("status %s, %d copied, err %v; want done, 5", res.Status, res.Copied, res.Err)
	}
	r.checkCopiedOnce(t, pA, 0)
	if looks < 4 {
		t.Errorf("%d looks at the log end; want 2 shared, then 2 or more of the retry's own settle", looks)
	}
}

// failFirstReadBack is a Target whose first ReadBack fails, retriable.
type failFirstReadBack struct {
	Target
	failed atomic.Bool
}

func (f *failFirstReadBack) ReadBack(ctx context.Context, p catchup.Partition, end int64) ([]catchup.Record, int64, error) {
	if !f.failed.Swap(true) {
		return nil, 0, fmt.Errorf("read back %s: leader moved: %w", p, catchup.ErrRetriable)
	}
	return f.Target.ReadBack(ctx, p, end)
}

// noLogEndsTarget is a Target whose LogEnds fails.
type noLogEndsTarget struct{ Target }

func (noLogEndsTarget) LogEnds(context.Context, []catchup.Partition) (map[catchup.Partition]catchup.LogEnd, error) {
	return nil, fmt.Errorf("log ends: %w", catchup.ErrRetriable)
}

// TestTargetAheadWithoutCopiesFailsClosed: a partition without a checkpoint
// whose target partition holds records that say nothing of how far it was
// copied (another writer's, or copies without provenance) fails closed,
// naming the partition and the command that chooses where to resume, and
// writes nothing, unless the start was chosen (start_offsets),
// --allow-duplicates, or loop prevention says the target has producers of
// its own.
func TestTargetAheadWithoutCopiesFailsClosed(t *testing.T) {
	for _, tc := range []struct {
		name       string
		provenance bool
		opt        func(*Options)
		fails      bool
		copied     int64
	}{
		{"foreign records", true, nil, true, 0},
		{"provenance off", false, nil, true, 0},
		{"foreign records, start_offsets", true, func(o *Options) { o.Policy.StartOffsets = map[catchup.Partition]int64{pA: 6} }, false, 4},
		{"provenance off, start_offsets", false, func(o *Options) { o.Policy.StartOffsets = map[catchup.Partition]int64{pA: 6} }, false, 4},
		{"foreign records, allow duplicates", true, func(o *Options) { o.AllowDuplicates = true }, false, 10},
		{"provenance off, allow duplicates", false, func(o *Options) { o.AllowDuplicates = true }, false, 10},
		{"foreign records, loop prevention", true, func(o *Options) { o.LoopCluster = "dst" }, false, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(map[catchup.Partition]int{pA: 10, pB: 10})
			first := r.options("first")
			first.Provenance = tc.provenance
			if tc.provenance {
				// Another writer filled a/0 of the target.
				if _, _, err := r.dst.Produce(t.Context(), pA, slices.Clone(r.src.logs[pA].recs[:2]), nil); err != nil {
					t.Fatal(err)
				}
			} else {
				// This pipeline copied it, without provenance; the store is lost.
				r.run(t, t.Context(), first)
				r.store = checkpoint.NewMemStore(r.clock.now)
			}
			r.dst.mu.Lock()
			before := len(r.dst.logs[pA].recs)
			r.dst.mu.Unlock()
			o := r.options("second")
			o.Provenance = tc.provenance
			if tc.opt != nil {
				tc.opt(&o)
			}
			rep := r.run(t, t.Context(), o)
			res := rep.Partitions[0]
			if !tc.fails {
				if res.Status != StatusDone || res.Copied != tc.copied {
					t.Fatalf("%s: status %s, %d copied, err %v; want done, %d copied", res.Partition, res.Status, res.Copied, res.Err, tc.copied)
				}
				return
			}
			want := "catchup reset --pipeline p1 --topic a --partition 0 --to OFFSET"
			if res.Status != StatusFailed || !errors.Is(res.Err, catchup.ErrTargetAhead) || !strings.Contains(res.Err.Error(), want) ||
				!strings.Contains(res.Err.Error(), "--allow-duplicates") {
				t.Fatalf("%s: status %s err %v; want failed with ErrTargetAhead naming %q and --allow-duplicates", res.Partition, res.Status, res.Err, want)
			}
			if res.From != 0 || res.To != 10 {
				t.Errorf("%s: window [%d, %d); want the window it would copy, [0, 10)", res.Partition, res.From, res.To)
			}
			r.dst.mu.Lock()
			after := len(r.dst.logs[pA].recs)
			r.dst.mu.Unlock()
			if after != before {
				t.Errorf("target a/0 went from %d to %d records; want nothing written", before, after)
			}
			if cp := r.checkpoints(t)[pA]; cp.Exists || cp.Owner != "" {
				t.Errorf("checkpoint of a/0: %+v; want none, and no lease", cp)
			}
			if b := rep.Partitions[1]; tc.provenance && b.Status != StatusDone {
				t.Errorf("%s (empty target): status %s err %v; want done", b.Partition, b.Status, b.Err)
			}
		})
	}
}

// TestAdoptedCopiesOfARecreatedSourceTopicFailClosed: the target's copies
// claim source offsets the recreated source topic holds other records at
// (refilled past them), or no longer reaches: with the store lost, the
// anchor check and the plan still fail the partition closed.
func TestAdoptedCopiesOfARecreatedSourceTopicFailClosed(t *testing.T) {
	for _, refill := range []int{15, 5} {
		t.Run(fmt.Sprintf("refilled to %d", refill), func(t *testing.T) {
			r := newRig(map[catchup.Partition]int{pA: 10})
			r.run(t, t.Context(), r.options("first"))
			fresh := newFakeCluster(map[catchup.Partition]int{pA: refill})
			for i := range fresh.logs[pA].recs {
				fresh.logs[pA].recs[i].Value = []byte("new topic")
			}
			r.src.logs[pA] = fresh.logs[pA]
			r.store = checkpoint.NewMemStore(r.clock.now)
			res := r.run(t, t.Context(), r.options("second")).Partitions[0]
			if res.Status != StatusFailed || !errors.Is(res.Err, catchup.ErrTopicRecreated) {
				t.Fatalf("status %s err %v; want failed with ErrTopicRecreated", res.Status, res.Err)
			}
			if n := len(r.dst.logs[pA].recs); n != 10 {
				t.Errorf("target holds %d records; want the 10 first copied", n)
			}
		})
	}
}

// readCountingTarget counts every target read a run may make per partition.
type readCountingTarget struct {
	Target
	endOffsets, readBacks, logEnds, logEndBatches atomic.Int64
}

func (t *readCountingTarget) LogEnds(ctx context.Context, ps []catchup.Partition) (map[catchup.Partition]catchup.LogEnd, error) {
	t.logEndBatches.Add(1)
	return t.Target.LogEnds(ctx, ps)
}

func (t *readCountingTarget) EndOffsets(ctx context.Context, ps []catchup.Partition) (map[catchup.Partition]int64, error) {
	t.endOffsets.Add(1)
	return t.Target.EndOffsets(ctx, ps)
}

func (t *readCountingTarget) ReadBack(ctx context.Context, p catchup.Partition, end int64) ([]catchup.Record, int64, error) {
	t.readBacks.Add(1)
	return t.Target.ReadBack(ctx, p, end)
}

func (t *readCountingTarget) LogEnd(ctx context.Context, p catchup.Partition) (catchup.LogEnd, error) {
	t.logEnds.Add(1)
	return t.Target.LogEnd(ctx, p)
}

// TestIdleRunAt10kPartitionsReadsNothingPerPartition: with the store intact,
// an idle run over 10,000 partitions, every one copied before, writes
// nothing to the store and sends the target no request at all: the
// read-back of a partition the store cannot vouch for (adopt) is paid only
// by partitions without a checkpoint. The run after the store is lost pays
// it once per partition (one end offset, one read-back) and settles them
// all at once, and the idle run after that pays nothing again.
func TestIdleRunAt10kPartitionsReadsNothingPerPartition(t *testing.T) {
	const n = 10_000
	sizes := map[catchup.Partition]int{}
	for i := range n {
		sizes[catchup.Partition{Topic: fmt.Sprintf("t%d", i%10), Partition: int32(i / 10)}] = 1
	}
	r := newRig(sizes)
	run := func(name string) (*Report, *readCountingTarget, int64) {
		store := &countingStore{Store: r.store}
		target := &readCountingTarget{Target: r.dst}
		o := r.options(name)
		o.Store, o.Target = store, target
		rep := r.run(t, t.Context(), o)
		for _, res := range rep.Partitions {
			if res.Status != StatusDone {
				t.Fatalf("%s: %s: status %s err %v; want done", name, res.Partition, res.Status, res.Err)
			}
		}
		return rep, target, store.writes.Load()
	}
	// The first run finds no checkpoint and an empty target: it asks
	// every leader's log end at plan time, in one call.
	if _, target, _ := run("first"); target.endOffsets.Load() != 1 || target.logEndBatches.Load() != 1 || target.logEnds.Load() != 0 ||
		target.readBacks.Load() != 0 {
		t.Fatalf("first run: %d end offset calls, %d batched log end calls, %d log ends, %d read-backs; want 1, 1, 0, 0",
			target.endOffsets.Load(), target.logEndBatches.Load(), target.logEnds.Load(), target.readBacks.Load())
	}
	for _, name := range []string{"idle", "idle after the store was lost"} {
		if name != "idle" {
			r.store = checkpoint.NewMemStore(r.clock.now)
			rep, target, writes := run("lost")
			var copied, skipped int64
			for _, res := range rep.Partitions {
				copied, skipped = copied+res.Copied, skipped+res.Skipped
			}
			// Acquire and the releasing commit; the plan's EndOffsets, then
			// one settle for all (two LogEnds around the wait and the
			// high watermarks: one EndOffsets), then per partition one end
			// and one read-back, and no LogEnd of its own.
			if copied != 0 || skipped != n || writes != 2*n || target.readBacks.Load() != n || target.endOffsets.Load() != n+2 ||
				target.logEnds.Load() != 0 || target.logEndBatches.Load() != 2 {
				t.Fatalf("run after the store was lost: %d copied, %d skipped, %d store writes, %d read-backs, %d end offset calls, "+
					"%d log ends, %d batched log end calls; want 0, %d, %d, %d, %d, 0, 2", copied, skipped, writes, target.readBacks.Load(),
					target.endOffsets.Load(), target.logEnds.Load(), target.logEndBatches.Load(), n, 2*n, n, n+2)
			}
		}
		_, target, writes := run(name)
		if writes != 0 || target.endOffsets.Load() != 0 || target.readBacks.Load() != 0 || target.logEnds.Load() != 0 || target.logEndBatches.Load() != 0 {
			t.Errorf("%s run: %d store writes, %d end offset calls, %d read-backs, %d log ends; want none", name, writes,
				target.endOffsets.Load(), target.readBacks.Load(), target.logEnds.Load())
		}
	}
}
