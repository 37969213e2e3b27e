// Package copytest holds what the tests of the benchmark's copiers share:
// the fields of a record a copy must keep, and reading a kfake cluster's
// topic back.
package copytest

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Kept is what a copy must keep of a record.
type Kept struct {
	Partition int32
	Offset    int64
	Key       string
	Value     string
	Headers   []kgo.RecordHeader
	Timestamp int64
}

// Keep is the part of r a copy must keep.
func Keep(r *kgo.Record) Kept {
	return Kept{r.Partition, r.Offset, string(r.Key), string(r.Value), r.Headers, r.Timestamp.UnixMilli()}
}

// ReadAll reads n records of topic from c, partition by partition
// (partitions 0 to partitions-1), in offset order; it fails the test after
// 20 s without them.
func ReadAll(t *testing.T, c *kfake.Cluster, topic string, n int, partitions int32) []Kept {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	byPartition := map[int32][]Kept{}
	for got := 0; got < n; {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("read %s after %d of %d records: %v", topic, got, n, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			byPartition[r.Partition] = append(byPartition[r.Partition], Keep(r))
			got++
		})
	}
	var out []Kept
	for p := range partitions {
		out = append(out, byPartition[p]...)
	}
	return out
}
