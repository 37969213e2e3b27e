package replicate

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/plan"
)

// TopicConfigReader is a Source that reads the configs in force on its
// topics (defaults resolved); the engine reads retention from it to report
// each lagging partition's retention headroom. kafkago.Source implements it.
type TopicConfigReader interface {
	// TopicConfigValues returns, for each of topics that exists, every
	// config in force on it by name.
	TopicConfigValues(ctx context.Context, topics []string) (map[string]map[string]string, error)
}

// sampleBytes is what the fetch of the oldest record not copied asks for:
// the broker returns at least the first batch, whatever its size.
const sampleBytes = 1024

// ageTimeout bounds the reads of timeFigures, which run after copying (and
// at most half the time left before the context's deadline).
const ageTimeout = 5 * time.Second

// timeFigures fills in, for each partition of rep with lag left, Oldest (the
// timestamp of the oldest record not copied, read with one small fetch at
// Next) and Deletion (when the source's retention may delete it, as `catchup
// plan` computes DELETED_IN), and sets rep.Now. A figure it cannot read is
// left zero: the figures inform, they never fail a run. It reads nothing
// when no partition has lag.
func (e *Engine) timeFigures(ctx context.Context, rep *Report) {
	rep.Now = e.o.Now()
	var lagging []int
	topics := map[string]bool{}
	for i, r := range rep.Partitions {
		if r.Lag() > 0 && r.Gap == nil {
			lagging = append(lagging, i)
			topics[r.Topic] = true
		}
	}
	if len(lagging) == 0 || ctx.Err() != nil {
		return
	}
	budget := ageTimeout
	if dl, ok := ctx.Deadline(); ok {
		budget = min(budget, time.Until(dl)/2) // leave the caller time to answer
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	retention := map[string]plan.Retention{}
	if cr, ok := e.o.Source.(TopicConfigReader); ok {
		configs, err := cr.TopicConfigValues(ctx, slices.Sorted(maps.Keys(topics)))
		if err != nil {
			e.o.Log.WarnContext(ctx, "retention unknown", "pipeline", e.o.Pipeline, "error", err)
		}
		for t, c := range configs {
			if r, err := plan.TopicRetention(c); err == nil {
				retention[t] = r
			}
		}
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(e.o.Parallelism, len(lagging)) {
		wg.Go(func() {
			for i := range work {
				r := &rep.Partitions[i]
				r.Oldest = e.oldest(ctx, r.Partition, r.Next)
				if rt, ok := retention[r.Topic]; ok {
					r.Deletion = rt.Deletes(r.Oldest)
				}
			}
		})
	}
	for _, i := range lagging {
		work <- i
	}
	close(work)
	wg.Wait()
}

// oldest returns the timestamp of the first record at or after next in p,
// zero when there is none or it cannot be read.
func (e *Engine) oldest(ctx context.Context, p catchup.Partition, next int64) time.Time {
	f, err := e.o.Source.Fetch(ctx, p, next, sampleBytes)
	if err != nil {
		return time.Time{}
	}
	if f.Release != nil {
		defer f.Release()
	}
	if len(f.Records) == 0 {
		return time.Time{}
	}
	return f.Records[0].Timestamp
}

// Latency is the replication latency of the run: over the partitions that
// copied records, the longest time from the timestamp of the newest record
// copied to Now. ok is false when nothing was copied.
func (r *Report) Latency() (d time.Duration, ok bool) {
	for _, p := range r.Partitions {
		if p.Copied > 0 && !p.Newest.IsZero() {
			d, ok = max(d, r.Now.Sub(p.Newest)), true
		}
	}
	return d, ok
}

// RecordAge is the age of the oldest record not yet copied: over the
// partitions with lag left, the longest time from Oldest to Now. ok is false
// when no partition has lag (or none could be read).
func (r *Report) RecordAge() (d time.Duration, ok bool) {
	for _, p := range r.Partitions {
		if !p.Oldest.IsZero() {
			d, ok = max(d, r.Now.Sub(p.Oldest)), true
		}
	}
	return d, ok
}

// Headroom is the retention headroom: over the partitions with lag left
// whose source topic deletes by time, the shortest time from Now until the
// source's retention may delete the oldest record not copied (negative when
// overdue). ok is false when no such partition exists. A partition whose
// topic also deletes by size (retention.bytes) may lose records sooner.
func (r *Report) Headroom() (d time.Duration, ok bool) {
	for _, p := range r.Partitions {
		if at := p.Deletion.At; !at.IsZero() {
			if h := at.Sub(r.Now); !ok || h < d {
				d, ok = h, true
			}
		}
	}
	return d, ok
}

// TimeFigures are Latency, RecordAge and Headroom in milliseconds, nil where
// the run has none: their form in `catchup run --json` and in the Lambda
// summary.
type TimeFigures struct {
	LatencyMS   *int64 `json:"replication_latency_ms,omitempty"`
	RecordAgeMS *int64 `json:"record_age_ms,omitempty"`
	HeadroomMS  *int64 `json:"retention_headroom_ms,omitempty"`
}

// TimeFigures returns the time figures of r.
func (r *Report) TimeFigures() TimeFigures {
	return TimeFigures{LatencyMS: millis(r.Latency()), RecordAgeMS: millis(r.RecordAge()), HeadroomMS: millis(r.Headroom())}
}

// millis returns d in milliseconds, or nil when !ok.
func millis(d time.Duration, ok bool) *int64 {
	if !ok {
		return nil
	}
	ms := d.Milliseconds()
	return &ms
}
