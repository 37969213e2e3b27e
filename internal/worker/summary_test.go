package worker

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/metrics"
	"github.com/kafka-catchup/catchup/internal/metrics/emftest"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// TestSummaryAndMetricsShowInDoubt pins that a partition in doubt, the
// re-sends and the waits for replication reach the invocation's summary and
// its EMF metrics, and that a summary with a partition in doubt is not done.
func TestSummaryAndMetricsShowInDoubt(t *testing.T) {
	rep := &replicate.Report{Pipeline: "dr", Resent: 3, ReplicationWaits: 2, ReplicationWaited: 61500 * time.Millisecond,
		Partitions: []replicate.Result{
			{Partition: catchup.Partition{Topic: "t", Partition: 0}, To: 20, Next: 20, Copied: 20, Status: replicate.StatusDone},
			{Partition: catchup.Partition{Topic: "t", Partition: 1}, To: 20, Next: 8, Copied: 8, Status: replicate.StatusInDoubt,
				Err: errors.New("in doubt")},
		}}
	sum := summarize(Event{Pipeline: "dr"}, rep)
	if sum.Done || sum.InDoubt != 1 || sum.Resent != 3 || sum.ReplicationWaits != 2 || sum.ReplicationWaitedMS != 61500 ||
		sum.Partitions[1].Status != "in_doubt" {
		t.Errorf("summary done %t, in_doubt %d, resent %d, replication_waits %d (%d ms), status %q; want false, 1, 3, 2 (61500 ms), in_doubt",
			sum.Done, sum.InDoubt, sum.Resent, sum.ReplicationWaits, sum.ReplicationWaitedMS, sum.Partitions[1].Status)
	}

	var out bytes.Buffer
	h := &Handler{o: Options{Service: "catchup", Log: slog.New(slog.DiscardHandler),
		Metrics: metrics.New(&out, "Catchup", func() time.Time { return time.UnixMilli(1_700_000_000_000) })}}
	h.emit(t.Context(), rep.Pipeline, false, rep, 5)
	docs, err := emftest.Lines(out.Bytes())
	if err != nil {
		t.Fatalf("EMF: %v", err)
	}
	got := map[string]float64{}
	for _, d := range docs {
		for k, v := range d.Values {
			got[k] = v
		}
	}
	want := map[string]float64{metrics.InDoubtPartitions: 1, metrics.FailedPartitions: 0, metrics.Resent: 3,
		metrics.ReplicationWaits: 2, metrics.ReplicationWaited: 61500, metrics.DynamoDBRequests: 5}
	pick := map[string]float64{}
	for k := range want {
		pick[k] = got[k]
	}
	if diff := cmp.Diff(want, pick); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}

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
