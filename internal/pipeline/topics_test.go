package pipeline_test

// Topic creation and config sync on the target, and loop prevention between two clusters,
// through the whole stack on in-process kfake clusters. (TestMain is in
// lease_test.go.)

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/kafkago/kafkagotest"
	"github.com/kafka-catchup/catchup/internal/metrics"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

func startCluster(t *testing.T) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func createTopic(t *testing.T, c *kfake.Cluster, topic string, partitions int32, configs map[string]string) {
	t.Helper()
	if err := c.CreateTopic(topic, partitions, configs); err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
}

// produceValues writes one record per value to partition p of topic.
func produceValues(t *testing.T, c *kfake.Cluster, topic string, p int32, values ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for _, v := range values {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Key: []byte(v), Value: []byte(v)})
	}
	if err := cl.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// values returns the values of partition p of topic on the cluster.
func values(t *testing.T, c *kfake.Cluster, topic string, p int32) []string {
	t.Helper()
	s, err := pipeline.ConnectReader(config.Cluster{Name: "read", Brokers: c.ListenAddrs()}, "read_uncommitted")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	part := catchup.Partition{Topic: topic, Partition: p}
	marks, err := s.ListOffsets(t.Context(), []catchup.Partition{part})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for off := marks[0].LogStart; off < marks[0].HighWatermark; {
		f, err := s.Fetch(t.Context(), part, off, 1<<20)
		if err != nil || f.Next <= off {
			t.Fatalf("read %s at %d: %v", part, off, err)
		}
		for _, r := range f.Records {
			out = append(out, string(r.Value))
		}
		off = f.Next
	}
	return out
}

// openPipeline parses yaml (one file, several pipelines) and opens the
// pipeline named name on an in-memory store.
func openPipeline(t *testing.T, yaml, name string, store checkpoint.Store) *pipeline.Pipeline {
	t.Helper()
	f, err := config.Parse([]byte(yaml), "pipelines.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pc, err := f.Pipeline(name)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.Open(t.Context(), f, pc, pipeline.Options{Owner: "test", Store: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func runPipeline(t *testing.T, p *pipeline.Pipeline) *replicate.Report {
	t.Helper()
	rep, err := p.Engine.Run(t.Context())
	if err != nil {
		t.Fatalf("run %s: %v", p.Config.Name, err)
	}
	for _, r := range rep.Partitions {
		if r.Status != replicate.StatusDone {
			t.Fatalf("run %s: %s %s: %v", p.Config.Name, r.Partition, r.Status, r.Err)
		}
	}
	return rep
}

func TestCreateTopicsCopiesPartitionCountAndConfigs(t *testing.T) {
	src, dst := startCluster(t), startCluster(t)
	explicit := map[string]string{
		"cleanup.policy":        "compact,delete",
		"retention.ms":          "86400000",
		"retention.bytes":       "1073741824",
		"max.message.bytes":     "2097152",
		"min.insync.replicas":   "1",
		"compression.type":      "zstd",
		"segment.bytes":         "52428800",
		"min.compaction.lag.ms": "1000",
		"delete.retention.ms":   "3600000",
		// Not copied as such: the copies keep the source's timestamps.
		"message.timestamp.type": "LogAppendTime",
	}
	createTopic(t, src, "orders", 4, explicit)
	createTopic(t, src, "audit", 2, nil)
	createTopic(t, src, "short", 3, nil)
	createTopic(t, dst, "short.dr", 2, nil) // exists with too few partitions
	for p := range int32(4) {
		produceValues(t, src, "orders", p, fmt.Sprintf("o%d-a", p), fmt.Sprintf("o%d-b", p))
	}
	produceValues(t, src, "audit", 1, "a1")

	yaml := func(include string) string {
		return fmt.Sprintf(`pipelines:
  - name: dr
    source: {name: src, brokers: [%s]}
    target: {name: dst, brokers: [%s]}
    topics: {include: [%s]}
    target_topic: "{topic}.dr"
    create_topics: true
`, src.ListenAddrs()[0], dst.ListenAddrs()[0], include)
	}
	store := checkpoint.NewMemStore(nil)
	runPipeline(t, openPipeline(t, yaml("orders, audit"), "dr", store))

	target, err := pipeline.ConnectReader(config.Cluster{Name: "dst", Brokers: dst.ListenAddrs()}, "read_committed")
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	got, err := target.DescribeTopics(t.Context(), []string{"orders.dr", "audit.dr"})
	if err != nil {
		t.Fatal(err)
	}
	wantOrders := map[string]string{"message.timestamp.type": "CreateTime"}
	for k, v := range explicit {
		if k != "message.timestamp.type" {
			wantOrders[k] = v
		}
	}
	wantOrders["max.message.bytes"] = "2097664" // + 512 bytes for the provenance header
	want := map[string]catchup.TopicSpec{
		"orders.dr": {Topic: "orders.dr", Partitions: 4, Configs: wantOrders},
		"audit.dr":  {Topic: "audit.dr", Partitions: 2, Configs: map[string]string{"message.timestamp.type": "CreateTime"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("created target topics (-want +got):\n%s", diff)
	}
	for p := range int32(4) {
		if got, want := values(t, dst, "orders.dr", p), []string{fmt.Sprintf("o%d-a", p), fmt.Sprintf("o%d-b", p)}; !slices.Equal(got, want) {
			t.Errorf("orders.dr/%d holds %v, want %v", p, got, want)
		}
	}
	if got := values(t, dst, "audit.dr", 1); !slices.Equal(got, []string{"a1"}) {
		t.Errorf("audit.dr/1 holds %v, want [a1]", got)
	}

	// A target topic with fewer partitions is grown to the source's count,
	// and the run copies all of them.
	p := openPipeline(t, yaml("short"), "dr", store)
	if rep, err := p.Engine.Run(t.Context()); err != nil || len(rep.Partitions) != 3 || rep.Partitions[2].Status != replicate.StatusDone {
		t.Errorf("run onto a target topic with 2 of 3 partitions: %+v, %v; want its 3 partitions done", rep, err)
	}
	if got, err := target.DescribeTopics(t.Context(), []string{"short.dr"}); err != nil || got["short.dr"].Partitions != 3 {
		t.Errorf("short.dr after the run: %+v, %v; want 3 partitions", got["short.dr"], err)
	}
}

func TestLoopPreventionSkipsRecordsThatCameFromTheTarget(t *testing.T) {
	a, b := startCluster(t), startCluster(t)
	createTopic(t, a, "events", 1, nil)
	createTopic(t, b, "events", 1, nil)
	produceValues(t, a, "events", 0, "a1", "a2", "a3")
	produceValues(t, b, "events", 0, "b1", "b2")
	yaml := fmt.Sprintf(`pipelines:
  - name: a-to-b
    source: {name: a, brokers: [%[1]s]}
    target: {name: b, brokers: [%[2]s]}
    topics: {include: [events]}
  - name: b-to-a
    source: {name: b, brokers: [%[2]s]}
    target: {name: a, brokers: [%[1]s]}
    topics: {include: [events]}
`, a.ListenAddrs()[0], b.ListenAddrs()[0])
	store := checkpoint.NewMemStore(nil)
	aToB := openPipeline(t, yaml, "a-to-b", store)
	bToA := openPipeline(t, yaml, "b-to-a", store)

	if rep := runPipeline(t, aToB); rep.Partitions[0].Copied != 3 || rep.Partitions[0].LoopSkipped != 0 {
		t.Errorf("a-to-b first: copied %d, loop-skipped %d; want 3, 0", rep.Partitions[0].Copied, rep.Partitions[0].LoopSkipped)
	}
	// b now holds b1 b2 and copies of a1 a2 a3, which must not go back.
	if rep := runPipeline(t, bToA); rep.Partitions[0].Copied != 2 || rep.Partitions[0].LoopSkipped != 3 {
		t.Errorf("b-to-a: copied %d, loop-skipped %d; want 2, 3", rep.Partitions[0].Copied, rep.Partitions[0].LoopSkipped)
	}
	// a now holds copies of b1 b2, which must not go back either.
	produceValues(t, a, "events", 0, "a4")
	if rep := runPipeline(t, aToB); rep.Partitions[0].Copied != 1 || rep.Partitions[0].LoopSkipped != 2 {
		t.Errorf("a-to-b again: copied %d, loop-skipped %d; want 1, 2", rep.Partitions[0].Copied, rep.Partitions[0].LoopSkipped)
	}
	runPipeline(t, bToA)
	if got, want := values(t, a, "events", 0), []string{"a1", "a2", "a3", "b1", "b2", "a4"}; !slices.Equal(got, want) {
		t.Errorf("cluster a holds %v, want %v", got, want)
	}
	if got, want := values(t, b, "events", 0), []string{"b1", "b2", "a1", "a2", "a3", "a4"}; !slices.Equal(got, want) {
		t.Errorf("cluster b holds %v, want %v", got, want)
	}
}

// TestTopicConfigSyncFailedMetric: with create_topics, a topic config sync
// the target refuses (IncrementalAlterConfigs) lets the run copy and says
// so in the report, in TopicConfigSyncFailed 1 and in
// catchup_topic_config_sync_failed 1; the next run tries again at once and
// says 0 once the target accepts; a run within config_sync_interval after
// that has no figure, and the gauge keeps the 0.
func TestTopicConfigSyncFailedMetric(t *testing.T) {
	src, dst := startCluster(t), startCluster(t)
	createTopic(t, src, "orders", 1, map[string]string{"retention.ms": "3600000"})
	createTopic(t, dst, "orders", 1, nil)
	produceValues(t, src, "orders", 0, "a")
	var refuse atomic.Bool
	kafkagotest.RefuseAlterConfigs(dst, kerr.TopicAuthorizationFailed.Code, refuse.Load)
	p := openPipeline(t, fmt.Sprintf(`pipelines:
  - name: dr
    source: {name: src, brokers: [%s]}
    target: {name: dst, brokers: [%s]}
    topics: {include: [orders]}
    create_topics: true
`, src.ListenAddrs()[0], dst.ListenAddrs()[0]), "dr", checkpoint.NewMemStore(nil))
	check := syncFigureCheck(t, metrics.TopicConfigSyncFailed, "catchup_topic_config_sync_failed")

	refuse.Store(true)
	rep := runPipeline(t, p)
	check("a refused sync", rep, "1 Count", "1")
	if w := `alter configs [message.timestamp.type retention.ms] of topic orders in cluster "dst"`; !strings.Contains(rep.ConfigSyncError, w) {
		t.Errorf("config sync error %q does not say %q", rep.ConfigSyncError, w)
	}
	if got := values(t, dst, "orders", 0); !slices.Equal(got, []string{"a"}) {
		t.Errorf("orders/0 holds %v, want [a]: the copy must not wait on config sync", got)
	}
	refuse.Store(false)
	check("the next run's sync, accepted", runPipeline(t, p), "0 Count", "0")
	check("a run with no sync due", runPipeline(t, p), "absent", "0")
}
