package verify

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// dense is a partition whose record i is at offset i, served 500 records a
// fetch without scanning: a reader fast enough to measure verify itself.
type dense []catchup.Record

func (l dense) Fetch(_ context.Context, _ catchup.Partition, from int64, _ int32) (catchup.Fetched, error) {
	end := min(from+500, int64(len(l)))
	if from >= end {
		return catchup.Fetched{Next: from}, nil
	}
	return catchup.Fetched{Records: l[from:end], Next: end}, nil
}

func (l dense) ListOffsets(_ context.Context, ps []catchup.Partition) ([]catchup.Offsets, error) {
	n := int64(len(l))
	return []catchup.Offsets{{Partition: ps[0], HighWatermark: n, LastStable: n}}, nil
}

var benchP = catchup.Partition{Topic: "bench", Partition: 0}

// BenchmarkPartition verifies an exact copy of n 100-byte records, in
// order, and reports the bytes allocated per source offset.
func BenchmarkPartition(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		src, dst := make(dense, n), make(dense, n)
		for i := range n {
			r := catchup.Record{Offset: int64(i), Key: []byte(fmt.Sprint(i)), Value: make([]byte, 100), Timestamp: time.UnixMilli(int64(i))}
			src[i] = r
			r.Headers = []catchup.Header{{Key: catchup.ProvenanceHeader,
				Value: catchup.AppendProvenance(nil, catchup.Provenance{Cluster: "src", Partition: benchP, Offset: int64(i)})}}
			dst[i] = r
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r, err := Partition(b.Context(), src, dst, benchP, benchP, 0, int64(n), Options{Cluster: "src"})
				if err != nil || r.Matched != int64(n) {
					b.Fatalf("Partition: %d matched, %v", r.Matched, err)
				}
			}
		})
	}
}
