package worker

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// TestSummaryOutcomes: the Lambda summary uses the run's one definition of
// done (replicate.Report.Done): a leased partition leaves its lag and is
// not done, and the summary names the lease's holder and expiry.
func TestSummaryOutcomes(t *testing.T) {
	until := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	rep := &replicate.Report{Pipeline: "p", Partitions: []replicate.Result{
		{Partition: catchup.Partition{Topic: "t", Partition: 0}, From: 0, To: 10, Next: 10, Copied: 10, Status: replicate.StatusDone},
		{Partition: catchup.Partition{Topic: "t", Partition: 1}, From: 0, To: 10, Next: 0, Status: replicate.StatusLeased,
			LeaseOwner: "dead-run", LeaseExpires: until},
	}}
	got := summarize(Event{Pipeline: "p"}, rep)
	want := &Summary{Pipeline: "p", Done: false, Copied: 10, Lag: 10, Partitions: []PartitionSummary{
		{Topic: "t", Partition: 0, To: 10, Next: 10, Copied: 10, Status: "done"},
		{Topic: "t", Partition: 1, To: 10, Lag: 10, Status: "leased", LeaseOwner: "dead-run", LeaseExpires: &until},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
}
