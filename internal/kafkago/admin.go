package kafkago

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol/describegroups"
	"github.com/segmentio/kafka-go/protocol/findcoordinator"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// Admin requests go through kafka-go's Client (over the Cluster's Transport),
// which routes DescribeConfigs and CreateTopics to the controller and group
// requests to the group coordinator. The API versions they negotiate are all
// still served by Kafka 4.x, which removed the oldest ones (KIP-896):
// CreateTopics v2+ (kafka-go speaks up to v5), DescribeConfigs v1+ (v3),
// OffsetFetch v1+ (v5), OffsetCommit v2+ (v7), DescribeGroups v0+ (v5), FindCoordinator v0+ (v2).

// Config sources in a DescribeConfigs response (v1+).
const (
	configSourceUnknown      int8 = 0 // v0 brokers say IsDefault instead
	configSourceDynamicTopic int8 = 1 // set on the topic itself
)

// adminAttempts bounds the retries of an admin request that failed with a
// retriable error (a coordinator loading, a leader or controller moving).
const adminAttempts = 8

// TopicConfig is a topic's configuration as the cluster reports it.
type TopicConfig struct {
	// Values holds every config the broker reports for the topic, defaults
	// resolved: the values in force.
	Values map[string]string
	// Explicit holds the configs set on the topic itself (config source
	// DYNAMIC_TOPIC_CONFIG), not inherited from broker or built-in defaults.
	Explicit map[string]string
}

// TopicConfigs describes the configs of topics, with one DescribeConfigs
// request. A topic that does not exist is absent from the map.
func (c *Cluster) TopicConfigs(ctx context.Context, topics []string) (map[string]TopicConfig, error) {
	out := make(map[string]TopicConfig, len(topics))
	if len(topics) == 0 {
		return out, nil
	}
	req := &kafka.DescribeConfigsRequest{}
	for _, t := range slices.Compact(slices.Sorted(slices.Values(topics))) {
		req.Resources = append(req.Resources, kafka.DescribeConfigRequestResource{ResourceType: kafka.ResourceTypeTopic, ResourceName: t})
	}
	var res *kafka.DescribeConfigsResponse
	err := c.retryAdmin(ctx, func(ctx context.Context) (err error) {
		res, err = c.Client().DescribeConfigs(ctx, req)
		if err != nil {
			return c.readError(ctx, err)
		}
		for _, r := range res.Resources {
			if code := errorCode(r.Error); code != 0 && code != kafka.UnknownTopicOrPartition && retriableCode(code) {
				return mark(fmt.Errorf("topic %s: %w", r.ResourceName, r.Error), catchup.ErrRetriable)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("describe configs of topics %v in cluster %q: %w", topics, c.name, err)
	}
	for _, r := range res.Resources {
		switch code := errorCode(r.Error); {
		case code == kafka.UnknownTopicOrPartition:
			continue
		case r.Error != nil:
			return nil, fmt.Errorf("describe configs of topic %s in cluster %q: %w", r.ResourceName, c.name, r.Error)
		}
		tc := TopicConfig{Values: map[string]string{}, Explicit: map[string]string{}}
		for _, e := range r.ConfigEntries {
			tc.Values[e.ConfigName] = e.ConfigValue
			if e.ConfigSource == configSourceDynamicTopic || e.ConfigSource == configSourceUnknown && !e.IsDefault && !e.ReadOnly {
				tc.Explicit[e.ConfigName] = e.ConfigValue
			}
		}
		out[r.ResourceName] = tc
	}
	return out, nil
}

// TopicConfigValues returns the configs in force on each of topics that
// exists, defaults resolved. It implements replicate.TopicConfigReader.
func (s *Source) TopicConfigValues(ctx context.Context, topics []string) (map[string]map[string]string, error) {
	configs, err := s.cl.TopicConfigs(ctx, topics)
	if err != nil {
		return nil, err
	}
	out := make(map[string]map[string]string, len(configs))
	for t, c := range configs {
		out[t] = c.Values
	}
	return out, nil
}

// DescribeTopics returns the partition count and the explicitly set configs
// of each of topics that exists. It implements replicate.TopicDescriber.
func (s *Source) DescribeTopics(ctx context.Context, topics []string) (map[string]catchup.TopicSpec, error) {
	md, err := s.cl.metadata(ctx, topics)
	if err != nil {
		return nil, err
	}
	out := make(map[string]catchup.TopicSpec, len(topics))
	for _, tm := range md.Topics {
		switch code := kafka.Error(tm.ErrorCode); {
		case code == kafka.UnknownTopicOrPartition || code == kafka.InvalidTopic:
			continue
		case tm.ErrorCode != 0 && len(tm.Partitions) == 0:
			return nil, fmt.Errorf("metadata of topic %s in cluster %q: %w", tm.Name, s.cl.name, codeError(tm.ErrorCode))
		}
		out[tm.Name] = catchup.TopicSpec{Topic: tm.Name, Partitions: len(tm.Partitions)}
	}
	configs, err := s.cl.TopicConfigs(ctx, topics)
	if err != nil {
		return nil, err
	}
	for t, spec := range out {
		spec.Configs = configs[t].Explicit
		out[t] = spec
	}
	return out, nil
}

// CreateTopics creates each of specs with one CreateTopics request. A topic
// that exists already is not an error, nor is a creation the controller did
// not finish within the request timeout (it goes on): the caller checks the
// partition counts afterwards. It implements replicate.TopicCreator.
func (t *Target) CreateTopics(ctx context.Context, specs []catchup.TopicSpec) error {
	return t.cl.CreateTopics(ctx, specs)
}

// CreateTopics creates each of specs; see Target.CreateTopics.
func (c *Cluster) CreateTopics(ctx context.Context, specs []catchup.TopicSpec) error {
	req := &kafka.CreateTopicsRequest{}
	for _, s := range specs {
		tc := kafka.TopicConfig{Topic: s.Topic, NumPartitions: s.Partitions, ReplicationFactor: s.ReplicationFactor}
		if tc.ReplicationFactor <= 0 {
			tc.ReplicationFactor = -1 // the broker's default.replication.factor (KIP-464, CreateTopics v4+)
		}
		for _, k := range slices.Sorted(maps.Keys(s.Configs)) {
			tc.ConfigEntries = append(tc.ConfigEntries, kafka.ConfigEntry{ConfigName: k, ConfigValue: s.Configs[k]})
		}
		req.Topics = append(req.Topics, tc)
	}
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Topic
	}
	// Watched before they exist: kafka-go waits after a CreateTopics until
	// its refresh sees the new topics.
	c.watch(names)
	res, err := c.toController(ctx, func(ctx context.Context) (map[string]error, error) {
		res, err := c.Client().CreateTopics(ctx, req)
		if err != nil {
			return nil, err
		}
		return res.Errors, nil
	})
	if err != nil {
		return fmt.Errorf("create topics in cluster %q: %w", c.name, err)
	}
	var errs []error
	for _, s := range specs {
		switch err := res[s.Topic]; errorCode(err) {
		case 0, kafka.TopicAlreadyExists, kafka.RequestTimedOut:
		default:
			errs = append(errs, fmt.Errorf("create topic %s (%d partitions, replication factor %d) in cluster %q: %w",
				s.Topic, s.Partitions, s.ReplicationFactor, c.name, err))
		}
	}
	return errors.Join(errs...)
}

// AddPartitions raises the partition count of each topic in counts with one
// CreatePartitions request. A topic that has that many partitions already
// (INVALID_PARTITIONS: grown meanwhile by another run) is not an error, nor
// is a change the controller did not finish within the request timeout: the
// caller checks the partition counts afterwards. It implements
// replicate.PartitionAdder.
func (t *Target) AddPartitions(ctx context.Context, counts map[string]int) error {
	return t.cl.AddPartitions(ctx, counts)
}

// AddPartitions raises partition counts; see Target.AddPartitions.
func (c *Cluster) AddPartitions(ctx context.Context, counts map[string]int) error {
	req := &kafka.CreatePartitionsRequest{}
	for _, t := range slices.Sorted(maps.Keys(counts)) {
		req.Topics = append(req.Topics, kafka.TopicPartitionsConfig{Name: t, Count: int32(counts[t])})
	}
	res, err := c.toController(ctx, func(ctx context.Context) (map[string]error, error) {
		res, err := c.Client().CreatePartitions(ctx, req)
		if err != nil {
			return nil, err
		}
		return res.Errors, nil
	})
	if err != nil {
		return fmt.Errorf("add partitions in cluster %q: %w", c.name, err)
	}
	var errs []error
	for _, t := range slices.Sorted(maps.Keys(counts)) {
		switch err := res[t]; errorCode(err) {
		case 0, kafka.InvalidPartitionNumber, kafka.RequestTimedOut:
		default:
			errs = append(errs, fmt.Errorf("add partitions to topic %s (to %d) in cluster %q: %w", t, counts[t], c.name, err))
		}
	}
	return errors.Join(errs...)
}

// ExplicitConfigs returns the configs set on each of topics itself. It
// implements replicate.TopicConfigSyncer.
func (t *Target) ExplicitConfigs(ctx context.Context, topics []string) (map[string]map[string]string, error) {
	configs, err := t.cl.TopicConfigs(ctx, topics)
	if err != nil {
		return nil, err
	}
	out := make(map[string]map[string]string, len(configs))
	for topic, c := range configs {
		out[topic] = c.Explicit
	}
	return out, nil
}

// AlterConfigs sets the configs of changes on their topics with one
// IncrementalAlterConfigs request (operation SET: the topic's other configs
// stay as they are). It implements replicate.TopicConfigSyncer.
func (t *Target) AlterConfigs(ctx context.Context, changes map[string]map[string]string) error {
	return t.cl.AlterConfigs(ctx, changes)
}

// AlterConfigs sets topic configs; see Target.AlterConfigs.
func (c *Cluster) AlterConfigs(ctx context.Context, changes map[string]map[string]string) error {
	req := &kafka.IncrementalAlterConfigsRequest{}
	for _, topic := range slices.Sorted(maps.Keys(changes)) {
		r := kafka.IncrementalAlterConfigsRequestResource{ResourceType: kafka.ResourceTypeTopic, ResourceName: topic}
		for _, k := range slices.Sorted(maps.Keys(changes[topic])) {
			r.Configs = append(r.Configs, kafka.IncrementalAlterConfigsRequestConfig{Name: k, Value: changes[topic][k], ConfigOperation: kafka.ConfigOperationSet})
		}
		req.Resources = append(req.Resources, r)
	}
	res, err := c.toController(ctx, func(ctx context.Context) (map[string]error, error) {
		res, err := c.Client().IncrementalAlterConfigs(ctx, req)
		if err != nil {
			return nil, err
		}
		out := make(map[string]error, len(res.Resources))
		for _, r := range res.Resources {
			out[r.ResourceName] = r.Error
		}
		return out, nil
	})
	if err != nil {
		return fmt.Errorf("alter topic configs in cluster %q: %w", c.name, err)
	}
	var errs []error
	for _, topic := range slices.Sorted(maps.Keys(changes)) {
		if err := res[topic]; err != nil {
			errs = append(errs, fmt.Errorf("alter configs %v of topic %s in cluster %q: %w",
				slices.Sorted(maps.Keys(changes[topic])), topic, c.name, err))
		}
	}
	return errors.Join(errs...)
}

// toController sends a request answered with an error per topic (CreateTopics,
// CreatePartitions), again while it fails with a retriable error or a topic
// with NOT_CONTROLLER (the controller moved), and returns the errors by
// topic.
func (c *Cluster) toController(ctx context.Context, send func(context.Context) (map[string]error, error)) (map[string]error, error) {
	var res map[string]error
	err := c.retryAdmin(ctx, func(ctx context.Context) (err error) {
		res, err = send(ctx)
		if err != nil {
			return c.readError(ctx, err)
		}
		for topic, err := range res {
			if code := errorCode(err); code == kafka.NotController {
				return mark(fmt.Errorf("topic %s: %w", topic, err), catchup.ErrRetriable)
			}
		}
		return nil
	})
	return res, err
}

// ListGroups returns the ids of the consumer groups every broker of the
// cluster coordinates (one ListGroups request per broker), sorted.
func (c *Cluster) ListGroups(ctx context.Context) ([]string, error) {
	var res *kafka.ListGroupsResponse
	err := c.retryAdmin(ctx, func(ctx context.Context) (err error) {
		res, err = c.Client().ListGroups(ctx, &kafka.ListGroupsRequest{})
		if err != nil {
			return c.readError(ctx, err)
		}
		return groupError(res.Error)
	})
	if err != nil {
		return nil, fmt.Errorf("list groups in cluster %q: %w", c.name, err)
	}
	out := make([]string, 0, len(res.Groups))
	for _, g := range res.Groups {
		out = append(out, g.GroupID)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// CommittedOffsets returns the offsets group has committed, on every topic it
// has committed to. A partition without a committed offset is absent, and a
// group that does not exist has none (Kafka answers nothing, kfake
// GROUP_ID_NOT_FOUND).
func (c *Cluster) CommittedOffsets(ctx context.Context, group string) (map[catchup.Partition]int64, error) {
	var res *kafka.OffsetFetchResponse
	err := c.retryAdmin(ctx, func(ctx context.Context) (err error) {
		// No topics: every topic the group has offsets for (OffsetFetch v2+).
		res, err = c.Client().OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group})
		if err != nil {
			return c.readError(ctx, err)
		}
		if res.Error != nil && errorCode(res.Error) != kafka.GroupIdNotFound {
			return groupError(res.Error)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("committed offsets of group %s in cluster %q: %w", group, c.name, err)
	}
	out := map[catchup.Partition]int64{}
	for topic, parts := range res.Topics {
		for _, p := range parts {
			if p.Error != nil {
				return nil, fmt.Errorf("committed offset of group %s on %s/%d in cluster %q: %w", group, topic, p.Partition, c.name, p.Error)
			}
			if p.CommittedOffset >= 0 {
				out[catchup.Partition{Topic: topic, Partition: int32(p.Partition)}] = p.CommittedOffset
			}
		}
	}
	return out, nil
}

// CommitOffsets commits offs for group as an administrator does for a group
// without members: generation -1, no member id. The coordinator refuses it
// for a group that has members (UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION).
func (c *Cluster) CommitOffsets(ctx context.Context, group string, offs map[catchup.Partition]int64) error {
	req := &kafka.OffsetCommitRequest{GroupID: group, GenerationID: -1, Topics: map[string][]kafka.OffsetCommit{}}
	for p, off := range offs {
		req.Topics[p.Topic] = append(req.Topics[p.Topic], kafka.OffsetCommit{Partition: int(p.Partition), Offset: off})
	}
	var res *kafka.OffsetCommitResponse
	err := c.retryAdmin(ctx, func(ctx context.Context) (err error) {
		res, err = c.Client().OffsetCommit(ctx, req)
		if err != nil {
			return c.readError(ctx, err)
		}
		for _, parts := range res.Topics {
			for _, p := range parts {
				if p.Error != nil && errorCode(p.Error).Temporary() {
					return groupError(p.Error)
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("commit offsets of group %s in cluster %q: %w", group, c.name, err)
	}
	var errs []error
	for topic, parts := range res.Topics {
		for _, p := range parts {
			if p.Error != nil {
				errs = append(errs, fmt.Errorf("commit offset of group %s on %s/%d in cluster %q: %w", group, topic, p.Partition, c.name, p.Error))
			}
		}
	}
	return errors.Join(errs...)
}

// Group is a consumer group as DescribeGroups reports it.
type Group struct {
	// State is Empty, Stable, PreparingRebalance, CompletingRebalance, or
	// Dead (no such group).
	State   string
	Members []GroupMember
}

// GroupMember is one member of a consumer group.
type GroupMember struct {
	ID, ClientID, Host string
}

// Active reports whether the group has members or is rebalancing: committing
// offsets for it from outside would race with its consumers.
func (g Group) Active() bool {
	return len(g.Members) > 0 || g.State != "Empty" && g.State != "Dead"
}

// DescribeGroup describes a classic consumer group; one that does not exist
// is Dead. Kafka 4.x answers GROUP_ID_NOT_FOUND for a group of the new
// consumer protocol (KIP-848), which DescribeGroups does not describe; that
// error is returned. kafka-go's Client.DescribeGroups is not used: it decodes
// each member's subscription and drops every member when it cannot (franz-go
// consumers write a newer version), so the request is sent raw to the
// coordinator FindCoordinator names.
func (c *Cluster) DescribeGroup(ctx context.Context, group string) (Group, error) {
	var g Group
	err := c.retryAdmin(ctx, func(ctx context.Context) error {
		res, err := c.roundTrip(ctx, c.newExchange(&findcoordinator.Request{Key: group}, 0), requestTimeout)
		if err != nil {
			return c.readError(ctx, err)
		}
		fc := res.(*findcoordinator.Response)
		if fc.ErrorCode != 0 {
			return groupError(kafka.Error(fc.ErrorCode))
		}
		res, err = c.roundTrip(ctx, c.newExchange(&describegroups.Request{Groups: []string{group}}, 0).toBroker(fc.NodeID), requestTimeout)
		if err != nil {
			return c.readError(ctx, err)
		}
		for _, rg := range res.(*describegroups.Response).Groups {
			if rg.GroupID != group {
				continue
			}
			if rg.ErrorCode != 0 {
				return groupError(kafka.Error(rg.ErrorCode))
			}
			g = Group{State: rg.GroupState}
			for _, m := range rg.Members {
				g.Members = append(g.Members, GroupMember{ID: m.MemberID, ClientID: m.ClientID, Host: m.ClientHost})
			}
			return nil
		}
		return fmt.Errorf("the response does not name group %s", group)
	})
	if err != nil {
		return Group{}, fmt.Errorf("describe group %s in cluster %q: %w", group, c.name, err)
	}
	return g, nil
}

// groupError marks the temporary coordinator errors (loading, moving)
// retriable.
func groupError(err error) error {
	if errorCode(err).Temporary() {
		return mark(err, catchup.ErrRetriable)
	}
	return err
}

// errorCode returns the broker error code in err, 0 for nil or none.
func errorCode(err error) kafka.Error {
	var code kafka.Error
	if errors.As(err, &code) {
		return code
	}
	return 0
}

// retryAdmin calls fn with a per-request timeout until it succeeds, fails
// with an error that is not retriable, or has failed adminAttempts times.
func (c *Cluster) retryAdmin(ctx context.Context, fn func(ctx context.Context) error) error {
	for attempt := 1; ; attempt++ {
		rctx, cancel := context.WithTimeout(ctx, requestTimeout)
		err := fn(rctx)
		cancel()
		if err == nil || !errors.Is(err, catchup.ErrRetriable) || attempt >= adminAttempts || ctx.Err() != nil {
			return err
		}
		t := time.NewTimer(min(50*time.Millisecond<<attempt, 2*time.Second))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		}
	}
}

// Cluster returns the Source's connection pool, for admin requests.
func (s *Source) Cluster() *Cluster { return s.cl }

// Cluster returns the Target's connection pool, for admin requests.
func (t *Target) Cluster() *Cluster { return t.cl }
