package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// TestStartPolicies checks where partitions without a checkpoint start:
// latest copies nothing that exists but what arrives later (also in a
// partition that was empty), a timestamp copies exactly the records at or
// after it, start_offsets start at the given offsets (and the others at
// start).
func TestStartPolicies(t *testing.T) {
	t.Parallel()
	done := replicate.StatusDone

	for _, provenance := range []bool{true, false} {
		t.Run(fmt.Sprintf("latest, provenance %v", provenance), func(t *testing.T) {
			t.Parallel()
			testStartLatest(t, provenance)
		})
	}

	t.Run("timestamp", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		ctx := testContext(t)
		topic := e.topic(t, "timestamp")
		topics := []string{topic}
		e.createTopics(ctx, t, 3, nil, topic)
		p0, p1, p2 := catchup.Partition{Topic: topic, Partition: 0}, catchup.Partition{Topic: topic, Partition: 1}, catchup.Partition{Topic: topic, Partition: 2}
		start := oldTime.Add(5 * time.Minute)
		// at returns n records of partition p, a minute apart from first.
		at := func(p int32, first time.Time, n int) []*kgo.Record {
			recs := values(topic, p, numbered("t", 0, n)...)
			for i, r := range recs {
				r.Timestamp = first.Add(time.Duration(i) * time.Minute)
			}
			return recs
		}
		// p0: minutes 0 to 9 in batches of 3, 3, 4: record 5 is exactly
		// at the start, inside the second batch; p1: all before;
		// p2: all after.
		recs := at(0, oldTime, 10)
		e.src.produce(ctx, t, recs[:3]...)
		e.src.produce(ctx, t, recs[3:6]...)
		e.src.produce(ctx, t, recs[6:]...)
		e.src.produce(ctx, t, at(1, oldTime.Add(-time.Hour), 6)...)
		e.src.produce(ctx, t, at(2, start.Add(time.Millisecond), 4)...)

		rep := mustRun(ctx, t, e.configYAML(topics, "start: "+start.Format(time.RFC3339)), pipeline.Options{})
		wantWindows(t, "run", rep, map[catchup.Partition]window{
			p0: {From: 5, To: 10, Next: 10, Copied: 5, Status: done},
			p1: {From: 6, To: 6, Next: 6, Status: done},
			p2: {From: 0, To: 4, Next: 4, Copied: 4, Status: done},
		})
		verifyCopy(t, e.src, e.dst, topics, "read_committed", copySpec{From: map[catchup.Partition]int64{p0: 5, p1: 6, p2: 0}})
	})

	t.Run("start_offsets", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		ctx := testContext(t)
		topic := e.topic(t, "offsets")
		topics := []string{topic}
		e.createTopics(ctx, t, 3, nil, topic)
		p0, p1, p2 := catchup.Partition{Topic: topic, Partition: 0}, catchup.Partition{Topic: topic, Partition: 1}, catchup.Partition{Topic: topic, Partition: 2}
		for _, p := range []int32{0, 1, 2} {
			e.src.produce(ctx, t, values(topic, p, numbered("s", 0, 10)...)...)
		}
		yaml := e.configYAML(topics, fmt.Sprintf("start_offsets: {'%s': {0: 3, 1: 10}}", topic))
		rep := mustRun(ctx, t, yaml, pipeline.Options{})
		wantWindows(t, "run 1", rep, map[catchup.Partition]window{
			p0: {From: 3, To: 10, Next: 10, Copied: 7, Status: done},
			p1: {From: 10, To: 10, Next: 10, Status: done},
			p2: {From: 0, To: 10, Next: 10, Copied: 10, Status: done},
		})
		from := map[catchup.Partition]int64{p0: 3, p1: 10, p2: 0}
		verifyCopy(t, e.src, e.dst, topics, "read_committed", copySpec{From: from})

		// A checkpoint wins over start_offsets in later runs.
		for _, p := range []int32{0, 1} {
			e.src.produce(ctx, t, values(topic, p, "later")...)
		}
		rep = mustRun(ctx, t, yaml, pipeline.Options{})
		wantWindows(t, "run 2", rep, map[catchup.Partition]window{
			p0: {From: 10, To: 11, Next: 11, Copied: 1, Status: done},
			p1: {From: 10, To: 11, Next: 11, Copied: 1, Status: done},
			p2: {From: 10, To: 10, Next: 10, Status: done},
		})
		verifyCopy(t, e.src, e.dst, topics, "read_committed", copySpec{From: from})
	})
}

// testStartLatest is TestStartPolicies/latest with provenance on or off.
func testStartLatest(t *testing.T, provenance bool) {
	e := newEnv(t)
	done := replicate.StatusDone
	ctx := testContext(t)
	topic := e.topic(t, "latest")
	topics := []string{topic}
	e.createTopics(ctx, t, 3, nil, topic)
	p0, p1, p2 := catchup.Partition{Topic: topic, Partition: 0}, catchup.Partition{Topic: topic, Partition: 1}, catchup.Partition{Topic: topic, Partition: 2}
	e.src.produce(ctx, t, values(topic, 0, numbered("old", 0, 10)...)...)
	e.src.produce(ctx, t, values(topic, 1, numbered("old", 0, 4)...)...) // p2 stays empty
	yaml := e.configYAML(topics, "start: latest", fmt.Sprintf("provenance: %v", provenance))

	rep := mustRun(ctx, t, yaml, pipeline.Options{})
	wantWindows(t, "run 1", rep, map[catchup.Partition]window{
		p0: {From: 10, To: 10, Next: 10, Status: done},
		p1: {From: 4, To: 4, Next: 4, Status: done},
		p2: {From: 0, To: 0, Next: 0, Status: done},
	})
	// The start is pinned by a checkpoint, so that what arrives
	// before the next run is copied by it.
	e.wantCheckpoints(ctx, t, "after run 1", map[catchup.Partition]int64{p0: 10, p1: 4, p2: 0})
	verifyCopy(t, e.src, e.dst, topics, "read_committed", copySpec{From: map[catchup.Partition]int64{p0: 10, p1: 4, p2: 0}, NoProvenance: !provenance})

	for _, p := range []int32{0, 1, 2} {
		e.src.produce(ctx, t, values(topic, p, numbered("new", 0, 3)...)...)
	}
	rep = mustRun(ctx, t, yaml, pipeline.Options{})
	wantWindows(t, "run 2", rep, map[catchup.Partition]window{
		p0: {From: 10, To: 13, Next: 13, Copied: 3, Status: done},
		p1: {From: 4, To: 7, Next: 7, Copied: 3, Status: done},
		p2: {From: 0, To: 3, Next: 3, Copied: 3, Status: done},
	})
	verifyCopy(t, e.src, e.dst, topics, "read_committed", copySpec{From: map[catchup.Partition]int64{p0: 10, p1: 4, p2: 0}, NoProvenance: !provenance})
}
