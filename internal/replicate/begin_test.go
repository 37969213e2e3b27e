package replicate

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/plan"
)

// beginSpy counts the begin calls a run makes to its store and keeps what
// PutBegin returned.
type beginSpy struct {
	checkpoint.Store
	loads, puts, loadParts atomic.Int64
	// race, if set, holds every LoadBegins until race.Wait returns: the
	// callers all read before any writes.
	race *sync.WaitGroup

	mu  sync.Mutex
	got []checkpoint.Begin // PutBegin results
}

func (s *beginSpy) LoadBegins(ctx context.Context, pipeline string, topics []string) (map[string]checkpoint.Begin, error) {
	s.loads.Add(1)
	got, err := s.Store.LoadBegins(ctx, pipeline, topics)
	if s.race != nil {
		s.race.Done()
		s.race.Wait()
	}
	return got, err
}

func (s *beginSpy) PutBegin(ctx context.Context, pipeline, topic string, b checkpoint.Begin) (checkpoint.Begin, error) {
	s.puts.Add(1)
	got, err := s.Store.PutBegin(ctx, pipeline, topic, b)
	s.mu.Lock()
	s.got = append(s.got, got)
	s.mu.Unlock()
	return got, err
}

func (s *beginSpy) LoadPartitions(ctx context.Context, pipeline string, ps []catchup.Partition) ([]checkpoint.Checkpoint, error) {
	s.loadParts.Add(1)
	return s.Store.LoadPartitions(ctx, pipeline, ps)
}

// checkCopiedFrom fails unless the target of each p in from holds the
// source records of p from from[p] to the source end, once each, in order:
// nothing written since the pipeline began is lost, and nothing before it
// is copied.
func (r *rig) checkCopiedFrom(t *testing.T, from map[catchup.Partition]int64) {
	t.Helper()
	r.src.mu.Lock()
	r.dst.mu.Lock()
	defer r.src.mu.Unlock()
	defer r.dst.mu.Unlock()
	for p, f := range from {
		var want, got []int64
		for o := f; o < r.src.end(p); o++ {
			want = append(want, o)
		}
		for _, rec := range r.dst.logs[p].recs {
			off, _ := catchup.SourceOffset(&rec, "src", p)
			got = append(got, off)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: source offsets in the target (-want +got):\n%s", p, d)
		}
	}
}

// TestUnreachedPartitionsStartWhereThePipelineBegan: under start: latest, a
// partition that a new pipeline's first run did not reach (a run cut short
// by its deadline, a worker given a shard of half the partitions) starts,
// in the run that first reaches it, where the pipeline began the topic, not
// at its latest then: the records written in between are copied, and none
// written before the pipeline began.
func TestUnreachedPartitionsStartWhereThePipelineBegan(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first func(o *Options, cancel context.CancelFunc)
	}{
		{"deadline", func(o *Options, cancel context.CancelFunc) { o.OnPlan = func([]plan.Planned) { cancel() } }},
		{"shard of half", func(o *Options, _ context.CancelFunc) { o.Partitions = []catchup.Partition{pA} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(map[catchup.Partition]int{pA: 10, pB: 10, pC: 10})
			o := r.options("first")
			o.Policy.Start = plan.Latest
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			tc.first(&o, cancel)
			r.run(t, ctx, o)
			r.appendRecords(pA, 2)
			r.appendRecords(pB, 5)
			r.appendRecords(pC, 4)

			o = r.options("second")
			o.Policy.Start = plan.Latest
			rep := r.run(t, t.Context(), o)
			for _, res := range rep.Partitions {
				if res.Status != StatusDone {
					t.Errorf("%s: status %s err %v; want done", res.Partition, res.Status, res.Err)
				}
			}
			r.checkCopiedFrom(t, map[catchup.Partition]int64{pA: 10, pB: 10, pC: 10})
		})
	}
}

// TestShardWorkersRacingAgreeOnOneBegin: the shard workers of a new
// pipeline's first fan-out round race to store the begin of their topic;
// every one gets the same begin, and a later run copies every record
// written since, in every partition.
func TestShardWorkersRacingAgreeOnOneBegin(t *testing.T) {
	const n = 8
	sizes := map[catchup.Partition]int{}
	for i := range int32(n) {
		sizes[catchup.Partition{Topic: "t", Partition: i}] = 10
	}
	r := newRig(sizes)
	spy := &beginSpy{Store: r.store, race: &sync.WaitGroup{}}
	spy.race.Add(n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range int32(n) {
		o := r.options(fmt.Sprintf("worker-%d", i))
		o.Store, o.Policy.Start = spy, plan.Latest
		o.Partitions = []catchup.Partition{{Topic: "t", Partition: i}}
		at := r.clock.now().Add(time.Duration(i) * time.Second)
		o.Now = func() time.Time { return at } // each worker takes its own instant
		e, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			<-start
			if _, err := e.Run(t.Context()); err != nil {
				t.Errorf("worker-%d: %v", i, err)
			}
		})
	}
	close(start)
	wg.Wait()
	stored, err := r.store.LoadBegins(t.Context(), "p1", []string{"t"})
	if err != nil {
		t.Fatal(err)
	}
	if len(spy.got) != n {
		t.Fatalf("%d PutBegin calls; want one per worker, %d", len(spy.got), n)
	}
	for i, b := range spy.got {
		if d := cmp.Diff(stored["t"], b); d != "" {
			t.Errorf("PutBegin %d returned another begin than the one stored (-stored +returned):\n%s", i, d)
		}
	}
	from := map[catchup.Partition]int64{}
	for p := range sizes {
		r.appendRecords(p, 3)
		from[p] = 10
	}
	o := r.options("next")
	o.Policy.Start = plan.Latest
	r.run(t, t.Context(), o)
	r.checkCopiedFrom(t, from)
}

// TestBeginRequests pins the store requests begins cost at 1,000
// partitions over 10 topics: one LoadBegins per run that has a partition
// without a checkpoint (never one per partition or per topic), none in a
// run where every partition has one, and one PutBegin per topic, once.
func TestBeginRequests(t *testing.T) {
	sizes := map[catchup.Partition]int{}
	for i := range 1000 {
		sizes[catchup.Partition{Topic: fmt.Sprintf("t%d", i%10), Partition: int32(i / 10)}] = 1
	}
	r := newRig(sizes)
	spy := &beginSpy{Store: r.store}
	run := func(name string, shard []catchup.Partition, wantLoads, wantPuts int64) {
		t.Helper()
		spy.loads.Store(0)
		spy.puts.Store(0)
		o := r.options(name)
		o.Store, o.Policy.Start, o.Partitions = spy, plan.Latest, shard
		r.run(t, t.Context(), o)
		if got, gotPuts := spy.loads.Load(), spy.puts.Load(); got != wantLoads || gotPuts != wantPuts {
			t.Errorf("%s: %d LoadBegins and %d PutBegin; want %d and %d", name, got, gotPuts, wantLoads, wantPuts)
		}
	}
	var half []catchup.Partition
	for p := range sizes {
		if p.Partition < 50 {
			half = append(half, p)
		}
	}
	run("first shard", half, 1, 10)
	run("whole", nil, 1, 0)
	run("steady", nil, 0, 0)
	grown := catchup.Partition{Topic: "t3", Partition: 100}
	r.src.logs[grown], r.dst.logs[grown] = &fakeLog{stalledAt: -1}, &fakeLog{stalledAt: -1}
	r.appendRecords(grown, 2)
	run("grown", nil, 1, 0)
	r.checkCopiedFrom(t, map[catchup.Partition]int64{grown: 0})
}

// TestPipelineFromBeforeBegins: a pipeline that copied a topic before
// begins were recorded has checkpoints and no begin; its partitions without
// a checkpoint (gained by the topic, or never reached) start at their log
// start, in the run that writes the begin and in every later one.
func TestPipelineFromBeforeBegins(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 10, pB: 6, pC: 3})
	l, _, err := r.store.Acquire(t.Context(), "p1", pA, "old", 60e9)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.store.Commit(t.Context(), l, checkpoint.Commit{Next: 10, TargetEnd: 0, Release: true}); err != nil {
		t.Fatal(err)
	}
	o := r.options("first")
	o.Policy.Start = plan.Latest
	o.Partitions = []catchup.Partition{pC} // another topic: begun as new, at its end
	r.run(t, t.Context(), o)
	o.Partitions = []catchup.Partition{pB} // a shard without a checkpoint of topic a
	ctx, cancel := context.WithCancel(t.Context())
	o.OnPlan = func([]plan.Planned) { cancel() } // the begin is written, pB not reached
	r.run(t, ctx, o)
	r.appendRecords(pC, 2)
	o = r.options("second")
	o.Policy.Start = plan.Latest
	r.run(t, t.Context(), o)
	r.checkCopiedFrom(t, map[catchup.Partition]int64{pB: 0, pC: 3})
	begins, err := r.store.LoadBegins(t.Context(), "p1", []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]int64{"a": {10, checkpoint.FromLogStart}, "b": {3}}
	for topic, offs := range want {
		if d := cmp.Diff(offs, begins[topic].Offsets); d != "" {
			t.Errorf("begin of %s (-want +got):\n%s", topic, d)
		}
	}
}

// TestSurveyShowsGrownPartitionsBacklog: plan, status and the dispatcher
// show a partition the topic gained under start: latest with its whole
// log as backlog, not as an empty window, and a survey writes no begin.
func TestSurveyShowsGrownPartitionsBacklog(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 10})
	o := r.options("run")
	o.Policy.Start = plan.Latest
	r.run(t, t.Context(), o)
	grown := newFakeCluster(map[catchup.Partition]int{pB: 4, pC: 3})
	r.src.logs[pB], r.dst.logs[pB] = grown.logs[pB], &fakeLog{stalledAt: -1}
	r.src.logs[pC], r.dst.logs[pC] = grown.logs[pC], &fakeLog{stalledAt: -1}
	e, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	sv, err := e.Survey(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := map[catchup.Partition][2]int64{}
	for _, w := range sv.Windows {
		got[w.Partition] = [2]int64{w.From, w.To}
	}
	// pB: gained by topic a, its log. pC: topic b, new to the pipeline: its latest.
	want := map[catchup.Partition][2]int64{pA: {10, 10}, pB: {0, 4}, pC: {3, 3}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("survey windows (-want +got):\n%s", d)
	}
	if bs, err := r.store.LoadBegins(t.Context(), "p1", []string{"b"}); err != nil || len(bs) != 0 {
		t.Errorf("begins of b after a survey: %v, %v; want none (a survey writes nothing)", bs, err)
	}
}

// TestBeginAboveTheMarks: a begin stored by a run that read the offsets
// after this run read its watermarks (two first runs racing) may hold an
// offset above the end this run saw; the partition starts at that end, a
// few records early, not failed as a start above the log end.
func TestBeginAboveTheMarks(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 10})
	if _, err := r.store.PutBegin(t.Context(), "p1", pA.Topic, checkpoint.Begin{At: r.clock.now(), Offsets: []int64{15}}); err != nil {
		t.Fatal(err)
	}
	o := r.options("run")
	o.Policy.Start = plan.Latest
	rep := r.run(t, t.Context(), o)
	if res := rep.Partitions[0]; res.Status != StatusDone || res.From != 10 || res.Next != 10 {
		t.Errorf("%s: status %s from %d next %d err %v; want done from its end, 10", pA, res.Status, res.From, res.Next, res.Err)
	}
}
