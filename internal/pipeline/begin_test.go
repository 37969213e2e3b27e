package pipeline_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestDynamoDBRequestsUnderLatest pins what start: latest costs in
// DynamoDB requests through the whole stack: the first run of a pipeline
// reads the begins once (one Query for every topic) and writes the topic's
// begin once; a run where every partition has a checkpoint reads no begin
// at all. The records written between the two runs are all copied.
func TestDynamoDBRequestsUnderLatest(t *testing.T) {
	const partitions, more = 8, 5
	r := newLeaseRig(t, partitions, 10, "    start: latest\n")
	store := r.newStore(time.Now)
	rep, err := r.open(t, "first", store, nil).Engine.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if copied, _, failed := rep.Totals(); copied != 0 || failed != 0 {
		t.Fatalf("first run: copied %d, %d failed; want 0 and 0 (it starts at latest)", copied, failed)
	}
	// Load, LoadBegins, PutBegin (one topic); per partition: acquire, the
	// commit of its start, the release.
	if want := int64(3 + 3*partitions); rep.StoreRequests != want {
		t.Errorf("first run: %d DynamoDB requests, want %d", rep.StoreRequests, want)
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(r.src.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for p := range int32(partitions) {
		for i := range more {
			if err := cl.ProduceSync(t.Context(), &kgo.Record{Topic: "events", Partition: p, Value: fmt.Appendf(nil, "more-%d", i)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	store = r.newStore(time.Now)
	rep, err = r.open(t, "second", store, nil).Engine.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if copied, _, failed := rep.Totals(); copied != partitions*more || failed != 0 {
		t.Errorf("second run: copied %d, %d failed; want %d and 0", copied, failed, partitions*more)
	}
	// Load; per partition: acquire and the final commit with the release
	// (the commit before the first produce would change nothing: skipped).
	// No begin read: every partition has a checkpoint.
	if want := int64(1 + 2*partitions); rep.StoreRequests != want {
		t.Errorf("second run: %d DynamoDB requests, want %d", rep.StoreRequests, want)
	}
}
