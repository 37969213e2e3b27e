package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// errNoTopic: the topic logBytes was asked for does not exist.
var errNoTopic = errors.New("no such topic")

// logBytes returns the bytes of topic's log (DescribeLogDirs of every
// replica), each partition counted once, at its largest replica: what one
// copy of the data costs the target on disk, whatever the replication
// factor.
func logBytes(ctx context.Context, brokers, topic string) (int64, error) {
	addrs := strings.Split(brokers, ",")
	ids, err := partitionIDs(ctx, &kafka.Client{Addr: kafka.TCP(addrs[0])}, topic)
	if err != nil {
		return 0, err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		return 0, fmt.Errorf("client for %s: %w", brokers, err)
	}
	defer cl.Close()
	req := kmsg.NewPtrDescribeLogDirsRequest()
	rt := kmsg.NewDescribeLogDirsRequestTopic()
	rt.Topic, rt.Partitions = topic, ids
	req.Topics = append(req.Topics, rt)
	size := make(map[int32]int64, len(ids))
	for _, sh := range cl.RequestSharded(ctx, req) {
		if sh.Err != nil {
			return 0, fmt.Errorf("describe log dirs of %s: %w", topic, sh.Err)
		}
		if err := largestReplicas(size, topic, sh.Resp.(*kmsg.DescribeLogDirsResponse)); err != nil {
			return 0, fmt.Errorf("broker %d: %w", sh.Meta.NodeID, err)
		}
	}
	if len(size) != len(ids) {
		return 0, fmt.Errorf("topic %s: the brokers describe %d of its %d partitions", topic, len(size), len(ids))
	}
	var sum int64
	for _, s := range size {
		sum += s
	}
	return sum, nil
}

// largestReplicas records in size each partition of topic that resp
// describes, at the largest size any replica has had so far.
func largestReplicas(size map[int32]int64, topic string, resp *kmsg.DescribeLogDirsResponse) error {
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return fmt.Errorf("describe log dirs: %w", err)
	}
	for _, d := range resp.Dirs {
		if err := kerr.ErrorForCode(d.ErrorCode); err != nil {
			return fmt.Errorf("log dir %s: %w", d.Dir, err)
		}
		for _, t := range d.Topics {
			if t.Topic != topic {
				continue
			}
			for _, p := range t.Partitions {
				size[p.Partition] = max(size[p.Partition], p.Size)
			}
		}
	}
	return nil
}

// partitionIDs returns the ids of topic's partitions, all of them with a
// leader.
func partitionIDs(ctx context.Context, cl *kafka.Client, topic string) ([]int32, error) {
	md, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	for _, t := range md.Topics {
		if t.Name != topic {
			continue
		}
		if errors.Is(t.Error, kafka.UnknownTopicOrPartition) {
			break
		}
		if t.Error != nil {
			return nil, fmt.Errorf("metadata of %s: %w", topic, t.Error)
		}
		ids := make([]int32, 0, len(t.Partitions))
		for _, p := range t.Partitions {
			if p.Error != nil || p.Leader.ID < 0 || p.Leader.Host == "" {
				return nil, fmt.Errorf("partition %s/%d has no leader: %v", topic, p.ID, p.Error)
			}
			ids = append(ids, int32(p.ID))
		}
		return ids, nil
	}
	return nil, fmt.Errorf("topic %s: %w", topic, errNoTopic)
}
