package kafkago

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/kafkago/wire"
)

// Source reads a source cluster with the raw fetch protocol. It implements
// replicate.Source and is safe for concurrent use.
type Source struct {
	cl        *Cluster
	isolation int8
	recycle   *wire.Recycler
	ratios    sync.Map // topic → *ratios: what its last fetch saw, 0 before any
}

// ratios are what a topic's batches decompressed to, as its last fetch saw
// them: per topic, since a pipeline's topics may be compressed differently.
type ratios struct {
	plan  atomic.Int32 // wire.Decoded.Ratio: the decompression buffer's plan
	fetch atomic.Int32 // wire.Decoded.FetchRatio, or wire.Uncompressed: the fetch's byte limit
}

func (s *Source) ratio(topic string) *ratios {
	if r, ok := s.ratios.Load(topic); ok {
		return r.(*ratios)
	}
	r, _ := s.ratios.LoadOrStore(topic, new(ratios))
	return r.(*ratios)
}

// NewSource returns a Source for the cluster c that reads with isolation
// "read_committed" or "read_uncommitted".
func NewSource(c Settings, isolation string) (*Source, error) {
	var level int8
	switch isolation {
	case "read_committed":
		level = wire.ReadCommitted
	case "read_uncommitted":
		level = wire.ReadUncommitted
	default:
		return nil, fmt.Errorf("isolation %q: want read_committed or read_uncommitted", isolation)
	}
	cl, err := Dial(c)
	if err != nil {
		return nil, err
	}
	return &Source{cl: cl, isolation: level, recycle: wire.NewRecycler()}, nil
}

// Close releases the Source's connections.
func (s *Source) Close() { s.cl.Close() }

// Partitions lists the partitions of the topics match selects, sorted,
// never those of internal topics. It asks a broker, not a cache.
func (s *Source) Partitions(ctx context.Context, match func(topic string) bool) ([]catchup.Partition, error) {
	md, err := s.cl.metadata(ctx, nil)
	if err != nil {
		return nil, err
	}
	var ps []catchup.Partition
	for _, t := range md.Topics {
		if t.IsInternal || strings.HasPrefix(t.Name, "__") || !match(t.Name) {
			continue
		}
		if err := codeError(t.ErrorCode); err != nil {
			return nil, fmt.Errorf("metadata of topic %s in cluster %q: %w", t.Name, s.cl.name, err)
		}
		for _, p := range t.Partitions {
			ps = append(ps, catchup.Partition{Topic: t.Name, Partition: p.PartitionIndex})
		}
	}
	slices.SortFunc(ps, catchup.Partition.Compare)
	topics := make([]string, 0)
	for _, p := range ps {
		if len(topics) == 0 || topics[len(topics)-1] != p.Topic {
			topics = append(topics, p.Topic)
		}
	}
	s.cl.watch(topics)
	return ps, nil
}

// ListOffsets returns the watermarks of ps, in the order of ps: three
// ListOffsets requests per leader broker (earliest, latest, latest under
// read_committed), sent concurrently.
func (s *Source) ListOffsets(ctx context.Context, ps []catchup.Partition) ([]catchup.Offsets, error) {
	return s.cl.watermarks(ctx, ps)
}

// OffsetsForTime returns, for each of ps, the first offset whose timestamp
// is at or after t, or the high watermark if there is none.
func (s *Source) OffsetsForTime(ctx context.Context, ps []catchup.Partition, t time.Time) (map[catchup.Partition]int64, error) {
	offs, err := s.cl.listOffsets(ctx, ps, t.UnixMilli(), wire.ReadUncommitted)
	if err != nil {
		return nil, err
	}
	var after []catchup.Partition // no record at or after t
	out := make(map[catchup.Partition]int64, len(ps))
	for i, p := range ps {
		if offs[i] < 0 {
			after = append(after, p)
			continue
		}
		out[p] = offs[i]
	}
	if len(after) > 0 {
		hwms, err := s.cl.listOffsets(ctx, after, latest, wire.ReadUncommitted)
		if err != nil {
			return nil, err
		}
		for i, p := range after {
			out[p] = hwms[i]
		}
	}
	return out, nil
}

// Fetch reads p from offset from, up to about maxBytes (at least 1; the
// broker returns a first batch larger than that whole) of records once
// decompressed: where p's topic's batches were seen compressed, it asks
// for less by the ratio they decompressed at (wire.FetchLimit). It
// waits at most 250ms for data. The records share memory with the
// response: one allocation holds them all. See replicate.Source for the
// contract.
func (s *Source) Fetch(ctx context.Context, p catchup.Partition, from int64, maxBytes int32) (catchup.Fetched, error) {
	if maxBytes < 1 {
		return catchup.Fetched{}, fmt.Errorf("fetch %s at %d: max bytes %d: want at least 1", p, from, maxBytes)
	}
	s.cl.cover(p.Topic)
	ratio := s.ratio(p.Topic)
	f, err := s.cl.fetchRaw(ctx, p, from, wire.FetchLimit(maxBytes, int(ratio.fetch.Load())), s.isolation, s.recycle)
	if err != nil {
		return catchup.Fetched{}, fmt.Errorf("fetch %s at %d: %w", p, from, err)
	}
	marks := catchup.Offsets{Partition: p, LogStart: f.LogStart, HighWatermark: f.HighWatermark, LastStable: f.LastStable}
	switch code := kafka.Error(f.Code); {
	case code == kafka.OffsetOutOfRange:
		s.recycle.Release(f.Body, nil, nil)
		return catchup.Fetched{Offsets: marks}, s.outOfRange(ctx, marks, from)
	case f.Code != 0:
		s.recycle.Release(f.Body, nil, nil)
		return catchup.Fetched{Offsets: marks}, fmt.Errorf("fetch %s at %d: %w", p, from, codeError(f.Code))
	}
	f.Spare, f.Inflate, f.Ratio, f.Budget = s.recycle.RecordSlice(), s.recycle.InflateBuf(), int(ratio.plan.Load()), int(maxBytes)
	d, err := wire.Decode(f, from, s.isolation)
	if err != nil {
		return catchup.Fetched{Offsets: marks}, fmt.Errorf("fetch %s at %d: %w", p, from, err)
	}
	if d.Batches > 0 {
		if d.Ratio > 0 {
			ratio.plan.Store(int32(d.Ratio))
		}
		if d.FetchRatio == 0 { // these batches were not compressed
			d.FetchRatio = wire.Uncompressed
		}
		ratio.fetch.Store(int32(d.FetchRatio))
	}
	if d.Batches == 0 && from > f.HighWatermark {
		// Kafka answers a fetch between the high watermark and the log
		// end with nothing, which happens for a moment after a leader
		// change; beyond the log end it answers OFFSET_OUT_OF_RANGE.
		s.recycle.Release(f.Body, d.Records, d.Inflate)
		return catchup.Fetched{Offsets: marks}, mark(fmt.Errorf(
			"fetch %s at %d: offset above the high watermark %d", p, from, f.HighWatermark), catchup.ErrRetriable)
	}
	body := f.Body
	if d.BodyFree {
		// The records were decompressed out of it: the response buffer
		// serves the next fetch while these are produced, so that a
		// compressed copy holds a response only while it is decoded.
		s.recycle.Release(body, nil, nil)
		body = nil
	}
	released := false
	release := func() {
		if !released { // at most once: a second release would hand the same memory to two fetches
			released = true
			s.recycle.Release(body, d.Records, d.Inflate)
		}
	}
	return catchup.Fetched{Records: d.Records, Next: d.Next, Offsets: marks, Release: release}, nil
}

// outOfRange explains an OFFSET_OUT_OF_RANGE: a gap if from is below the
// log start, a recreated topic if it is above the log end.
func (s *Source) outOfRange(ctx context.Context, marks catchup.Offsets, from int64) error {
	p := marks.Partition
	if marks.LogStart < 0 || marks.HighWatermark < 0 {
		// Kafka leaves the watermarks out of an error answer.
		w, err := s.cl.watermarks(ctx, []catchup.Partition{p})
		if err != nil {
			return fmt.Errorf("fetch %s at %d: offset out of range: %w", p, from, err)
		}
		marks = w[0]
	}
	switch {
	case from < marks.LogStart:
		return &catchup.GapError{Partition: p, From: from, To: marks.LogStart}
	case from > marks.HighWatermark:
		return fmt.Errorf("fetch %s at %d: the checkpoint is above the log end %d: the topic was deleted and created again, "+
			"or its log was truncated; reset the checkpoint deliberately: %w", p, from, marks.HighWatermark, catchup.ErrTopicRecreated)
	default:
		// The log moved between the fetch and the look-up.
		return mark(fmt.Errorf("fetch %s at %d: %w", p, from, kafka.OffsetOutOfRange), catchup.ErrRetriable)
	}
}
