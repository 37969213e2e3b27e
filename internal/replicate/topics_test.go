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

func (s *describingSource) DescribeTopics(ctx context.Context, topics []string) (map[string]catchup.TopicSpec, error) {
	counts, err := s.PartitionCounts(ctx, topics)
	if err != nil {
		return nil, err
	}
	out := map[string]catchup.TopicSpec{}
	for t, n := range counts {
		out[t] = catchup.TopicSpec{Topic: t, Partitions: n, Configs: s.configs[t]}
	}
	return out, nil
}

// creatingTarget is a fake target that creates topics and remembers how.
type creatingTarget struct {
	*fakeCluster
	created []catchup.TopicSpec
	grown   []map[string]int
}

func (c *creatingTarget) CreateTopics(_ context.Context, specs []catchup.TopicSpec) error {
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

// AddPartitions adds the partitions missing, as CreatePartitions does, and
// remembers the counts asked for.
func (c *creatingTarget) AddPartitions(_ context.Context, counts map[string]int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.grown = append(c.grown, counts)
	for t, n := range counts {
		for i := range n {
			p := catchup.Partition{Topic: t, Partition: int32(i)}
			if _, ok := c.logs[p]; !ok {
				c.logs[p] = &fakeLog{}
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
	want := []catchup.TopicSpec{{Topic: "a.mirror", Partitions: 3, ReplicationFactor: 3, Configs: map[string]string{
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

// TestCreateTopicsAddsPartitions grows a target topic to its source's
// partition count before copying: to the count the source describes, even
// when the run was given only some of the partitions (a dispatcher shard).
func TestCreateTopicsAddsPartitions(t *testing.T) {
	pA2 := catchup.Partition{Topic: "a", Partition: 2}
	r := newRig(map[catchup.Partition]int{pA: 1, pB: 2, pA2: 3, pC: 1})
	delete(r.dst.logs, pB) // the target topic a has 1 partition, the source 3
	delete(r.dst.logs, pA2)
	o := r.options("run")
	dst := &creatingTarget{fakeCluster: r.dst}
	o.Source, o.Target = &describingSource{fakeCluster: r.src}, dst
	o.CreateTopics = true
	o.Partitions = []catchup.Partition{pA, pB, pC}
	rep := r.run(t, t.Context(), o)
	if diff := cmp.Diff([]map[string]int{{"a": 3}}, dst.grown); diff != "" {
		t.Errorf("partitions added (-want +got):\n%s", diff)
	}
	for _, res := range rep.Partitions {
		if res.Status != StatusDone {
			t.Errorf("%s: status %s err %v; want done", res.Partition, res.Status, res.Err)
		}
	}
	if n := len(r.dst.logs[pB].recs); n != 2 {
		t.Errorf("target %s holds %d records, want 2", pB, n)
	}
	if len(dst.created) != 0 {
		t.Errorf("created %v; want nothing", dst.created)
	}
	r.run(t, t.Context(), o)
	if len(dst.grown) != 1 {
		t.Errorf("a second run added partitions again: %v", dst.grown)
	}
}

// TestShortTargetTopicFailsThatTopicAlone runs without create_topics onto a
// target whose topic a has fewer partitions than the source's and whose
// topic c is missing: the partitions of a and c fail, naming the command to
// run, and topic b is copied all the same.
func TestShortTargetTopicFailsThatTopicAlone(t *testing.T) {
	pD := catchup.Partition{Topic: "c", Partition: 0}
	r := newRig(map[catchup.Partition]int{pA: 1, pB: 1, pC: 3, pD: 1})
	delete(r.dst.logs, pB)
	delete(r.dst.logs, pD)
	o := r.options("run")
	rep := r.run(t, t.Context(), o)
	want := map[catchup.Partition]string{
		pA: "topic a has 1 partitions on the target but the source has 2: add partitions to the target topic " +
			"(kafka-topics.sh --bootstrap-server TARGET --alter --topic a --partitions 2), or set create_topics: true",
		pB: "topic a has 1 partitions",
		pD: "topic c does not exist on the target: create it with at least 1 partitions",
	}
	for _, res := range rep.Partitions {
		w, bad := want[res.Partition]
		switch {
		case bad && (res.Status != StatusFailed || res.Err == nil || !strings.Contains(res.Err.Error(), w)):
			t.Errorf("%s: status %s err %v; want failed saying %q", res.Partition, res.Status, res.Err, w)
		case !bad && (res.Status != StatusDone || res.Copied != 3):
			t.Errorf("%s: status %s copied %d err %v; want done, 3", res.Partition, res.Status, res.Copied, res.Err)
		}
	}
	if cps := r.checkpoints(t); cps[pA].Exists || cps[pB].Exists || cps[pD].Exists {
		t.Errorf("checkpoints of the failed topics were written: %+v", cps)
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
	for _, want := range []string{"target partition a.mirror/0 ends at 0", "`catchup reset --pipeline p1 --topic a --to earliest --allow-duplicates`"} {
		if res.Status != StatusFailed || res.Err == nil || !strings.Contains(res.Err.Error(), want) {
			t.Errorf("second run: status %s err %v; want failed naming %s", res.Status, res.Err, want)
		}
	}
}
