package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestLogBytes: the bytes of a topic's log on a 3-broker cluster, each
// partition once although every replica describes it, and an empty
// partition at 0.
func TestLogBytes(t *testing.T) {
	const topic, n = "events", 5
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(3, topic))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(0), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for i := range n {
		// one batch a record: 61 bytes of batch header and a record of 109
		// (length 2, attributes, timestamp and offset deltas, key length 1
		// each, value length 2, value 100, header count 1)
		r := &kgo.Record{Topic: topic, Partition: int32(i % 2), Value: bytes.Repeat([]byte("v"), 100)}
		if err := cl.ProduceSync(t.Context(), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	got, err := logBytes(t.Context(), strings.Join(c.ListenAddrs(), ","), topic)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(n * (61 + 109)); got != want {
		t.Errorf("logBytes = %d, want %d", got, want)
	}
	if _, err := logBytes(t.Context(), c.ListenAddrs()[0], "absent"); !errors.Is(err, errNoTopic) {
		t.Errorf("logBytes of an absent topic: %v, want errNoTopic", err)
	}
}

// TestLargestReplicas: a partition counts at its largest replica, whichever
// broker answers first; other topics and an error code are not counted.
func TestLargestReplicas(t *testing.T) {
	resp := func(code int16, sizes map[string]map[int32]int64) *kmsg.DescribeLogDirsResponse {
		r := kmsg.NewPtrDescribeLogDirsResponse()
		d := kmsg.NewDescribeLogDirsResponseDir()
		d.Dir, d.ErrorCode = "/data", code
		for topic, ps := range sizes {
			rt := kmsg.NewDescribeLogDirsResponseDirTopic()
			rt.Topic = topic
			for p, s := range ps {
				rp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
				rp.Partition, rp.Size = p, s
				rt.Partitions = append(rt.Partitions, rp)
			}
			d.Topics = append(d.Topics, rt)
		}
		r.Dirs = append(r.Dirs, d)
		return r
	}
	size := map[int32]int64{}
	for _, r := range []*kmsg.DescribeLogDirsResponse{
		resp(0, map[string]map[int32]int64{"events": {0: 100, 1: 40}, "other": {0: 999}}),
		resp(0, map[string]map[int32]int64{"events": {0: 70, 1: 50}}),
		resp(0, map[string]map[int32]int64{"events": {0: 90}}),
	} {
		if err := largestReplicas(size, "events", r); err != nil {
			t.Fatal(err)
		}
	}
	if size[0] != 100 || size[1] != 50 || len(size) != 2 {
		t.Errorf("largestReplicas = %v, want map[0:100 1:50]", size)
	}
	if err := largestReplicas(size, "events", resp(56, nil)); err == nil || !strings.Contains(err.Error(), "/data") {
		t.Errorf("a log dir with KAFKA_STORAGE_ERROR: %v, want an error naming the dir", err)
	}
}
