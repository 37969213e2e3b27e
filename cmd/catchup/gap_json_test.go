package main

import (
	"fmt"
	"testing"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// TestJSONGapOnlyWhenSkipped: the run document's gap field is there for a
// gap on_gap: skip skipped and absent for one that failed the partition, as
// docs/json.md says; the failed one's window and lag are the records left
// behind the gap, not an empty window.
func TestJSONGapOnlyWhenSkipped(t *testing.T) {
	p := catchup.Partition{Topic: "t", Partition: 0}
	gap := &catchup.GapError{Partition: p, From: 5, To: 12}
	failed := gap // as the engine returns it: the plan's gap is the error
	rep := &replicate.Report{Pipeline: "p", Partitions: []replicate.Result{
		{Partition: p, From: 5, To: 20, End: 20, Next: 5, Gap: gap, Status: replicate.StatusFailed, Err: fmt.Errorf("plan: %w", failed)},
		{Partition: catchup.Partition{Topic: "t", Partition: 1}, From: 12, To: 20, End: 20, Next: 20, Copied: 8,
			Gap: &catchup.GapError{Partition: p, From: 5, To: 12}, Status: replicate.StatusDone},
	}}
	got := reportJSON(rep).Partitions
	if got[0].Gap != nil || got[0].Lag != 15 {
		t.Errorf("failed by a gap: gap %v, lag %d; want no gap field and lag 15", got[0].Gap, got[0].Lag)
	}
	if len(got[1].Gap) != 2 || got[1].Gap[0] != 5 || got[1].Gap[1] != 12 {
		t.Errorf("gap skipped: gap %v; want [5 12]", got[1].Gap)
	}
}
