package kafkago

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol/listoffsets"
	meta "github.com/segmentio/kafka-go/protocol/metadata"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/kafkago/wire"
)

// Timestamps with a special meaning in a ListOffsets request.
const (
	latest   int64 = -1
	earliest int64 = -2
)

// metadata asks a broker (not the Transport's cache, which may be a second
// old) for the metadata of topics, or of every topic when topics is nil.
func (c *Cluster) metadata(ctx context.Context, topics []string) (*meta.Response, error) {
	res, err := c.roundTrip(ctx, c.newExchange(&meta.Request{TopicNames: topics}, 1), requestTimeout)
	if err != nil {
		return nil, fmt.Errorf("metadata of cluster %q: %w", c.name, c.readError(ctx, err))
	}
	return res.(*meta.Response), nil
}

// topicsOf returns the topics of ps, each once, in the order of ps.
func topicsOf(ps []catchup.Partition) []string {
	topics := make([]string, 0)
	named := make(map[string]bool)
	for _, p := range ps {
		if !named[p.Topic] {
			named[p.Topic] = true
			topics = append(topics, p.Topic)
		}
	}
	return topics
}

// listOffsets returns, in the order of ps, the offset each partition's
// leader reports for ts (earliest, latest, or a time in Unix milliseconds:
// the first offset whose timestamp is at or after it, -1 if none), with one
// request per leader broker. kafka-go's Client.ListOffsets sends one request
// per partition instead.
func (c *Cluster) listOffsets(ctx context.Context, ps []catchup.Partition, ts int64, isolation int8) ([]int64, error) {
	// The Transport's cached layout tells the leaders; a stale entry
	// costs a NOT_LEADER_OR_FOLLOWER, which is retriable.
	// Each topic is named once: kafka-go decodes a topic's whole layout for
	// every name in the request, so one name per partition cost memory in
	// partitions × partitions per topic.
	topics := topicsOf(ps)
	c.watch(topics)
	md, err := c.Client().Metadata(ctx, &kafka.MetadataRequest{Topics: topics})
	if err != nil {
		return nil, c.readError(ctx, err)
	}
	leader := make(map[catchup.Partition]int32)
	for _, t := range md.Topics {
		for _, p := range t.Partitions {
			if p.Error == nil {
				leader[catchup.Partition{Topic: t.Name, Partition: int32(p.ID)}] = int32(p.Leader.ID)
			}
		}
	}

	offsets := make(map[catchup.Partition]int64, len(ps))
	errs := make(map[catchup.Partition]error)
	byLeader := make(map[int32]map[string][]listoffsets.RequestPartition)
	for _, p := range ps {
		id, ok := leader[p]
		if !ok {
			errs[p] = mark(fmt.Errorf("partition not in the metadata of cluster %q: %w", c.name, kafka.UnknownTopicOrPartition), catchup.ErrRetriable)
			continue
		}
		if byLeader[id] == nil {
			byLeader[id] = make(map[string][]listoffsets.RequestPartition)
		}
		if _, dup := offsets[p]; dup {
			continue // a partition may appear once per request
		}
		offsets[p] = -1
		byLeader[id][p.Topic] = append(byLeader[id][p.Topic], listoffsets.RequestPartition{
			Partition: p.Partition, CurrentLeaderEpoch: -1, Timestamp: ts,
		})
	}

	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for id, parts := range byLeader {
		req := &listoffsets.Request{ReplicaID: -1, IsolationLevel: isolation}
		for topic, rps := range parts {
			req.Topics = append(req.Topics, listoffsets.RequestTopic{Topic: topic, Partitions: rps})
		}
		wg.Go(func() {
			res, err := c.roundTrip(ctx, c.newExchange(req, 2).toBroker(id), requestTimeout) // v2: isolation level
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				err = c.readError(ctx, err)
				for _, t := range req.Topics {
					for _, rp := range t.Partitions {
						errs[catchup.Partition{Topic: t.Topic, Partition: rp.Partition}] = err
					}
				}
				return
			}
			for _, t := range res.(*listoffsets.Response).Topics {
				for _, rp := range t.Partitions {
					p := catchup.Partition{Topic: t.Topic, Partition: rp.Partition}
					if err := codeError(rp.ErrorCode); err != nil {
						errs[p] = err
						continue
					}
					offsets[p] = rp.Offset
				}
			}
		})
	}
	wg.Wait()

	out := make([]int64, len(ps))
	var first, firstPermanent error
	for i, p := range ps {
		if err := errs[p]; err != nil {
			err = fmt.Errorf("list offsets of %s: %w", p, err)
			if first == nil {
				first = err
			}
			if firstPermanent == nil && !errors.Is(err, catchup.ErrRetriable) {
				firstPermanent = err
			}
		}
		out[i] = offsets[p]
	}
	if firstPermanent != nil {
		return nil, firstPermanent
	}
	if first != nil {
		return nil, first
	}
	return out, nil
}

// watermarks returns the log start, high watermark and last stable offset
// of each of ps, with three requests per leader broker, run concurrently
// (Kafka refuses a partition twice in one request).
func (c *Cluster) watermarks(ctx context.Context, ps []catchup.Partition) ([]catchup.Offsets, error) {
	var (
		wg                    sync.WaitGroup
		starts, hwms, lsos    []int64
		errStart, errH, errLS error
	)
	wg.Go(func() { starts, errStart = c.listOffsets(ctx, ps, earliest, wire.ReadUncommitted) })
	wg.Go(func() { hwms, errH = c.listOffsets(ctx, ps, latest, wire.ReadUncommitted) })
	wg.Go(func() { lsos, errLS = c.listOffsets(ctx, ps, latest, wire.ReadCommitted) })
	wg.Wait()
	if err := firstError(errStart, errH, errLS); err != nil {
		return nil, err
	}
	out := make([]catchup.Offsets, len(ps))
	for i, p := range ps {
		out[i] = catchup.Offsets{Partition: p, LogStart: starts[i], HighWatermark: hwms[i], LastStable: lsos[i]}
	}
	return out, nil
}

// firstError returns the first permanent error, else the first error.
func firstError(errs ...error) error {
	var first error
	for _, err := range errs {
		if err == nil {
			continue
		}
		if !errors.Is(err, catchup.ErrRetriable) {
			return err
		}
		if first == nil {
			first = err
		}
	}
	return first
}
