package replicate

import (
	"testing"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
)

// BenchmarkDropLooped measures loop prevention on a batch with no looped record.
func BenchmarkDropLooped(b *testing.B) {
	e, err := New(Options{Pipeline: "p", Owner: "o", Cluster: "onprem", Provenance: true, LoopCluster: "dr",
		Source: &fakeCluster{}, Target: &fakeCluster{}, Store: checkpoint.NewMemStore(nil),
		CommitInterval: time.Second, Parallelism: 1, FetchBytes: 1, LeaseTTL: time.Minute, BatchRecords: 1, RetryBackoff: time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	pc := &partitionCopy{e: e, p: catchup.Partition{Topic: "orders"}, res: &Result{}}
	recs := make([]catchup.Record, 1000)
	for i := range recs {
		recs[i].Headers = []catchup.Header{{Key: catchup.ProvenanceHeader, Value: []byte("v1:east:orders:0:12345")}}
	}
	b.ReportAllocs()
	for b.Loop() {
		if n := len(pc.dropLooped(recs)); n != len(recs) {
			b.Fatalf("dropLooped kept %d of %d", n, len(recs))
		}
	}
}
