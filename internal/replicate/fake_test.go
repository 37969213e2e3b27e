package replicate

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// fakeCluster is an in-memory Kafka cluster at the engine's interfaces: a
// log of records per partition. Faults are injected through produceFault,
// which is asked before every produce request.
type fakeCluster struct {
	mu       sync.Mutex
	logs     map[catchup.Partition]*fakeLog
	perFetch int // records per fetch; default 3
	perBatch int // records per produce request; default 2
	// produceFault, if set, decides the fate of a produce request: return
	// (false, err) to fail it before appending, (true, err) to append and
	// then fail it.
	produceFault func(p catchup.Partition, first int64) (appendFirst bool, err error)
	// readFault, if set, may fail EndOffsets and ReadBack.
	readFault func() error
	// afterEndOffsets, if set, is called after EndOffsets read the ends.
	afterEndOffsets func()
	produces        int
	// onLogEnd, if set, is called under the lock by every LogEnd before it
	// reads l: a test's replication (l.stalledAt) and leader changes
	// (l.epoch) happen there.
	onLogEnd func(p catchup.Partition, l *fakeLog)
	logEnds  int // LogEnd calls
	// logEndBatches counts LogEnds calls, logEndBatched the
	// partitions they asked for.
	logEndBatches, logEndBatched int
	// poisonReleased makes Fetch return records of their own, which
	// catchup.Fetched.Release overwrites, as a Source that reuses the memory does.
	poisonReleased bool
	releases       int
}

type fakeLog struct {
	start int64 // log start offset
	recs  []catchup.Record
	// batches are the base offsets of the produce requests appended.
	batches []int64
	// stalledAt, when not negative, is the high watermark of a leader whose
	// followers stopped replicating there: records appended since are
	// invisible to EndOffsets and ReadBack. newFakeCluster sets it to -1.
	stalledAt int64
	epoch     int32 // leader epoch
}

// hwm is the high watermark of l.
func (l *fakeLog) hwm() int64 {
	if l.stalledAt >= 0 {
		return l.stalledAt
	}
	return l.start + int64(len(l.recs))
}

var _ Source = (*fakeCluster)(nil)
var _ Target = (*fakeCluster)(nil)

// newFakeCluster returns a cluster holding parts' records. A fetch returns
// 3 records and a produce request holds 2, so a copy of 10 records fetches
// [0, 3), [3, 6), [6, 9), [9, 10) and, holding each fetch's short last
// request back for the next fetch's records, produces [0, 2), [2, 4),
// [4, 6), [6, 8), [8, 10).
func newFakeCluster(parts map[catchup.Partition]int) *fakeCluster {
	c := &fakeCluster{logs: map[catchup.Partition]*fakeLog{}, perFetch: 3, perBatch: 2}
	for p, n := range parts {
		l := &fakeLog{stalledAt: -1}
		for i := range n {
			l.recs = append(l.recs, catchup.Record{
				Offset: int64(i), Key: []byte{byte(i)}, Value: []byte(p.String()),
				Timestamp: time.UnixMilli(1_700_000_000_000 + int64(i)),
			})
		}
		c.logs[p] = l
	}
	return c
}

func (c *fakeCluster) end(p catchup.Partition) int64 {
	l := c.logs[p]
	return l.start + int64(len(l.recs))
}

func (c *fakeCluster) Partitions(_ context.Context, match func(string) bool) ([]catchup.Partition, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ps []catchup.Partition
	for p := range c.logs {
		if match(p.Topic) {
			ps = append(ps, p)
		}
	}
	slices.SortFunc(ps, catchup.Partition.Compare)
	return ps, nil
}

func (c *fakeCluster) ListOffsets(_ context.Context, ps []catchup.Partition) ([]catchup.Offsets, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]catchup.Offsets, len(ps))
	for i, p := range ps {
		out[i] = catchup.Offsets{Partition: p, LogStart: c.logs[p].start, HighWatermark: c.end(p), LastStable: c.end(p)}
	}
	return out, nil
}

func (c *fakeCluster) OffsetsForTime(_ context.Context, ps []catchup.Partition, t time.Time) (map[catchup.Partition]int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[catchup.Partition]int64{}
	for _, p := range ps {
		out[p] = c.end(p)
		for _, r := range c.logs[p].recs {
			if !r.Timestamp.Before(t) {
				out[p] = r.Offset
				break
			}
		}
	}
	return out, nil
}

func (c *fakeCluster) Fetch(_ context.Context, p catchup.Partition, from int64, _ int32) (catchup.Fetched, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.logs[p]
	if from < l.start {
		return catchup.Fetched{}, &catchup.GapError{Partition: p, From: from, To: l.start}
	}
	i := int(from - l.start)
	j := min(i+c.perFetch, len(l.recs))
	recs := make([]catchup.Record, j-i)
	for k, r := range l.recs[i:j] {
		r.Headers = slices.Clone(r.Headers)
		recs[k] = r
	}
	f := catchup.Fetched{Records: recs, Next: l.start + int64(j)}
	if c.poisonReleased {
		for k := range recs {
			recs[k].Key, recs[k].Value = bytes.Clone(recs[k].Key), bytes.Clone(recs[k].Value)
		}
		f.Release = func() {
			c.mu.Lock()
			c.releases++
			c.mu.Unlock()
			for k := range recs {
				recs[k].Offset = -1
				for b := range recs[k].Value {
					recs[k].Value[b] = 'X'
				}
				recs[k].Key = []byte("released")
			}
		}
	}
	return f, nil
}

func (c *fakeCluster) PartitionCounts(_ context.Context, topics []string) (map[string]int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for p := range c.logs {
		if slices.Contains(topics, p.Topic) {
			out[p.Topic] = max(out[p.Topic], int(p.Partition)+1)
		}
	}
	return out, nil
}

func (c *fakeCluster) EndOffsets(_ context.Context, ps []catchup.Partition) (map[catchup.Partition]int64, error) {
	if c.readFault != nil {
		if err := c.readFault(); err != nil {
			return nil, err
		}
	}
	c.mu.Lock()
	out := map[catchup.Partition]int64{}
	for _, p := range ps {
		out[p] = c.logs[p].hwm()
	}
	c.mu.Unlock()
	if c.afterEndOffsets != nil {
		c.afterEndOffsets()
	}
	return out, nil
}

func (c *fakeCluster) RequestLen(topic string, stamp *catchup.Provenance, parts ...[]catchup.Record) int {
	n := 0
	for _, recs := range parts {
		n += len(recs)
	}
	return min(c.perBatch, n)
}

func (c *fakeCluster) Produce(ctx context.Context, p catchup.Partition, recs []catchup.Record, stamp *catchup.Provenance) (int, int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, -1, fmt.Errorf("%w: %w", err, catchup.ErrRetriable)
	}
	n := min(c.perBatch, len(recs)) // one request
	var appendFirst bool
	var err error
	if c.produceFault != nil { // called unlocked: a fault may sleep or touch the cluster
		appendFirst, err = c.produceFault(p, recs[0].Offset)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.produces++
	l := c.logs[p]
	if err == nil || appendFirst {
		l.batches = append(l.batches, c.end(p))
		for _, r := range recs[:n] {
			// A copy, as a real target's request is: the caller may
			// reuse the records' memory once they are acknowledged.
			r.Key, r.Value = bytes.Clone(r.Key), bytes.Clone(r.Value)
			r.Headers = slices.Clone(r.Headers)
			for h := range r.Headers {
				r.Headers[h].Value = bytes.Clone(r.Headers[h].Value)
			}
			if stamp != nil {
				pv := *stamp
				pv.Offset = r.Offset
				r.Headers = append(r.Headers, catchup.Header{Key: catchup.ProvenanceHeader, Value: catchup.AppendProvenance(nil, pv)})
			}
			r.Offset = c.end(p)
			l.recs = append(l.recs, r)
		}
	}
	if err != nil {
		return 0, -1, err
	}
	return n, c.end(p), nil
}

func (c *fakeCluster) ReadBack(_ context.Context, p catchup.Partition, end int64) ([]catchup.Record, int64, error) {
	if c.readFault != nil {
		if err := c.readFault(); err != nil {
			return nil, 0, err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.logs[p]
	end = min(end, l.hwm()) // a reader sees nothing above the high watermark
	if end <= l.start {
		return nil, end, nil
	}
	base := l.start
	for _, b := range l.batches {
		if b < end {
			base = max(base, b)
		}
	}
	return slices.Clone(l.recs[base-l.start : end-l.start]), base, nil
}

func (c *fakeCluster) LogEnd(_ context.Context, p catchup.Partition) (catchup.LogEnd, error) {
	if c.readFault != nil {
		if err := c.readFault(); err != nil {
			return catchup.LogEnd{}, err
		}
	}
	c.mu.Lock()
	c.logEnds++
	le := c.logEnd(p)
	c.mu.Unlock()
	if c.afterEndOffsets != nil { // a look at the end, as EndOffsets is
		c.afterEndOffsets()
	}
	return le, nil
}

// logEnd is a look at p's log end, under c.mu.
func (c *fakeCluster) logEnd(p catchup.Partition) catchup.LogEnd {
	l := c.logs[p]
	if c.onLogEnd != nil {
		c.onLogEnd(p, l)
	}
	return catchup.LogEnd{End: c.end(p), HighWatermark: l.hwm(), Epoch: l.epoch}
}

func (c *fakeCluster) LogEnds(_ context.Context, ps []catchup.Partition) (map[catchup.Partition]catchup.LogEnd, error) {
	if c.readFault != nil {
		if err := c.readFault(); err != nil {
			return nil, err
		}
	}
	c.mu.Lock()
	c.logEndBatches++
	c.logEndBatched += len(ps)
	out := make(map[catchup.Partition]catchup.LogEnd, len(ps))
	for _, p := range ps {
		le := c.logEnd(p)
		le.HighWatermark = -1
		out[p] = le
	}
	c.mu.Unlock()
	if c.afterEndOffsets != nil {
		c.afterEndOffsets()
	}
	return out, nil
}
