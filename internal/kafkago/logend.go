package kafkago

import (
	"context"
	"fmt"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/kafkago/wire"
)

// offsetForLeaderEpochVersion is the OffsetForLeaderEpoch version catchup
// sends: v3 (Kafka 2.3+) carries the replica id, so that the leader answers
// a client (-1) with its own log end, and the current leader epoch, so that
// a stale leader refuses (FENCED_LEADER_EPOCH) instead of answering. Kafka
// 4 still serves v2 to v4; v3 is the last non-flexible one.
const offsetForLeaderEpochVersion = 3

// LogEnd reads, from the leader of p, its log end offset, its high
// watermark and its leader epoch (see replicate.Target.LogEnd). The leader
// and its epoch come from a broker's metadata (not the Transport's cache);
// the log end is the leader's answer to OffsetForLeaderEpoch for that
// epoch, with replica id -1: the offset after the last record it appended,
// replicated or not. The high watermark is read after it. A stale epoch or
// leader (the metadata moved between the two requests) is retriable.
func (t *Target) LogEnd(ctx context.Context, p catchup.Partition) (catchup.LogEnd, error) {
	md, err := t.cl.metadata(ctx, []string{p.Topic})
	if err != nil {
		return catchup.LogEnd{}, fmt.Errorf("log end of %s: %w", p, err)
	}
	leader, epoch := int32(-1), int32(-1)
	for _, tm := range md.Topics {
		for _, pm := range tm.Partitions {
			if tm.Name == p.Topic && pm.PartitionIndex == p.Partition {
				if err := codeError(pm.ErrorCode); err != nil {
					return catchup.LogEnd{}, fmt.Errorf("log end of %s: metadata: %w", p, err)
				}
				leader, epoch = pm.LeaderID, pm.LeaderEpoch
			}
		}
	}
	if leader < 0 {
		return catchup.LogEnd{}, fmt.Errorf("log end of %s: no leader in the metadata of cluster %q: %w",
			p, t.cl.name, mark(kafka.LeaderNotAvailable, catchup.ErrRetriable))
	}

	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.Version = offsetForLeaderEpochVersion
	req.ReplicaID = -1
	rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
	rt.Topic = p.Topic
	rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
	rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = p.Partition, epoch, epoch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	res, err := t.cl.roundTrip(ctx, t.cl.newKmsgExchange(req).toBroker(leader), requestTimeout)
	if err != nil {
		return catchup.LogEnd{}, fmt.Errorf("log end of %s at broker %d: %w", p, leader, t.cl.readError(ctx, err))
	}
	end, err := parseOffsetForLeaderEpoch(res.(*rawResponse).body, p)
	if err != nil {
		return catchup.LogEnd{}, fmt.Errorf("log end of %s at broker %d, leader epoch %d: %w", p, leader, epoch, err)
	}
	hwm, err := t.cl.listOffsets(ctx, []catchup.Partition{p}, latest, wire.ReadUncommitted)
	if err != nil {
		return catchup.LogEnd{}, fmt.Errorf("log end of %s: %w", p, err)
	}
	return catchup.LogEnd{End: end, HighWatermark: hwm[0], Epoch: epoch}, nil
}

// parseOffsetForLeaderEpoch returns the end offset that a response of
// version offsetForLeaderEpochVersion gives p.
func parseOffsetForLeaderEpoch(body []byte, p catchup.Partition) (int64, error) {
	res := kmsg.OffsetForLeaderEpochResponse{Version: offsetForLeaderEpochVersion}
	if err := res.ReadFrom(body); err != nil {
		return 0, mark(fmt.Errorf("OffsetForLeaderEpoch response: %w", err), catchup.ErrRetriable)
	}
	for _, rt := range res.Topics {
		for _, rp := range rt.Partitions {
			if rt.Topic != p.Topic || rp.Partition != p.Partition {
				continue
			}
			if err := codeError(rp.ErrorCode); err != nil {
				return 0, err
			}
			if rp.EndOffset < 0 {
				// The leader knows no such epoch (it cannot be its own
				// current one): the metadata moved on.
				return 0, mark(fmt.Errorf("OffsetForLeaderEpoch: no end offset (epoch %d)", rp.LeaderEpoch), catchup.ErrRetriable)
			}
			return rp.EndOffset, nil
		}
	}
	return 0, mark(fmt.Errorf("OffsetForLeaderEpoch response lacks partition %s", p), catchup.ErrRetriable)
}
