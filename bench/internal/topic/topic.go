// Package topic reads what the benchmark's copiers need to know of a topic
// before they copy it: each partition's leader and its log start and end
// offsets, through a franz-go client.
package topic

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Leaders returns the address (host:port) of the leader of each partition
// of topic; an error if the topic is missing or a partition has no leader.
func Leaders(ctx context.Context, cl *kgo.Client, topic string) (map[int32]string, error) {
	meta := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = &topic
	meta.Topics = append(meta.Topics, mt)
	resp, err := meta.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("metadata %s: %w", topic, err)
	}
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
		return nil, fmt.Errorf("metadata %s: topic missing or in error", topic)
	}
	addr := map[int32]string{}
	for _, b := range resp.Brokers {
		addr[b.NodeID] = net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
	}
	out := map[int32]string{}
	for _, p := range resp.Topics[0].Partitions {
		if p.ErrorCode != 0 || addr[p.Leader] == "" {
			return nil, fmt.Errorf("metadata %s/%d: no leader (error code %d)", topic, p.Partition, p.ErrorCode)
		}
		out[p.Partition] = addr[p.Leader]
	}
	return out, nil
}

// Offsets returns the offset of every partition of topic at ts: -2 the log
// start, -1 the end.
func Offsets(ctx context.Context, cl *kgo.Client, topic string, ts int64) (map[int32]int64, error) {
	leaders, err := Leaders(ctx, cl, topic)
	if err != nil {
		return nil, err
	}
	req := kmsg.NewPtrListOffsetsRequest()
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for p := range leaders {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = p, ts
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	// kgo splits the request by leader and merges the responses.
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("list offsets %s: %w", topic, err)
	}
	out := map[int32]int64{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				return nil, fmt.Errorf("list offsets %s/%d: error code %d", topic, p.Partition, p.ErrorCode)
			}
			out[p.Partition] = p.Offset
		}
	}
	if len(out) != len(leaders) {
		return nil, fmt.Errorf("list offsets %s: %d of %d partitions in the response", topic, len(out), len(leaders))
	}
	return out, nil
}
