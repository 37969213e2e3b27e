package dynamostore_test

import (
	"testing"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
)

// BenchmarkCommit measures sequential commits of one partition, the store's
// steady state. go test -bench Commit -benchtime 1000x gives the time of
// 1000 commits and the requests each costs.
func BenchmarkCommit(b *testing.B) {
	client := dynamotest.Client(b, dynamotest.Endpoint(b))
	s := dynamostore.New(client, dynamotest.Table(b, client))
	p := catchup.Partition{Topic: "orders", Partition: 0}
	l, _, err := s.Acquire(b.Context(), "pipe", p, "bench", time.Hour)
	if err != nil {
		b.Fatalf("Acquire: %v", err)
	}
	before := s.Requests()
	b.ResetTimer()
	for i := range int64(b.N) {
		if err := s.Commit(b.Context(), l, checkpoint.Commit{Next: i + 1, TargetEnd: i + 1, Records: 1, Bytes: 1000}); err != nil {
			b.Fatalf("Commit %d: %v", i, err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(s.Requests()-before)/float64(b.N), "requests/op")
}
