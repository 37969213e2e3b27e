package replicate

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// describingSource is a fake source that describes its topics.
type describingSource struct {
	*fakeCluster
	configs map[string]map[string]string // explicit configs by topic
}

func (s *describingSource) DescribeTopics(ctx context.Context, topics []string) (map[string]TopicSpec, error) {
	counts, err := s.PartitionCounts(ctx, topics)
	if err != nil {
		return nil, err
	}
	out := map[string]TopicSpec{}
	for t, n := range counts {
		out[t] = TopicSpec{Topic: t, Partitions: n, Configs: s.configs[t]}
	}
	return out, nil
}

// creatingTarget is a fake target that creates topics and remembers how.
type creatingTarget struct {
	*fakeCluster
	created []TopicSpec
}

func (c *creatingTarget) CreateTopics(_ context.Context, specs []TopicSpec) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range specs {
		c.created = append(c.created, s)
		for i := range s.Partitions {
			p := catchup.Partition{Topic: s.Topic, Partition: int32(i)}
			if _, ok := c.logs[p]; !ok {
				c.logs[p] = &fakeLog{stalledAt: -1}
			}
		}
	}
	return nil
}

func TestCreateTopicsCopiesPartitionsAndExplicitConfigs(t *testing.T) {
	// The source topic a has 3 partitions; the run selects only partition 0.
	r := newRig(map[catchup.Partition]int{pA: 4, pB: 2, {Topic: "a", Partition: 2}: 1})
	r.dst.logs = map[catchup.Partition]*fakeLog{}
	src := &describingSource{fakeCluster: r.src, configs: map[string]map[string]string{"a": {
		"cleanup.policy":                          "compact,delete",
		"retention.ms":                            "3600000",
		"max.message.bytes":                       "2000000",
		"message.timestamp.type":                  "LogAppendTime",
		"message.timestamp.difference.max.ms":     "1000",
		"message.timestamp.before.max.ms":         "86400000", // the target must accept the old records it was created for
		"message.timestamp.after.max.ms":          "3600000",
		"follower.replication.throttled.replicas": "*",
	}}}
	dst := &creatingTarget{fakeCluster: r.dst}
	o := r.options("run")
	o.Source, o.Target = src, dst
	o.TargetTopic = func(t string) string { return t + ".mirror" }
	o.Partitions = []catchup.Partition{pA}
	o.CreateTopics, o.ReplicationFactor = true, 3
	rep := r.run(t, t.Context(), o)
	if res := rep.Partitions[0]; res.Status != StatusDone || res.Copied != 4 {
		t.Errorf("status %s copied %d err %v; want done, 4", res.Status, res.Copied, res.Err)
	}
	want := []TopicSpec{{Topic: "a.mirror", Partitions: 3, ReplicationFactor: 3, Configs: map[string]string{
		"cleanup.policy":         "compact,delete",
		"retention.ms":           "3600000",
		"max.message.bytes":      "2000512", // room for the provenance header
		"message.timestamp.type": "CreateTime",
	}}}
	if diff := cmp.Diff(want, dst.created); diff != "" {
		t.Errorf("created topics (-want +got):\n%s", diff)
	}
	// A second run finds the topic and creates nothing.
	r.run(t, t.Context(), o)
	if len(dst.created) != 1 {
		t.Errorf("a second run created %d topics more", len(dst.created)-1)
	}
}

func TestCreateTopicsNeverAddsPartitions(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 1, pB: 1})
	delete(r.dst.logs, pB) // the target topic a has 1 partition, the source 2
	o := r.options("run")
	dst := &creatingTarget{fakeCluster: r.dst}
	o.Source, o.Target = &describingSource{fakeCluster: r.src}, dst
	o.CreateTopics = true
	e, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Run(t.Context())
	if err == nil || !strings.Contains(err.Error(), "topic a has 1 partitions on the target but the source has 2") {
		t.Errorf("Run err = %v; want the partition shortfall named", err)
	}
	if len(dst.created) != 0 {
		t.Errorf("created %v; want nothing", dst.created)
	}
}

func TestCreateTopicsNeedsCapableClusters(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 1})
	delete(r.dst.logs, pA)
	o := r.options("run")
	o.CreateTopics = true
	e, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(t.Context()); err == nil || !strings.Contains(err.Error(), "cannot describe") {
		t.Errorf("Run err = %v; want the source's missing capability named", err)
	}
}

// TestTruncatedTargetErrorNamesTheTargetTopic pins the error of a target
// partition that ends below the end the last commit recorded: it names the
// target topic (not the source's) and the reset command with --pipeline.
func TestTruncatedTargetErrorNamesTheTargetTopic(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 6})
	mirror := catchup.Partition{Topic: pA.Topic + ".mirror", Partition: pA.Partition}
	r.dst.logs = map[catchup.Partition]*fakeLog{mirror: {stalledAt: -1}}
	o := r.options("run")
	o.TargetTopic = func(t string) string { return t + ".mirror" }
	if res := r.run(t, t.Context(), o).Partitions[0]; res.Status != StatusDone {
		t.Fatalf("first run: status %s err %v; want done", res.Status, res.Err)
	}
	r.dst.logs[mirror] = &fakeLog{stalledAt: -1} // the target topic recreated
	r.src.logs[pA].recs = append(r.src.logs[pA].recs, catchup.Record{Offset: 6, Value: []byte("x")})
	res := r.run(t, t.Context(), o).Partitions[0]
	for _, want := range []string{"target partition a.mirror/0 ends at 0", "`catchup reset --pipeline p1 --topic a --to earliest`"} {
		if res.Status != StatusFailed || res.Err == nil || !strings.Contains(res.Err.Error(), want) {
			t.Errorf("second run: status %s err %v; want failed naming %s", res.Status, res.Err, want)
		}
	}
}
