package replicate

import (
	"math"
	"testing"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
)

// TestSizeAsWritten wants a record's size as counted to be its key, value
// and headers plus, with provenance, the provenance header as the target
// writes it, for offsets of every decimal length and partitions of several.
func TestSizeAsWritten(t *testing.T) {
	for _, provenance := range []bool{false, true} {
		for _, part := range []int32{0, 7, 10, 12345, math.MaxInt32} {
			e, err := New(Options{Pipeline: "p", Owner: "o", Cluster: "eu-prod", Provenance: provenance,
				Source: &fakeCluster{}, Target: &fakeCluster{}, Store: checkpoint.NewMemStore(nil),
				CommitInterval: time.Second, Parallelism: 1, FetchBytes: 1, LeaseTTL: time.Minute, BatchRecords: 1, RetryBackoff: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			p := catchup.Partition{Topic: "orders.eu", Partition: part}
			pc := &partitionCopy{e: e, p: p, res: &Result{}}
			var recs []catchup.Record
			for off := int64(1); off > 0 && off < math.MaxInt64/10; off *= 10 {
				for _, o := range []int64{off - 1, off, off + 1} {
					recs = append(recs, catchup.Record{Offset: o, Key: []byte("k"), Value: make([]byte, int(o%50)),
						Headers: []catchup.Header{{Key: "h", Value: []byte("v")}}})
				}
			}
			recs = append(recs, catchup.Record{Offset: math.MaxInt64})
			var total int64
			for i := range recs {
				r := &recs[i]
				want := int64(r.Size())
				if provenance {
					want += int64(len(catchup.ProvenanceHeader) + len(catchup.AppendProvenance(nil, catchup.Provenance{Cluster: "eu-prod", Partition: p, Offset: r.Offset})))
				}
				if got := pc.sizeAsWritten(r); got != want {
					t.Errorf("provenance %t, %s, offset %d: sizeAsWritten = %d, want %d", provenance, p, r.Offset, got, want)
				}
				total += want
			}
			pc.countCopied(recs)
			if pc.res.Bytes != total || pc.res.Copied != int64(len(recs)) {
				t.Errorf("provenance %t, %s: countCopied counted %d records of %d bytes, want %d of %d",
					provenance, p, pc.res.Copied, pc.res.Bytes, len(recs), total)
			}
		}
	}
}
