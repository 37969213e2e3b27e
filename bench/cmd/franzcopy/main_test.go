package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-catchup/catchup/bench/internal/copytest"
)

// TestCopyKeepsRecords copies a topic whose partitions hold 0, 1 and many
// records (keys, headers, old timestamps) between kfake clusters, and checks
// that the target holds the same records at the same partitions and
// offsets, and that the copy stops (an empty partition must not hold it).
func TestCopyKeepsRecords(t *testing.T) {
	const topic = "events"
	perPartition := []int{0, 1, 700}
	src, dst := cluster(t, topic), cluster(t, topic)
	var want []copytest.Kept
	cl := client(t, src)
	for p, n := range perPartition {
		for i := range n {
			r := &kgo.Record{Topic: topic, Partition: int32(p), Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "v%d-%d", p, i),
				Headers:   []kgo.RecordHeader{{Key: "h", Value: fmt.Appendf(nil, "%d", i)}},
				Timestamp: time.UnixMilli(1_600_000_000_000 + int64(i))}
			if err := cl.ProduceSync(t.Context(), r).FirstErr(); err != nil {
				t.Fatal(err)
			}
			want = append(want, copytest.Keep(r))
		}
	}
	n, bytes, err := copyTopic(t.Context(), src.ListenAddrs(), dst.ListenAddrs(), topic, "zstd")
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(len(want)) || bytes <= 0 {
		t.Errorf("copied %d records, %d bytes; want %d records", n, bytes, len(want))
	}
	if diff := cmp.Diff(want, copytest.ReadAll(t, dst, topic, len(want), 3)); diff != "" {
		t.Errorf("target (-want +got):\n%s", diff)
	}
}

func cluster(t *testing.T, topic string) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func client(t *testing.T, c *kfake.Cluster) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}
