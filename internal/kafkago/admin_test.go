package kafkago_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/kafkago"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

var (
	_ replicate.TopicDescriber    = (*kafkago.Source)(nil)
	_ replicate.TopicCreator      = (*kafkago.Target)(nil)
	_ replicate.PartitionAdder    = (*kafkago.Target)(nil)
	_ replicate.TopicConfigReader = (*kafkago.Source)(nil)
	_ replicate.TopicConfigSyncer = (*kafkago.Target)(nil)
)

// TestAlterConfigsSetsOnlyThoseGiven changes one config of a topic with
// IncrementalAlterConfigs: the others set on it stay.
func TestAlterConfigsSetsOnlyThoseGiven(t *testing.T) {
	ctx := testContext(t)
	c := newCluster(t)
	if err := c.CreateTopic("kept", 1, map[string]string{"retention.ms": "3600000", "cleanup.policy": "compact,delete"}); err != nil {
		t.Fatal(err)
	}
	tg := newTarget(t, c, config.Producer{})
	if err := tg.AlterConfigs(ctx, map[string]map[string]string{"kept": {"retention.ms": "7200000"}}); err != nil {
		t.Fatalf("AlterConfigs: %v", err)
	}
	got, err := tg.ExplicitConfigs(ctx, []string{"kept"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]map[string]string{"kept": {"retention.ms": "7200000", "cleanup.policy": "compact,delete"}}, got); diff != "" {
		t.Errorf("configs after AlterConfigs (-want +got):\n%s", diff)
	}
	err = tg.AlterConfigs(ctx, map[string]map[string]string{"absent": {"retention.ms": "1"}})
	if err == nil || !strings.Contains(err.Error(), "alter configs [retention.ms] of topic absent") {
		t.Errorf("AlterConfigs of a missing topic: %v; want an error naming it", err)
	}
}

func TestDescribeTopicsReportsPartitionsAndExplicitConfigs(t *testing.T) {
	ctx := testContext(t)
	c := newCluster(t)
	if err := c.CreateTopic("logs", 3, map[string]string{"retention.ms": "3600000", "cleanup.policy": "compact,delete"}); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTopic("plain", 2, nil); err != nil {
		t.Fatal(err)
	}
	s := newSource(t, c, "read_committed")
	got, err := s.DescribeTopics(ctx, []string{"logs", "plain", "absent"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]catchup.TopicSpec{
		"logs":  {Topic: "logs", Partitions: 3, Configs: map[string]string{"retention.ms": "3600000", "cleanup.policy": "compact,delete"}},
		"plain": {Topic: "plain", Partitions: 2, Configs: map[string]string{}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DescribeTopics (-want +got):\n%s", diff)
	}

	// The values in force include the defaults.
	cfgs, err := s.Cluster().TopicConfigs(ctx, []string{"plain"})
	if err != nil {
		t.Fatal(err)
	}
	if v := cfgs["plain"].Values["retention.ms"]; v != "604800000" {
		t.Errorf("retention.ms of plain = %q, want the default 604800000", v)
	}
}

func TestCreateTopicsCreatesOnceWithConfigs(t *testing.T) {
	ctx := testContext(t)
	c := newCluster(t)
	tg := newTarget(t, c, config.Producer{})
	spec := catchup.TopicSpec{Topic: "copy", Partitions: 4, ReplicationFactor: -1,
		Configs: map[string]string{"retention.ms": "1000", "max.message.bytes": "2000000"}}
	if err := tg.CreateTopics(ctx, []catchup.TopicSpec{spec}); err != nil {
		t.Fatalf("CreateTopics: %v", err)
	}
	// Again: the topic exists, which is fine.
	if err := tg.CreateTopics(ctx, []catchup.TopicSpec{spec}); err != nil {
		t.Fatalf("CreateTopics of an existing topic: %v", err)
	}
	counts, err := tg.PartitionCounts(ctx, []string{"copy"})
	if err != nil || counts["copy"] != 4 {
		t.Fatalf("PartitionCounts = %v, %v; want 4 partitions", counts, err)
	}
	s := newSource(t, c, "read_committed")
	cfgs, err := s.Cluster().TopicConfigs(ctx, []string{"copy"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(spec.Configs, cfgs["copy"].Explicit); diff != "" {
		t.Errorf("configs of the created topic (-want +got):\n%s", diff)
	}

	// A replication factor the cluster cannot meet is an error naming it.
	err = tg.CreateTopics(ctx, []catchup.TopicSpec{{Topic: "wide", Partitions: 1, ReplicationFactor: 3}})
	if !errors.Is(err, kafka.InvalidReplicationFactor) || !strings.Contains(err.Error(), "create topic wide") {
		t.Errorf("CreateTopics with replication factor 3 on one broker: %v; want INVALID_REPLICATION_FACTOR naming the topic", err)
	}
}

// TestAddPartitionsGrowsOnce grows a topic with CreatePartitions; asking
// again for the count it has (another run grew it meanwhile) is no error.
func TestAddPartitionsGrowsOnce(t *testing.T) {
	ctx := testContext(t)
	c := newCluster(t, kfake.SeedTopics(5, "grows"))
	tg := newTarget(t, c, config.Producer{})
	for range 2 {
		if err := tg.AddPartitions(ctx, map[string]int{"grows": 7}); err != nil {
			t.Fatalf("AddPartitions: %v", err)
		}
	}
	counts, err := tg.PartitionCounts(ctx, []string{"grows"})
	if err != nil || counts["grows"] != 7 {
		t.Fatalf("PartitionCounts = %v, %v; want 7 partitions", counts, err)
	}
	err = tg.AddPartitions(ctx, map[string]int{"absent": 3})
	if !errors.Is(err, kafka.UnknownTopicOrPartition) || !strings.Contains(err.Error(), "add partitions to topic absent (to 3)") {
		t.Errorf("AddPartitions of a missing topic: %v; want UNKNOWN_TOPIC_OR_PARTITION naming it", err)
	}
}

func TestGroupOffsetsAndMembers(t *testing.T) {
	ctx := testContext(t)
	c := newCluster(t, kfake.SeedTopics(2, "events"))
	cl := newSource(t, c, "read_committed").Cluster()

	g, err := cl.DescribeGroup(ctx, "nobody")
	if err != nil || g.Active() {
		t.Fatalf("DescribeGroup of an unknown group = %+v, %v; want an inactive group", g, err)
	}
	offs, err := cl.CommittedOffsets(ctx, "nobody")
	if err != nil || len(offs) != 0 {
		t.Fatalf("CommittedOffsets of an unknown group = %v, %v; want none", offs, err)
	}

	want := map[catchup.Partition]int64{{Topic: "events", Partition: 0}: 7, {Topic: "events", Partition: 1}: 0}
	if err := cl.CommitOffsets(ctx, "readers", want); err != nil {
		t.Fatalf("CommitOffsets: %v", err)
	}
	got, err := cl.CommittedOffsets(ctx, "readers")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CommittedOffsets (-want +got):\n%s", diff)
	}

	// A live consumer makes the group active, and the coordinator refuses
	// a commit from outside.
	consumer, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumerGroup("readers"), kgo.ConsumeTopics("events"))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	for { // the client joins the group in the background

		if g, err = cl.DescribeGroup(ctx, "readers"); err != nil {
			t.Fatal(err)
		}
		if g.Active() || ctx.Err() != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(g.Members) != 1 {
		t.Errorf("DescribeGroup with one consumer = %+v; want one member", g)
	}
	if err := cl.CommitOffsets(ctx, "readers", want); err == nil {
		t.Errorf("CommitOffsets on a group with a member succeeded; want a refusal")
	}
}
