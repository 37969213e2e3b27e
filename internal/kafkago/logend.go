package kafkago

import (
	"context"
	"fmt"
	"sync"

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
	ends, errs, err := t.logEnds(ctx, []catchup.Partition{p})
	switch {
	case err != nil:
		return catchup.LogEnd{}, fmt.Errorf("log end of %s: %w", p, err)
	case errs[p] != nil:
		return catchup.LogEnd{}, errs[p]
	}
	hwm, err := t.cl.listOffsets(ctx, []catchup.Partition{p}, latest, wire.ReadUncommitted)
	if err != nil {
		return catchup.LogEnd{}, fmt.Errorf("log end of %s: %w", p, err)
	}
	le := ends[p]
	le.HighWatermark = hwm[0]
	return le, nil
}

// LogEnds is LogEnd's log end and epoch for many partitions (see
// replicate.Target.LogEnds): one metadata request and one
// OffsetForLeaderEpoch request per leader, no high watermark (-1). A
// partition whose own answer failed is left out of the map.
func (t *Target) LogEnds(ctx context.Context, ps []catchup.Partition) (map[catchup.Partition]catchup.LogEnd, error) {
	ends, _, err := t.logEnds(ctx, ps)
	if err != nil {
		return nil, fmt.Errorf("log ends of %d partitions: %w", len(ps), err)
	}
	for p, le := range ends {
		le.HighWatermark = -1
		ends[p] = le
	}
	return ends, nil
}

// logEnds reads the log ends and leader epochs of ps (no high watermark):
// those that answered, the error of each that did not, and an error for a
// call that read nothing (the metadata).
func (t *Target) logEnds(ctx context.Context, ps []catchup.Partition) (map[catchup.Partition]catchup.LogEnd, map[catchup.Partition]error, error) {
	md, err := t.cl.metadata(ctx, topicsOf(ps))
	if err != nil {
		return nil, nil, err
	}
	type leadership struct{ leader, epoch int32 }
	led := make(map[catchup.Partition]leadership, len(ps))
	errs := make(map[catchup.Partition]error)
	for _, tm := range md.Topics {
		for _, pm := range tm.Partitions {
			p := catchup.Partition{Topic: tm.Name, Partition: pm.PartitionIndex}
			if err := codeError(pm.ErrorCode); err != nil {
				errs[p] = fmt.Errorf("log end of %s: metadata: %w", p, err)
				continue
			}
			led[p] = leadership{pm.LeaderID, pm.LeaderEpoch}
		}
	}

	byLeader := make(map[int32]*kmsg.OffsetForLeaderEpochRequest)
	topicAt := make(map[int32]map[string]int) // a request's index of each topic
	asked := make(map[catchup.Partition]bool, len(ps))
	for _, p := range ps {
		l, ok := led[p]
		switch {
		case asked[p] || errs[p] != nil:
			continue
		case !ok || l.leader < 0:
			errs[p] = fmt.Errorf("log end of %s: no leader in the metadata of cluster %q: %w",
				p, t.cl.name, mark(kafka.LeaderNotAvailable, catchup.ErrRetriable))
			continue
		}
		asked[p] = true
		req := byLeader[l.leader]
		if req == nil {
			req = kmsg.NewPtrOffsetForLeaderEpochRequest()
			req.Version = offsetForLeaderEpochVersion
			req.ReplicaID = -1
			byLeader[l.leader], topicAt[l.leader] = req, make(map[string]int)
		}
		i, ok := topicAt[l.leader][p.Topic]
		if !ok {
			rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
			rt.Topic = p.Topic
			i, req.Topics = len(req.Topics), append(req.Topics, rt)
			topicAt[l.leader][p.Topic] = i
		}
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = p.Partition, l.epoch, l.epoch
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}

	ends := make(map[catchup.Partition]catchup.LogEnd, len(asked))
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for leader, req := range byLeader {
		wg.Go(func() {
			res, err := t.cl.roundTrip(ctx, t.cl.newKmsgExchange(req).toBroker(leader), requestTimeout)
			if err == nil {
				err = parseOffsetForLeaderEpoch(res.(*rawResponse).body, func(p catchup.Partition, end int64, perr error) {
					mu.Lock()
					defer mu.Unlock()
					if !asked[p] {
						return
					}
					if perr != nil {
						errs[p] = fmt.Errorf("log end of %s at broker %d, leader epoch %d: %w", p, leader, led[p].epoch, perr)
						return
					}
					ends[p] = catchup.LogEnd{End: end, Epoch: led[p].epoch}
				})
			}
			if err != nil {
				err = t.cl.readError(ctx, err)
				mu.Lock()
				defer mu.Unlock()
				for _, rt := range req.Topics {
					for _, rp := range rt.Partitions {
						p := catchup.Partition{Topic: rt.Topic, Partition: rp.Partition}
						errs[p] = fmt.Errorf("log end of %s at broker %d: %w", p, leader, err)
					}
				}
			}
		})
	}
	wg.Wait()
	for p := range asked {
		if _, ok := ends[p]; !ok && errs[p] == nil {
			errs[p] = fmt.Errorf("log end of %s: %w", p,
				mark(fmt.Errorf("OffsetForLeaderEpoch response lacks partition %s", p), catchup.ErrRetriable))
		}
	}
	return ends, errs, nil
}

// parseOffsetForLeaderEpoch calls each with every partition a response of
// version offsetForLeaderEpochVersion answers: its end offset, or its
// error. The error returned is for a response that cannot be read.
func parseOffsetForLeaderEpoch(body []byte, each func(p catchup.Partition, end int64, err error)) error {
	res := kmsg.OffsetForLeaderEpochResponse{Version: offsetForLeaderEpochVersion}
	if err := res.ReadFrom(body); err != nil {
		return mark(fmt.Errorf("OffsetForLeaderEpoch response: %w", err), catchup.ErrRetriable)
	}
	for _, rt := range res.Topics {
		for _, rp := range rt.Partitions {
			p := catchup.Partition{Topic: rt.Topic, Partition: rp.Partition}
			switch err := codeError(rp.ErrorCode); {
			case err != nil:
				each(p, 0, err)
			case rp.EndOffset < 0:
				// The leader knows no such epoch (it cannot be its own
				// current one): the metadata moved on.
				each(p, 0, mark(fmt.Errorf("OffsetForLeaderEpoch: no end offset (epoch %d)", rp.LeaderEpoch), catchup.ErrRetriable))
			default:
				each(p, rp.EndOffset, nil)
			}
		}
	}
	return nil
}
