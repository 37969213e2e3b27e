package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestCeilingSteps runs each step on kfake clusters and checks that it
// moved the whole backlog once: fetch-only reads it, produce-only and both
// leave exactly it on the target.
func TestCeilingSteps(t *testing.T) {
	const (
		topic        = "events"
		partitions   = 3
		perPartition = 500
	)
	tests := []struct {
		mode       string
		wantTarget int64 // records on the target afterwards
	}{
		{"fetch", 0},
		{"produce", partitions * perPartition},
		{"both", partitions * perPartition},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			src := cluster(t, topic, partitions)
			dst := cluster(t, topic, partitions)
			cl := client(t, src)
			for p := range int32(partitions) {
				var recs []*kgo.Record
				for i := range perPartition {
					recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Key: fmt.Appendf(nil, "k%d", i), Value: make([]byte, 100)})
				}
				for i := 0; i < len(recs); i += 50 { // several source batches
					if err := cl.ProduceSync(t.Context(), recs[i:i+50]...).FirstErr(); err != nil {
						t.Fatal(err)
					}
				}
			}
			conf := filepath.Join(t.TempDir(), "catchup.yaml")
			yaml := fmt.Sprintf(`store: file://%s
pipelines:
  - name: bench
    source: {name: source, brokers: [%s]}
    target: {name: target, brokers: [%s]}
    topics: {include: [%s]}
    fetch_bytes: 4096
`, t.TempDir(), src.ListenAddrs()[0], dst.ListenAddrs()[0], topic)
			if err := os.WriteFile(conf, []byte(yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			res, err := run(t.Context(), conf, "", tt.mode)
			if err != nil {
				t.Fatal(err)
			}
			got := struct{ Records, Target int64 }{res.Records, count(t, dst, topic)}
			want := struct{ Records, Target int64 }{partitions * perPartition, tt.wantTarget}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tt.mode, diff)
			}
			if res.Bytes < partitions*perPartition*100 {
				t.Errorf("%s: %d bytes, want at least the values' %d", tt.mode, res.Bytes, partitions*perPartition*100)
			}
		})
	}
}

func cluster(t *testing.T, topic string, partitions int32) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topic))
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

// count returns the records topic holds on c, by its high watermarks.
func count(t *testing.T, c *kfake.Cluster, topic string) int64 {
	t.Helper()
	src, err := pipeline.ConnectReader(config.Cluster{Name: "target", Brokers: c.ListenAddrs()}, "read_uncommitted")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ps, err := src.Partitions(t.Context(), func(s string) bool { return s == topic })
	if err != nil {
		t.Fatal(err)
	}
	marks, err := src.ListOffsets(t.Context(), ps)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, m := range marks {
		n += m.HighWatermark - m.LogStart
	}
	return n
}
