package plan

import (
	"cmp"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// Work is the backlog of one partition of one pipeline: what the Lambda
// dispatcher hands out, and what `catchup plan` orders its rows by.
type Work struct {
	Pipeline string
	catchup.Partition
	LagRecords int64 // offsets of the window left to copy
	LagBytes   int64 // their estimated bytes
	// Urgency is the share of the source's retained log that is not copied
	// yet, from 0 to 1: at 1 the next record to copy is the oldest the
	// source still holds, the first that retention deletes.
	Urgency float64
}

// NewWork returns the backlog of window pl of pipeline, whose source
// offsets are o, at avg bytes a record (Sizes.Average).
func NewWork(pipeline string, pl Planned, o catchup.Offsets, avg float64) Work {
	w := Work{Pipeline: pipeline, Partition: pl.Partition, LagRecords: pl.Len(), LagBytes: int64(float64(pl.Len()) * avg)}
	if retained := o.HighWatermark - o.LogStart; retained > 0 {
		w.Urgency = min(1, max(0, float64(o.HighWatermark-pl.From)/float64(retained)))
	}
	return w
}

// CompareUrgency orders work most urgent first: the higher Urgency, then
// the more LagBytes, then by pipeline and partition. The dispatcher hands
// out work in this order (fanout.Split), and `catchup plan` prints it so.
func CompareUrgency(a, b Work) int {
	return cmp.Or(cmp.Compare(b.Urgency, a.Urgency), cmp.Compare(b.LagBytes, a.LagBytes),
		cmp.Compare(a.Pipeline, b.Pipeline), a.Partition.Compare(b.Partition))
}

// DefaultRecordBytes is the size Sizes assumes for a record of a pipeline
// nothing is known of: no copy counters, no sample.
const DefaultRecordBytes = 1024

// Sizes estimates the average record size of the partitions of one
// pipeline, for the bytes of a backlog. It is not safe for concurrent use.
type Sizes struct {
	partition map[catchup.Partition]float64
	topic     map[string]float64
	sampled   map[string]float64 // by topic, from Average's samples
	pipeline  float64
}

// RecordSizes returns the Sizes of a pipeline whose checkpoints are cps,
// learnt from their copy counters (Records and Bytes).
func RecordSizes[C Checkpoint](cps map[catchup.Partition]C) *Sizes {
	s := &Sizes{partition: map[catchup.Partition]float64{}, topic: map[string]float64{}, sampled: map[string]float64{}}
	type sum struct{ records, bytes int64 }
	topics := map[string]*sum{}
	var all sum
	for p, c := range cps {
		cp := c.Progress()
		if cp.Records <= 0 || cp.Bytes <= 0 {
			continue
		}
		s.partition[p] = float64(cp.Bytes) / float64(cp.Records)
		t := topics[p.Topic]
		if t == nil {
			t = &sum{}
			topics[p.Topic] = t
		}
		t.records += cp.Records
		t.bytes += cp.Bytes
		all.records += cp.Records
		all.bytes += cp.Bytes
	}
	for topic, t := range topics {
		s.topic[topic] = float64(t.bytes) / float64(t.records)
	}
	if all.records > 0 {
		s.pipeline = float64(all.bytes) / float64(all.records)
	}
	return s
}

// Average returns the average record size of p: from the counters of p,
// else of its topic, else from a sample of its topic taken before; else
// it calls sample (if not nil), which reads some of p's records and
// returns their average size, ok false if it read none, and keeps that for
// p's topic; else the pipeline's average from its counters; else
// DefaultRecordBytes.
func (s *Sizes) Average(p catchup.Partition, sample func() (avg float64, ok bool)) float64 {
	if v := s.partition[p]; v > 0 {
		return v
	}
	if v := s.topic[p.Topic]; v > 0 {
		return v
	}
	if v := s.sampled[p.Topic]; v > 0 {
		return v
	}
	if sample != nil {
		if v, ok := sample(); ok && v > 0 {
			s.sampled[p.Topic] = v
			return v
		}
	}
	if s.pipeline > 0 {
		return s.pipeline
	}
	return DefaultRecordBytes
}
