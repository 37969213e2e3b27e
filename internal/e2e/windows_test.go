package e2e

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// values returns records with the given values for topic/partition, each
// with a key and a timestamp.
func values(topic string, partition int32, vs ...string) []*kgo.Record {
	out := make([]*kgo.Record, len(vs))
	for i, v := range vs {
		out[i] = &kgo.Record{Topic: topic, Partition: partition, Key: []byte("k-" + v), Value: []byte(v), Timestamp: oldTime}
	}
	return out
}

// numbered returns n values "<prefix><first>" to "<prefix><first+n-1>".
func numbered(prefix string, first, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, first+i)
	}
	return out
}

// TestWindows copies a backlog in windows of window.max_records: each run
// copies exactly [from, to) with to fixed at its start, and records that
// arrive in the source during a run wait for the next one.
func TestWindows(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	topic := e.topic(t, "w")
	topics := []string{topic}
	e.createTopics(ctx, t, 2, nil, topic)
	p0, p1 := catchup.Partition{Topic: topic, Partition: 0}, catchup.Partition{Topic: topic, Partition: 1}
	for _, p := range []int32{0, 1} {
		// Batches of 3, 3 and 4 records: window ends fall inside batches.
		e.src.produce(ctx, t, values(topic, p, numbered("a", 0, 3)...)...)
		e.src.produce(ctx, t, values(topic, p, numbered("a", 3, 3)...)...)
		e.src.produce(ctx, t, values(topic, p, numbered("a", 6, 4)...)...)
	}
	yaml := e.configYAML(topics, "window: {max_records: 4}")
	// A window max_records cut short of the source end is partial.
	done, partial := replicate.StatusDone, replicate.StatusPartial

	// step runs once and checks the windows, then that the target holds
	// exactly the source offsets below each window's end.
	step := func(what string, o pipeline.Options, want map[catchup.Partition]window) {
		t.Helper()
		rep := mustRun(ctx, t, yaml, o)
		wantWindows(t, what, rep, want)
		ends := map[catchup.Partition]int64{}
		for p, w := range want {
			ends[p] = w.Next
		}
		verifyCopy(t, e.src, e.dst, topics, "read_committed", copySpec{To: ends})
		e.wantCheckpoints(ctx, t, what, ends)
	}
	step("run 1", pipeline.Options{}, map[catchup.Partition]window{
		p0: {From: 0, To: 4, Next: 4, Copied: 4, Status: partial},
		p1: {From: 0, To: 4, Next: 4, Copied: 4, Status: partial},
	})
	step("run 2", pipeline.Options{}, map[catchup.Partition]window{
		p0: {From: 4, To: 8, Next: 8, Copied: 4, Status: partial},
		p1: {From: 4, To: 8, Next: 8, Copied: 4, Status: partial},
	})

	// Run 3 has 2 records left in each partition; after its first
	// acknowledged produce, 5 records arrive in p0 and 2 in p1. Its
	// windows, fixed at its start, must not grow to take them.
	var (
		once    sync.Once
		lateErr error
	)
	late := pipeline.Options{OnProgress: func(int64, int64) {
		once.Do(func() {
			recs := append(values(topic, 0, numbered("b", 0, 5)...), values(topic, 1, numbered("b", 0, 2)...)...)
			lateErr = e.src.cl.ProduceSync(ctx, recs...).FirstErr()
		})
	}}
	step("run 3, records arriving during it", late, map[catchup.Partition]window{
		p0: {From: 8, To: 10, Next: 10, Copied: 2, Status: done},
		p1: {From: 8, To: 10, Next: 10, Copied: 2, Status: done},
	})
	if lateErr != nil {
		t.Fatalf("produce during run 3: %v", lateErr)
	}
	if got := e.src.highWatermarks(ctx, t, topic); got[p0] != 15 || got[p1] != 12 {
		t.Fatalf("source high watermarks after run 3: %v; want 15 and 12 (the records produced during the run)", got)
	}
	step("run 4", pipeline.Options{}, map[catchup.Partition]window{
		p0: {From: 10, To: 14, Next: 14, Copied: 4, Status: partial},
		p1: {From: 10, To: 12, Next: 12, Copied: 2, Status: done},
	})
	step("run 5", pipeline.Options{}, map[catchup.Partition]window{
		p0: {From: 14, To: 15, Next: 15, Copied: 1, Status: done},
		p1: {From: 12, To: 12, Next: 12, Copied: 0, Status: done},
	})
	step("run 6", pipeline.Options{}, map[catchup.Partition]window{
		p0: {From: 15, To: 15, Next: 15, Copied: 0, Status: done},
		p1: {From: 12, To: 12, Next: 12, Copied: 0, Status: done},
	})
	verifyExactCopy(t, e.src, e.dst, topics)
}

// TestWindowMaxBytesCompressedSource copies from a snappy-compressed source
// whose one fetch decodes to ten times window.max_bytes: the window stops
// within one record of the limit, counted as written (provenance header
// included), not after the whole fetch, and is partial; the next runs go on
// from the checkpoint until the copy is exact.
func TestWindowMaxBytesCompressedSource(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	topic := e.topic(t, "mb")
	e.createTopics(ctx, t, 1, nil, topic)
	const n, valueLen, maxBytes = 500, 1000, 50_000
	snappy := newClient(t, e.src, kgo.ProducerBatchCompression(kgo.SnappyCompression()))
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: topic, Key: []byte(fmt.Sprintf("k%03d", i)), Value: bytes.Repeat([]byte{'x'}, valueLen), Timestamp: oldTime}
	}
	if err := snappy.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	p := catchup.Partition{Topic: topic}
	// One record as written: key, value and the provenance header.
	one := int64(4 + valueLen + len(catchup.ProvenanceHeader) +
		catchup.ProvenanceLen(catchup.Provenance{Cluster: srcName, Partition: p, Offset: n - 1}))
	yaml := e.configYAML([]string{topic}, fmt.Sprintf("window: {max_bytes: %d}", maxBytes))
	var copied int64
	for run := 1; copied < n; run++ {
		rep := mustRun(ctx, t, yaml, pipeline.Options{})
		r := rep.Partitions[0]
		copied += r.Copied
		if copied == n {
			if r.Status != replicate.StatusDone || r.Bytes >= maxBytes+one || run < n*int(one)/maxBytes {
				t.Fatalf("run %d copied the rest: %s, %d records, %d bytes; want done in under %d bytes, after %d runs at least",
					run, r.Status, r.Copied, r.Bytes, maxBytes+one, n*int(one)/maxBytes)
			}
			break
		}
		if r.Status != replicate.StatusPartial || r.Bytes < maxBytes || r.Bytes >= maxBytes+one || r.Next != copied {
			t.Fatalf("run %d: %s, copied %d records, %d bytes, next %d; want partial with %d to %d bytes, next %d",
				run, r.Status, r.Copied, r.Bytes, r.Next, maxBytes, maxBytes+one-1, copied)
		}
		if run > n*int(one)/maxBytes+1 {
			t.Fatalf("run %d: still not done", run)
		}
	}
	verifyExactCopy(t, e.src, e.dst, []string{topic})
}
