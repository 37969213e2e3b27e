package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kept is what a copy must keep of a record.
type kept struct {
	Partition int32
	Offset    int64
	Key       string
	Value     string
	Headers   []kgo.RecordHeader
	Timestamp int64
}

// TestCopyKeepsRecords copies a topic whose partitions hold 0, 1 and many
// records (keys, headers, old timestamps) between kfake clusters, and checks
// that the target holds the same records at the same partitions and
// offsets, and that the copy stops (an empty partition must not hold it).
func TestCopyKeepsRecords(t *testing.T) {
	const topic = "events"
	perPartition := []int{0, 1, 700}
	src, dst := cluster(t, topic), cluster(t, topic)
	var want []kept
	cl := client(t, src)
	for p, n := range perPartition {
		for i := range n {
			r := &kgo.Record{Topic: topic, Partition: int32(p), Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "v%d-%d", p, i),
				Headers:   []kgo.RecordHeader{{Key: "h", Value: fmt.Appendf(nil, "%d", i)}},
				Timestamp: time.UnixMilli(1_600_000_000_000 + int64(i))}
			if err := cl.ProduceSync(t.Context(), r).FirstErr(); err != nil {
				t.Fatal(err)
			}
			want = append(want, keep(r))
		}
	}
	n, bytes, err := copyTopic(t.Context(), src.ListenAddrs(), dst.ListenAddrs(), topic, "zstd")
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(len(want)) || bytes <= 0 {
		t.Errorf("copied %d records, %d bytes; want %d records", n, bytes, len(want))
	}
	if diff := cmp.Diff(want, readAll(t, dst, topic, len(want))); diff != "" {
		t.Errorf("target (-want +got):\n%s", diff)
	}
}

func keep(r *kgo.Record) kept {
	return kept{r.Partition, r.Offset, string(r.Key), string(r.Value), r.Headers, r.Timestamp.UnixMilli()}
}

func readAll(t *testing.T, c *kfake.Cluster, topic string, n int) []kept {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	byPartition := map[int32][]kept{}
	for got := 0; got < n; {
		fs := cl.PollFetches(t.Context())
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			byPartition[r.Partition] = append(byPartition[r.Partition], keep(r))
			got++
		})
	}
	var out []kept
	for p := range int32(3) {
		out = append(out, byPartition[p]...)
	}
	return out
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
