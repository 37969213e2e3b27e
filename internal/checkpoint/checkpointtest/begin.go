package checkpointtest

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
)

// subtest is one subtest of the suite (the type of subtests' elements).
type subtest = struct {
	name string
	run  func(t *testing.T, e *env)
}

// beginSubtests are the subtests of PutBegin and LoadBegins.
func beginSubtests() []subtest {
	return []subtest{
		{"BeginPutIfAbsent", testBeginPutIfAbsent},
		{"BeginNotACheckpoint", testBeginNotACheckpoint},
		{"BeginOffsets", testBeginOffsets},
		{"BeginInvalid", testBeginInvalid},
		{"BeginPipelinesIndependent", testBeginPipelinesIndependent},
		{"BeginConcurrent", testBeginConcurrent},
	}
}

func testBeginPutIfAbsent(t *testing.T, e *env) {
	if got := e.loadBegins(e.pipeline, "orders", "payments"); len(got) != 0 {
		t.Errorf("LoadBegins of a new pipeline = %v, want none", got)
	}
	if got := e.loadBegins(e.pipeline); len(got) != 0 {
		t.Errorf("LoadBegins of no topic = %v, want none", got)
	}
	first := checkpoint.Begin{At: e.clk.Now(), Offsets: []int64{10, 20, 30}}
	if got := e.putBegin(e.pipeline, "orders", first); !sameBegin(first, got) {
		t.Errorf("first PutBegin returned %v, want what it stored, %v", got, first)
	}
	e.clk.Advance(time.Second)
	second := checkpoint.Begin{At: e.clk.Now(), Offsets: []int64{11, 21, 31, 41}}
	if got := e.putBegin(e.pipeline, "orders", second); !sameBegin(first, got) {
		t.Errorf("second PutBegin returned %v, want the first writer's %v", got, first)
	}
	want := map[string]checkpoint.Begin{"orders": first}
	if d := cmp.Diff(want, e.loadBegins(e.pipeline, "orders", "payments", "orders")); d != "" {
		t.Errorf("LoadBegins after two PutBegin (-want +got):\n%s", d)
	}
	if got := e.loadBegins(e.pipeline, "payments"); len(got) != 0 {
		t.Errorf("LoadBegins(payments), a topic without one, = %v, want none", got)
	}
}

func testBeginNotACheckpoint(t *testing.T, e *env) {
	e.putBegin(e.pipeline, "orders", checkpoint.Begin{At: e.clk.Now(), Offsets: []int64{5}})
	// A topic name of ten digits would parse as a partition key in a store
	// that took its begin for a checkpoint.
	e.putBegin(e.pipeline, "0000000012", checkpoint.Begin{At: e.clk.Now(), Offsets: []int64{5}})
	if got := e.load(e.pipeline); len(got) != 0 {
		t.Errorf("Load of a pipeline with begins only = %v, want no checkpoint", got)
	}
	p := catchup.Partition{Topic: "orders", Partition: 0}
	if got := e.loadPartitions([]catchup.Partition{p}); len(got) != 0 {
		t.Errorf("LoadPartitions(%s) of a topic with a begin only = %v, want none", p, got)
	}
	l := e.acquire(p, "run-a")
	e.commit(l, checkpoint.Commit{Next: 7, TargetEnd: 7})
	if got := e.load(e.pipeline); len(got) != 1 || got[p].Next != 7 {
		t.Errorf("Load = %v, want the checkpoint of %s alone", got, p)
	}
}

func testBeginOffsets(t *testing.T, e *env) {
	many := make([]int64, 1000)
	for i := range many {
		many[i] = int64(i) * 1_000_003
	}
	for i, b := range []checkpoint.Begin{
		{At: e.clk.Now(), Offsets: []int64{0, checkpoint.FromLogStart, math.MaxInt64, 1 << 40}},
		{At: e.clk.Now(), Offsets: many},
		{At: e.clk.Now(), Offsets: []int64{}},
	} {
		topic := fmt.Sprintf("t%d", i)
		if got := e.putBegin(e.pipeline, topic, b); !sameBegin(b, got) {
			t.Errorf("PutBegin(%s) returned %v, want %v", topic, got, b)
		}
		if d := cmp.Diff(map[string]checkpoint.Begin{topic: b}, e.loadBegins(e.pipeline, topic), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("LoadBegins(%s) (-want +got):\n%s", topic, d)
		}
	}
	got := e.loadBegins(e.pipeline, "t1")["t1"]
	if got.Partitions() != 1000 {
		t.Errorf("Partitions() of a begin of 1000 = %d", got.Partitions())
	}
	if off, ok := got.Start(999); !ok || off != many[999] {
		t.Errorf("Start(999) = %d, %v; want %d, true", off, ok, many[999])
	}
	if _, ok := got.Start(1000); ok {
		t.Errorf("Start(1000) of a begin of 1000 partitions: ok, want false (a partition gained since: its log start)")
	}
}

func testBeginInvalid(t *testing.T, e *env) {
	if _, err := e.s.PutBegin(e.t.Context(), e.pipeline, "orders", checkpoint.Begin{At: e.clk.Now(), Offsets: []int64{3, -1}}); err == nil {
		t.Errorf("PutBegin with offset -1: no error, want one")
	}
	if got := e.loadBegins(e.pipeline, "orders"); len(got) != 0 {
		t.Errorf("LoadBegins after a refused PutBegin = %v, want none", got)
	}
}

func testBeginPipelinesIndependent(t *testing.T, e *env) {
	other := e.pipeline + "-other"
	e.putBegin(other, "orders", checkpoint.Begin{At: e.clk.Now(), Offsets: []int64{1}})
	if got := e.loadBegins(e.pipeline, "orders"); len(got) != 0 {
		t.Errorf("LoadBegins(%s) = %v after a PutBegin in %s; want none", e.pipeline, got, other)
	}
	mine := checkpoint.Begin{At: e.clk.Now(), Offsets: []int64{2}}
	if got := e.putBegin(e.pipeline, "orders", mine); !sameBegin(mine, got) {
		t.Errorf("PutBegin(%s) = %v, want its own %v, not %s's", e.pipeline, got, mine, other)
	}
}

// testBeginConcurrent: the writers of a race all get the one begin stored.
func testBeginConcurrent(t *testing.T, e *env) {
	const writers = 8
	got := make([]checkpoint.Begin, writers)
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			got[i], errs[i] = e.s.PutBegin(t.Context(), e.pipeline, "orders",
				checkpoint.Begin{At: e.clk.Now(), Offsets: []int64{int64(i), int64(i)}})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("PutBegin: %v", err)
	}
	stored := e.loadBegins(e.pipeline, "orders")["orders"]
	for i, b := range got {
		if !sameBegin(stored, b) {
			t.Errorf("writer %d got %v, the store holds %v: the writers disagree", i, b, stored)
		}
	}
}

func (e *env) putBegin(pipeline, topic string, b checkpoint.Begin) checkpoint.Begin {
	e.t.Helper()
	got, err := e.s.PutBegin(e.t.Context(), pipeline, topic, b)
	if err != nil {
		e.t.Fatalf("PutBegin(%s, %s): %v", pipeline, topic, err)
	}
	return got
}

func (e *env) loadBegins(pipeline string, topics ...string) map[string]checkpoint.Begin {
	e.t.Helper()
	got, err := e.s.LoadBegins(e.t.Context(), pipeline, topics)
	if err != nil {
		e.t.Fatalf("LoadBegins(%s, %v): %v", pipeline, topics, err)
	}
	return got
}

// sameBegin reports whether a and b are equal, an empty Offsets equal to a
// nil one.
func sameBegin(a, b checkpoint.Begin) bool { return cmp.Equal(a, b, cmpopts.EquateEmpty()) }
