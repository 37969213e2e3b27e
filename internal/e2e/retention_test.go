package e2e

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// TestRetentionGap deletes source records above a checkpoint before they
// were copied: with on_gap: fail the partition fails with the exact missing
// range, copies nothing after it and keeps its checkpoint, while the other
// partition copies on; with on_gap: skip the gap is recorded in the report
// and the store and the copy continues after it.
func TestRetentionGap(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	topic := e.topic(t, "retention")
	topics := []string{topic}
	e.createTopics(ctx, t, 2, nil, topic)
	p0, p1 := catchup.Partition{Topic: topic, Partition: 0}, catchup.Partition{Topic: topic, Partition: 1}
	for _, p := range []int32{0, 1} {
		for b := range 4 {
			e.src.produce(ctx, t, values(topic, p, numbered("r", b*5, 5)...)...)
		}
	}
	before := e.src.read(ctx, t, "read_committed", topic) // the source as it was, for the checks after the deletion
	done, failed := replicate.StatusDone, replicate.StatusFailed

	// max_records leaves 15 of 20 offsets: partial, not done.
	rep := mustRun(ctx, t, e.configYAML(topics, "window: {max_records: 5}"), pipeline.Options{})
	wantWindows(t, "run 1", rep, map[catchup.Partition]window{
		p0: {From: 0, To: 5, Next: 5, Copied: 5, Status: replicate.StatusPartial},
		p1: {From: 0, To: 5, Next: 5, Copied: 5, Status: replicate.StatusPartial},
	})

	// Retention takes p0's records below 12, above its checkpoint 5.
	e.src.deleteRecords(ctx, t, p0, 12)

	rep = mustRun(ctx, t, e.configYAML(topics), pipeline.Options{})
	wantWindows(t, "run 2, on_gap: fail", rep, map[catchup.Partition]window{
		p0: {From: 5, To: 20, Next: 5, Copied: 0, Status: failed}, // the window behind the gap: a lag of 15
		p1: {From: 5, To: 20, Next: 20, Copied: 15, Status: done},
	})
	wantGap := &catchup.GapError{Partition: p0, From: 5, To: 12}
	for _, r := range rep.Partitions {
		if r.Partition != p0 {
			continue
		}
		var gap *catchup.GapError
		if !errors.As(r.Err, &gap) {
			t.Fatalf("run 2: %s: error %v, want a *catchup.GapError", p0, r.Err)
		}
		if diff := cmp.Diff(wantGap, gap); diff != "" {
			t.Errorf("run 2: %s: gap (-want +got):\n%s", p0, diff)
		}
		if msg := r.Err.Error(); !strings.Contains(msg, "[5,12)") {
			t.Errorf("run 2: %s: error %q does not name the range [5,12)", p0, msg)
		}
	}
	cps := e.wantCheckpoints(ctx, t, "after run 2", map[catchup.Partition]int64{p0: 5, p1: 20})
	if c := cps[p0]; !strings.Contains(c.LastError, "[5,12)") || len(c.Gaps) != 0 {
		t.Errorf("checkpoint of %s after run 2: LastError %q, Gaps %v; want the gap error and no gap skipped", p0, c.LastError, c.Gaps)
	}
	if end := e.dst.highWatermarks(ctx, t, topic)[p0]; end != 5 {
		t.Errorf("target %s ends at %d after the failed run, want 5: records after the gap were copied", p0, end)
	}
	compareCopy(t, before, e.dst.read(ctx, t, "read_uncommitted", topic), copySpec{To: map[catchup.Partition]int64{p0: 5}})

	rep = mustRun(ctx, t, e.configYAML(topics, "on_gap: skip"), pipeline.Options{})
	wantWindows(t, "run 3, on_gap: skip", rep, map[catchup.Partition]window{
		p0: {From: 12, To: 20, Next: 20, Copied: 8, Status: done},
		p1: {From: 20, To: 20, Next: 20, Copied: 0, Status: done},
	})
	for _, r := range rep.Partitions {
		want := wantGap
		if r.Partition != p0 {
			want = nil
		}
		if diff := cmp.Diff(want, r.Gap); diff != "" {
			t.Errorf("run 3: %s: report gap (-want +got):\n%s", r.Partition, diff)
		}
	}
	cps = e.wantCheckpoints(ctx, t, "after run 3", map[catchup.Partition]int64{p0: 20, p1: 20})
	gaps := func(gs []checkpoint.Gap) [][2]int64 {
		var out [][2]int64
		for _, g := range gs {
			out = append(out, [2]int64{g.From, g.To})
		}
		return out
	}
	if diff := cmp.Diff([][2]int64{{5, 12}}, gaps(cps[p0].Gaps)); diff != "" || cps[p0].LastError != "" {
		t.Errorf("checkpoint of %s after run 3: LastError %q, gaps (-want +got):\n%s", p0, cps[p0].LastError, diff)
	}
	if len(cps[p1].Gaps) != 0 {
		t.Errorf("checkpoint of %s: gaps %v, want none", p1, cps[p1].Gaps)
	}
	// The target holds the source as it was, less the gap.
	want := snapshot{}
	for p, recs := range before {
		for _, s := range recs {
			if p != p0 || s.rec.Offset < 5 || s.rec.Offset >= 12 {
				want[p] = append(want[p], s)
			}
		}
	}
	compareCopy(t, want, e.dst.read(ctx, t, "read_uncommitted", topic), copySpec{})
}
