package replicate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/kafka-catchup/catchup/internal/backoff"
	"github.com/kafka-catchup/catchup/internal/catchup"
)

// TopicDescriber is a Source that can describe its topics; Options.CreateTopics
// needs one. kafkago.Source implements it.
type TopicDescriber interface {
	// DescribeTopics returns, for each of topics that exists, its partition
	// count and the configs set explicitly on the topic (not those it
	// inherits from broker or built-in defaults). A missing topic is absent
	// from the map.
	DescribeTopics(ctx context.Context, topics []string) (map[string]catchup.TopicSpec, error)
}

// TopicCreator is a Target that can create topics; Options.CreateTopics needs
// one. kafkago.Target implements it.
type TopicCreator interface {
	// CreateTopics creates each of specs. A topic that exists already (made
	// meanwhile by another run) is not an error: the caller checks partition
	// counts afterwards. It returns once the cluster accepted the creation,
	// which may be before every broker knows the topic.
	CreateTopics(ctx context.Context, specs []catchup.TopicSpec) error
}

// PartitionAdder is a Target that can add partitions to its topics;
// Options.CreateTopics uses it when a source topic has grown. kafkago.Target
// implements it.
type PartitionAdder interface {
	// AddPartitions raises the partition count of each topic in counts to
	// the count given. A topic that has that many already (grown meanwhile
	// by another run) is not an error: the caller checks partition counts
	// afterwards.
	AddPartitions(ctx context.Context, counts map[string]int) error
}

// copiedConfig reports whether create_topics copies topic config name from
// the source when it is set explicitly there: the configs that decide what
// the target keeps and accepts. Left out: message.timestamp.type (always
// CreateTime, see targetConfigs), message.timestamp.difference.max.ms
// (removed in Kafka 4.0, which refuses it) and its successors
// message.timestamp.before.max.ms and after.max.ms: a catch-up target must
// accept the source's timestamps, and with the source's bound it refuses
// every record older than that ("Invalid Timestamp"), the very backlog it
// was created for; and configs about placement and local tuning.
func copiedConfig(name string) bool {
	switch name {
	case "cleanup.policy", "retention.ms", "retention.bytes", "max.message.bytes",
		"min.insync.replicas", "compression.type", "segment.bytes", "segment.ms",
		"min.compaction.lag.ms", "max.compaction.lag.ms", "delete.retention.ms",
		"min.cleanable.dirty.ratio":
		return true
	}
	return false
}

// provenanceRoomBytes is what a created topic's max.message.bytes gets on top
// of the source's: the provenance header (key, "v1:", cluster, topic of up to
// 249 characters, partition, offset, varint lengths) makes every copied
// record larger, so a record at the source's limit would be refused.
const provenanceRoomBytes = 512

// targetConfigs returns the configs of a target topic created for a source
// topic with the explicit configs src.
func (e *Engine) targetConfigs(src map[string]string) map[string]string {
	out := map[string]string{
		// Copies carry the source's timestamps (the append time of a
		// LogAppendTime source topic among them); LogAppendTime on the
		// target would replace them with the time of the copy.
		"message.timestamp.type": "CreateTime",
	}
	for k, v := range src {
		if copiedConfig(k) {
			out[k] = v
		}
	}
	if v, ok := out["max.message.bytes"]; ok && e.o.Provenance {
		if n, err := strconv.ParseInt(v, 10, 32); err == nil && n > 0 {
			out["max.message.bytes"] = strconv.FormatInt(n+provenanceRoomBytes, 10)
		}
	}
	return out
}

// createTopics creates the target topics missing, each with the partition
// count and copied configs of the source topic from[t] maps onto it, and
// waits until the target's metadata lists them.
func (e *Engine) createTopics(ctx context.Context, missing []string, from map[string]string) (map[string]int, error) {
	describer, ok := e.o.Source.(TopicDescriber)
	if !ok {
		return nil, errors.New("create_topics: the source cannot describe its topics")
	}
	creator, ok := e.o.Target.(TopicCreator)
	if !ok {
		return nil, errors.New("create_topics: the target cannot create topics")
	}
	srcTopics := make([]string, 0, len(missing))
	for _, t := range missing {
		srcTopics = append(srcTopics, from[t])
	}
	described, err := describer.DescribeTopics(ctx, srcTopics)
	if err != nil {
		return nil, fmt.Errorf("describe source topics %v: %w", srcTopics, err)
	}
	rf := e.o.ReplicationFactor
	if rf <= 0 {
		rf = -1
	}
	specs := make([]catchup.TopicSpec, 0, len(missing))
	for _, t := range missing {
		src, ok := described[from[t]]
		if !ok || src.Partitions <= 0 {
			return nil, fmt.Errorf("create topic %s: source topic %s is not described by the source", t, from[t])
		}
		specs = append(specs, catchup.TopicSpec{Topic: t, Partitions: src.Partitions, ReplicationFactor: rf, Configs: e.targetConfigs(src.Configs)})
	}
	if err := creator.CreateTopics(ctx, specs); err != nil {
		return nil, fmt.Errorf("create target topics: %w", err)
	}
	need := make(map[string]int, len(specs))
	for _, s := range specs {
		keys := slices.Sorted(maps.Keys(s.Configs))
		e.o.Log.InfoContext(ctx, "topic created", "pipeline", e.o.Pipeline, "topic", s.Topic,
			"source_topic", from[s.Topic], "partitions", s.Partitions, "replication_factor", s.ReplicationFactor, "configs", keys)
		need[s.Topic] = s.Partitions
	}
	return e.awaitTopics(ctx, need)
}

// addPartitions grows each target topic of short to the partition count of
// its source topic from[t] (at least short[t]), and waits until the
// target's metadata lists them.
func (e *Engine) addPartitions(ctx context.Context, short map[string]int, from map[string]string) (map[string]int, error) {
	adder, ok := e.o.Target.(PartitionAdder)
	if !ok {
		return nil, errors.New("create_topics: the target cannot add partitions")
	}
	// A run given a subset of partitions (a dispatcher shard) knows only
	// the highest it was given: grow to the source's count at once, so that
	// shards do not grow the topic one partition at a time.
	if describer, ok := e.o.Source.(TopicDescriber); ok {
		srcTopics := make([]string, 0, len(short))
		for t := range short {
			srcTopics = append(srcTopics, from[t])
		}
		described, err := describer.DescribeTopics(ctx, srcTopics)
		if err != nil {
			return nil, fmt.Errorf("describe source topics %v: %w", srcTopics, err)
		}
		for t := range short {
			short[t] = max(short[t], described[from[t]].Partitions)
		}
	}
	if err := adder.AddPartitions(ctx, short); err != nil {
		return nil, fmt.Errorf("add partitions to target topics: %w", err)
	}
	for _, t := range slices.Sorted(maps.Keys(short)) {
		e.o.Log.InfoContext(ctx, "partitions added", "pipeline", e.o.Pipeline, "topic", t,
			"source_topic", from[t], "partitions", short[t])
	}
	return e.awaitTopics(ctx, short)
}

// awaitTopics polls the target's partition counts until every topic of need
// is listed with at least the partitions need gives it, for at most
// topicWait: a broker learns of a new topic or partition from the
// controller a moment after the change was accepted.
func (e *Engine) awaitTopics(ctx context.Context, need map[string]int) (map[string]int, error) {
	const topicWait = 30 * time.Second
	ctx, cancel := context.WithTimeout(ctx, topicWait)
	defer cancel()
	topics := slices.Sorted(maps.Keys(need))
	for attempt := 1; ; attempt++ {
		have, err := e.o.Target.PartitionCounts(ctx, topics)
		if err == nil && covers(have, need) {
			return have, nil
		}
		if !backoff.Sleep(ctx, backoff.Delay(attempt, e.o.RetryBackoff, maxRetryBackoff)) {
			if err == nil {
				err = fmt.Errorf("topics %v not all listed by the target with their partitions after %v", topics, topicWait)
			}
			return nil, err
		}
	}
}

// covers reports whether have lists every topic of need with at least the
// partitions need gives it.
func covers(have, need map[string]int) bool {
	for t, n := range need {
		if have[t] < n {
			return false
		}
	}
	return true
}

// targetCheck is what checkTarget found and did.
type targetCheck struct {
	bad           map[string]error // by source topic: the target topic is missing or short
	configChanges []ConfigChange
	configSynced  bool
	configError   string
	acls          *ACLSync
}

// checkTarget verifies that every source topic exists on the target with at
// least as many partitions. With CreateTopics it creates the missing topics
// and adds the partitions a grown source topic has, first, then syncs the
// copied configs (syncConfigs), and with SyncACLs gives the target topics
// their source topics' ACLs (syncACLs). A topic that is still missing or short is a
// problem of that topic alone: it is returned by source topic, and the other
// topics are copied. A config or ACL sync that fails is logged, goes in
// the result, and the run goes on. The error is for the run as a whole (the target unreachable, two
// topics onto one).
func (e *Engine) checkTarget(ctx context.Context, parts []catchup.Partition) (targetCheck, error) {
	need := map[string]int{} // target topic → partitions needed
	from := map[string]string{}
	for _, m := range parts {
		t := e.o.TargetTopic(m.Topic)
		need[t] = max(need[t], int(m.Partition)+1)
		if other, ok := from[t]; ok && other != m.Topic {
			return targetCheck{}, fmt.Errorf("source topics %s and %s both map to target topic %s; one target partition must have one source partition", other, m.Topic, t)
		}
		from[t] = m.Topic
	}
	topics := slices.Sorted(maps.Keys(need))
	have, err := e.o.Target.PartitionCounts(ctx, topics)
	if err != nil {
		return targetCheck{}, fmt.Errorf("describe target topics: %w", err)
	}
	if have == nil {
		have = map[string]int{}
	}
	var missing []string
	short := map[string]int{}
	for _, t := range topics {
		switch n, ok := have[t]; {
		case !ok:
			missing = append(missing, t)
		case n < need[t]:
			short[t] = need[t]
		}
	}
	if len(missing) > 0 && e.o.CreateTopics {
		created, err := e.createTopics(ctx, missing, from)
		if err != nil {
			return targetCheck{}, err
		}
		maps.Copy(have, created)
	}
	if len(short) > 0 && e.o.CreateTopics {
		grown, err := e.addPartitions(ctx, short, from)
		if err != nil {
			return targetCheck{}, err
		}
		maps.Copy(have, grown)
	}
	bad := map[string]error{}
	for _, t := range topics {
		switch n, ok := have[t]; {
		case !ok:
			bad[from[t]] = fmt.Errorf("topic %s does not exist on the target: create it with at least %d partitions, "+
				"or set create_topics: true", t, need[t])
		case n < need[t]:
			bad[from[t]] = fmt.Errorf("topic %s has %d partitions on the target but the source has %d: add partitions to the target topic "+
				"(kafka-topics.sh --bootstrap-server TARGET --alter --topic %s --partitions %d), or set create_topics: true", t, n, need[t], t, need[t])
		}
	}
	for st, err := range bad {
		e.o.Log.ErrorContext(ctx, "target topic unusable", "pipeline", e.o.Pipeline, "topic", st, "error", err)
	}
	tc := targetCheck{bad: bad}
	usable := map[string]string{}
	for t, st := range from {
		if _, ok := have[t]; ok && bad[st] == nil {
			usable[t] = st
		}
	}
	tc.acls = e.syncACLs(ctx, usable)
	if e.o.CreateTopics {
		changes, ran, err := e.syncConfigs(ctx, usable)
		if err != nil {
			e.o.Log.WarnContext(ctx, "topic configs not synced", "pipeline", e.o.Pipeline, "error", err)
			tc.configError = err.Error()
		}
		tc.configChanges, tc.configSynced = changes, ran
	}
	return tc, nil
}
