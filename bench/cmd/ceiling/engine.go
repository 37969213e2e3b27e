package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	cfg "github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// copyWith runs one replicate.Engine over p's partitions from src to tgt,
// with the settings internal/pipeline gives catchup's engine, and returns
// the records and bytes it copied. The checkpoints go to a fresh
// in-memory store.
func copyWith(ctx context.Context, p *cfg.Pipeline, name string, src replicate.Source, tgt replicate.Target) (records, bytes int64, err error) {
	o := pipeline.EngineSettings(p)
	o.Pipeline, o.Owner = name, "ceiling"
	o.Source, o.Target, o.Store = src, tgt, checkpoint.NewMemStore(time.Now)
	// The whole backlog, whatever window limits the file sets, into a
	// target whose topics the benchmark created.
	o.Policy.MaxRecords, o.MaxBytes, o.MaxDuration, o.CreateTopics = 0, 0, 0, false
	e, err := replicate.New(o)
	if err != nil {
		return 0, 0, err
	}
	rep, err := e.Run(ctx)
	if err != nil {
		return 0, 0, err
	}
	var errs []error
	for _, r := range rep.Partitions {
		if r.Status != replicate.StatusDone {
			errs = append(errs, fmt.Errorf("%s: %s: %v", r.Partition, r.Status, r.Err))
		}
	}
	records, bytes, _ = rep.Totals()
	return records, bytes, errors.Join(errs...)
}

// sink is a replicate.Target that acknowledges every record handed to it at
// once and keeps nothing: fetch-only's target. Its partitions are the
// source's.
type sink struct {
	parts []catchup.Partition
	mu    sync.Mutex
	ends  map[catchup.Partition]int64
}

func newSink(parts []catchup.Partition, mapTopic func(string) string) *sink {
	s := &sink{ends: map[catchup.Partition]int64{}}
	for _, p := range parts {
		s.parts = append(s.parts, catchup.Partition{Topic: mapTopic(p.Topic), Partition: p.Partition})
	}
	return s
}

func (s *sink) PartitionCounts(_ context.Context, topics []string) (map[string]int, error) {
	out := map[string]int{}
	for _, p := range s.parts {
		out[p.Topic] = max(out[p.Topic], int(p.Partition)+1)
	}
	return out, nil
}

func (s *sink) EndOffsets(_ context.Context, ps []catchup.Partition) (map[catchup.Partition]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[catchup.Partition]int64{}
	for _, p := range ps {
		out[p] = s.ends[p]
	}
	return out, nil
}

// LogEnd is the sink's end: it has no followers, nothing is above its high
// watermark.
func (s *sink) LogEnd(_ context.Context, p catchup.Partition) (catchup.LogEnd, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return catchup.LogEnd{End: s.ends[p], HighWatermark: s.ends[p]}, nil
}

func (s *sink) Produce(_ context.Context, p catchup.Partition, recs []catchup.Record, _ *catchup.Provenance) (int, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ends[p] += int64(len(recs))
	return len(recs), s.ends[p], nil
}

func (s *sink) ReadBack(context.Context, catchup.Partition, int64) ([]catchup.Record, int64, error) {
	return nil, 0, errors.New("the sink keeps no records")
}

// memSource is a replicate.Source that serves a backlog read into memory,
// in the chunks kafkago.Source returned it: produce-only's source.
type memSource struct {
	marks  []catchup.Offsets
	chunks map[catchup.Partition][]catchup.Fetched
}

func (m *memSource) Partitions(context.Context, func(string) bool) ([]catchup.Partition, error) {
	out := make([]catchup.Partition, len(m.marks))
	for i, o := range m.marks {
		out[i] = o.Partition
	}
	return out, nil
}

func (m *memSource) ListOffsets(_ context.Context, ps []catchup.Partition) ([]catchup.Offsets, error) {
	byP := map[catchup.Partition]catchup.Offsets{}
	for _, o := range m.marks {
		byP[o.Partition] = o
	}
	out := make([]catchup.Offsets, len(ps))
	for i, p := range ps {
		out[i] = byP[p]
	}
	return out, nil
}

func (m *memSource) OffsetsForTime(context.Context, []catchup.Partition, time.Time) (map[catchup.Partition]int64, error) {
	return nil, errors.New("the in-memory source has no time index: start from the earliest offset")
}

// Fetch returns the records of the chunk that holds from, from there on.
func (m *memSource) Fetch(_ context.Context, p catchup.Partition, from int64, _ int32) (catchup.Fetched, error) {
	cs := m.chunks[p]
	i := sort.Search(len(cs), func(i int) bool { return cs[i].Next > from })
	if i == len(cs) {
		return catchup.Fetched{Next: from}, nil
	}
	recs := cs[i].Records
	j := sort.Search(len(recs), func(j int) bool { return recs[j].Offset >= from })
	return catchup.Fetched{Records: recs[j:], Next: cs[i].Next, Offsets: cs[i].Offsets}, nil
}

// load reads every partition of marks from its log start to its end (last
// stable offset) into memory with src, parallelism partitions at a time.
func load(ctx context.Context, src replicate.Source, marks []catchup.Offsets, fetchBytes int32, parallelism int) (*memSource, error) {
	m := &memSource{marks: marks, chunks: map[catchup.Partition][]catchup.Fetched{}}
	var mu sync.Mutex
	err := each(len(marks), parallelism, func(i int) error {
		o := marks[i]
		end := o.LastStable
		if end <= 0 {
			end = o.HighWatermark
		}
		var cs []catchup.Fetched
		for off := o.LogStart; off < end; {
			f, err := src.Fetch(ctx, o.Partition, off, fetchBytes)
			if err != nil {
				return err
			}
			if f.Next <= off {
				return fmt.Errorf("fetch %s at %d: no progress", o.Partition, off)
			}
			f.Release = nil // kept until the end
			cs = append(cs, f)
			off = f.Next
		}
		mu.Lock()
		m.chunks[o.Partition] = cs
		mu.Unlock()
		return nil
	})
	return m, err
}
