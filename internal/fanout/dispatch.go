package fanout

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/groupsync"
	"github.com/kafka-catchup/catchup/internal/metrics"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/plan"
	"github.com/kafka-catchup/catchup/internal/worker"
)

// Invoker starts one replicate invocation asynchronously with payload, a
// worker.Event, and returns once the invocation is queued.
type Invoker interface {
	Invoke(ctx context.Context, payload []byte) error
}

// Options configure a Dispatcher.
type Options struct {
	File    *config.File     // the configuration, secrets resolved; required
	Store   checkpoint.Store // the checkpoint store; required
	Invoker Invoker          // starts replicate invocations; required
	// Limits bound the shards (DefaultLimits: 20 shards, 64 partitions up
	// to 1,024 for a large backlog, 4 GiB); MaxShards, MaxPartitions and
	// MaxBytes at least 1, PartitionCeiling 0 or at most MaxPartitions:
	// shards do not grow with the backlog.
	Limits Limits
	// Concurrency is how many pipelines are surveyed and how many Invoke
	// calls are in flight at once; at least 1 (DefaultInvokeConcurrency).
	Concurrency int
	// SampleBytes is how much one fetch reads to estimate the record size
	// of a topic that has no copy counters yet (default 64 KiB); at most
	// MaxSamples such fetches are made per dispatch (default 16). Without
	// counters or a sample, a record is taken to be 1 KiB.
	SampleBytes int32
	MaxSamples  int
	Log         *slog.Logger     // default: discard
	Metrics     *metrics.Emitter // nil: no metrics
	Service     string           // value of the service dimension; "": metrics.DefaultService
	// TopicMetrics adds LagRecords and LagBytes per topic to the metrics
	// per pipeline and service: two CloudWatch custom metrics per topic more
	// (docs/operations.md, "Metrics and their cost").
	TopicMetrics bool
	Now          func() time.Time // the clock leases are compared with; default time.Now
}

// Dispatcher handles dispatch invocations. It is safe for concurrent use.
type Dispatcher struct {
	o Options

	mu         sync.Mutex
	pipes      map[string]*pipeline.Pipeline // kept across invocations
	groupSyncs map[string]time.Time          // last group sync by pipeline
}

// New returns a Dispatcher for o.
func New(o Options) (*Dispatcher, error) {
	if o.File == nil || o.Store == nil || o.Invoker == nil {
		return nil, errors.New("fanout: Options.File, Store and Invoker are required")
	}
	l := o.Limits
	if l.MaxShards < 1 || l.MaxPartitions < 1 || l.MaxBytes < 1 || l.PartitionCeiling < 0 || o.Concurrency < 1 {
		return nil, fmt.Errorf("fanout: Options.Limits %+v and Concurrency %d: want MaxShards, MaxPartitions, MaxBytes and Concurrency at least 1, PartitionCeiling 0 or more",
			l, o.Concurrency)
	}
	o.SampleBytes = cmp.Or(o.SampleBytes, 64<<10)
	o.MaxSamples = cmp.Or(o.MaxSamples, 16)
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Service == "" {
		o.Service = metrics.DefaultService
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Dispatcher{o: o, pipes: map[string]*pipeline.Pipeline{}, groupSyncs: map[string]time.Time{}}, nil
}

// Event is what a dispatch invocation is asked to do: the schedule sends
// {} for every pipeline, or names some.
type Event struct {
	Pipelines []string `json:"pipelines,omitempty"`
}

// DecodeEvent decodes payload strictly; an empty payload is {}.
func DecodeEvent(payload []byte) (Event, error) {
	var ev Event
	if len(bytes.TrimSpace(payload)) == 0 {
		return ev, nil
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ev); err != nil {
		return Event{}, fmt.Errorf("decode event: %w", err)
	}
	if dec.More() {
		return Event{}, errors.New("decode event: data after the JSON object")
	}
	return ev, nil
}

// Summary is the response of a dispatch invocation.
type Summary struct {
	Shards  int `json:"shards"`  // replicate invocations planned
	Invoked int `json:"invoked"` // of which queued
	// ETATicks estimates the dispatches it takes to hand out the backlog
	// found, this one included (see Ticks): 0 with nothing to copy, 1 when
	// this dispatch covered it all.
	ETATicks   int               `json:"eta_ticks"`
	DurationMS int64             `json:"duration_ms"`
	Pipelines  []PipelineSummary `json:"pipelines"`
	Error      string            `json:"error,omitempty"` // why nothing was done, when retrying cannot help
}

// PipelineSummary is the backlog of one pipeline and what was done about it.
type PipelineSummary struct {
	Pipeline   string `json:"pipeline"`
	Partitions int    `json:"partitions"` // selected source partitions
	Lagging    int    `json:"lagging"`    // with offsets left to copy
	LagRecords int64  `json:"lag_records"`
	LagBytes   int64  `json:"lag_bytes"` // estimated
	Leased     int    `json:"leased"`    // lagging but held by a live lease: left alone
	Blocked    int    `json:"blocked"`   // cannot be copied until an operator acts (gap, recreated topic)
	Gaps       int    `json:"gaps"`      // of which by a gap
	Deferred   int    `json:"deferred"`  // over the shard cap: left for the next dispatch
	Shards     int    `json:"shards"`
	// Groups is what group sync (sync_groups) did in this dispatch, when
	// it was due.
	Groups        []groupsync.Group `json:"groups,omitempty"`
	GroupsSynced  int               `json:"group_partitions_synced,omitempty"`
	GroupsSkipped int               `json:"group_partitions_skipped,omitempty"`
	Error         string            `json:"error,omitempty"`
}

// Handle runs one dispatch: it surveys the pipelines, splits their backlog
// into shards and invokes the replicate function once per shard. It
// returns an error, so that Lambda retries, when a pipeline could not be
// surveyed or an Invoke call failed; the shards that were invoked are
// not undone (a retry that sends a partition again is harmless: the
// worker that comes second finds it leased). With nothing to copy it
// makes one metadata, one list-offsets and one store request per
// pipeline, and no Invoke call.
func (d *Dispatcher) Handle(ctx context.Context, payload json.RawMessage) (*Summary, error) {
	start := time.Now()
	ev, err := DecodeEvent(payload)
	if err != nil {
		d.o.Log.ErrorContext(ctx, "invocation rejected", "error", err)
		return &Summary{Error: err.Error()}, nil
	}
	var pcs []*config.Pipeline
	for i := range d.o.File.Pipelines {
		if len(ev.Pipelines) == 0 || slices.Contains(ev.Pipelines, d.o.File.Pipelines[i].Name) {
			pcs = append(pcs, &d.o.File.Pipelines[i])
		}
	}
	for _, name := range ev.Pipelines {
		if !slices.ContainsFunc(pcs, func(pc *config.Pipeline) bool { return pc.Name == name }) {
			err := fmt.Errorf("pipeline %q is not in the configuration", name)
			d.o.Log.ErrorContext(ctx, "invocation rejected", "error", err)
			return &Summary{Error: err.Error()}, nil
		}
	}

	// Survey the pipelines, Concurrency at a time.
	sums := make([]PipelineSummary, len(pcs))
	works := make([][]Work, len(pcs))
	samples := &sampler{left: d.o.MaxSamples, bytes: d.o.SampleBytes}
	sem := make(chan struct{}, d.o.Concurrency)
	var wg sync.WaitGroup
	for i, pc := range pcs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			sums[i], works[i] = d.survey(ctx, pc, samples)
		})
	}
	wg.Wait()

	all := slices.Concat(works...)
	shards, deferred := Split(all, d.o.Limits)
	index := map[string]*PipelineSummary{}
	for i := range sums {
		index[sums[i].Pipeline] = &sums[i]
	}
	for _, w := range deferred {
		index[w.Pipeline].Deferred++
	}
	for _, s := range shards {
		index[s.Pipeline].Shards++
	}
	invoked, invokeErr := d.invoke(ctx, shards)

	sum := &Summary{Shards: len(shards), Invoked: invoked, ETATicks: Ticks(all, d.o.Limits), Pipelines: sums, DurationMS: time.Since(start).Milliseconds()}
	var failed []error
	for _, ps := range sums {
		d.emit(ctx, ps)
		if ps.Error != "" {
			failed = append(failed, fmt.Errorf("pipeline %s: %s", ps.Pipeline, ps.Error))
		}
		d.o.Log.InfoContext(ctx, "pipeline dispatched", "pipeline", ps.Pipeline, "partitions", ps.Partitions,
			"lagging", ps.Lagging, "lag_records", ps.LagRecords, "lag_bytes", ps.LagBytes, "leased", ps.Leased,
			"blocked", ps.Blocked, "deferred", ps.Deferred, "shards", ps.Shards)
	}
	if err := d.o.Metrics.Emit([]metrics.Dimension{{Name: metrics.DimService, Value: d.o.Service}}, [][]string{{metrics.DimService}},
		[]metrics.Value{{Name: metrics.ETATicks, Unit: metrics.Count, Value: int64(sum.ETATicks)}}); err != nil {
		d.o.Log.ErrorContext(ctx, "metrics not written", "error", err)
	}
	d.o.Log.InfoContext(ctx, "invocation done", "shards", sum.Shards, "invoked", sum.Invoked, "eta_ticks", sum.ETATicks,
		"duration_ms", sum.DurationMS)
	if invokeErr != nil {
		failed = append(failed, invokeErr)
	}
	if err := errors.Join(failed...); err != nil {
		return nil, err
	}
	return sum, nil
}

// survey plans one pipeline and returns its backlog; an error is in the summary.
func (d *Dispatcher) survey(ctx context.Context, pc *config.Pipeline, samples *sampler) (PipelineSummary, []Work) {
	sum := PipelineSummary{Pipeline: pc.Name}
	log := d.o.Log.With("pipeline", pc.Name)
	p, err := d.pipeline(ctx, pc)
	if err != nil {
		sum.Error = err.Error()
		log.ErrorContext(ctx, "pipeline not surveyed", "error", err)
		return sum, nil
	}
	s, err := p.Engine.SurveyBegun(ctx) // under start: latest, begins new topics (replicate.Engine.SurveyBegun)
	if err != nil {
		sum.Error = err.Error()
		log.ErrorContext(ctx, "pipeline not surveyed", "error", err)
		return sum, nil
	}
	sum.Partitions = len(s.Windows)
	sizes := plan.RecordSizes(s.Checkpoints)
	now := d.o.Now()
	type topicLag struct{ records, bytes int64 }
	lag := map[string]*topicLag{} // with TopicMetrics
	var work []Work
	for i, pl := range s.Windows {
		marks, cp := s.Offsets[i], s.Checkpoints[pl.Partition]
		if pl.Err != nil {
			sum.Blocked++
			var ge *catchup.GapError
			if errors.As(pl.Err, &ge) {
				sum.Gaps++
			}
			log.ErrorContext(ctx, "partition blocked", "topic", pl.Topic, "partition", pl.Partition.Partition, "error", pl.Err)
			continue
		}
		if pl.Len() == 0 {
			continue
		}
		avg := sizes.Average(pl.Partition, func() (float64, bool) { return samples.sample(ctx, p.Source, pl.Partition, pl.From) })
		w := plan.NewWork(pc.Name, pl, marks, avg)
		sum.Lagging++
		sum.LagRecords += w.LagRecords
		sum.LagBytes += w.LagBytes
		if d.o.TopicMetrics {
			tl := lag[pl.Topic]
			if tl == nil {
				tl = &topicLag{}
				lag[pl.Topic] = tl
			}
			tl.records += w.LagRecords
			tl.bytes += w.LagBytes
		}
		if cp.Owner != "" && cp.Expires.After(now) {
			sum.Leased++
			continue
		}
		work = append(work, w)
	}

	d.syncGroups(ctx, pc, p, &sum)
	pipe := metrics.Dimension{Name: metrics.DimPipeline, Value: pc.Name}
	var errs []error
	for _, topic := range slices.Sorted(maps.Keys(lag)) {
		errs = append(errs, d.o.Metrics.Emit([]metrics.Dimension{pipe, {Name: metrics.DimTopic, Value: topic}},
			[][]string{{metrics.DimPipeline, metrics.DimTopic}},
			[]metrics.Value{
				{Name: metrics.LagRecords, Unit: metrics.Count, Value: lag[topic].records},
				{Name: metrics.LagBytes, Unit: metrics.Bytes, Value: lag[topic].bytes},
			}))
	}
	if err := errors.Join(errs...); err != nil {
		log.ErrorContext(ctx, "metrics not written", "error", err)
	}
	return sum, work
}

// syncGroups runs group sync for pc when it has sync_groups and its
// interval has passed since the last sync of this Dispatcher (a warm
// Lambda), and records the outcome in sum. A failure is logged.
func (d *Dispatcher) syncGroups(ctx context.Context, pc *config.Pipeline, p *pipeline.Pipeline, sum *PipelineSummary) {
	if pc.SyncGroups == nil {
		return
	}
	now := d.o.Now()
	d.mu.Lock()
	last, ok := d.groupSyncs[pc.Name]
	d.mu.Unlock()
	if ok && now.Sub(last) < pc.SyncGroups.Interval {
		return
	}
	groups, err := p.SyncGroups(ctx, pc)
	if err != nil {
		d.o.Log.WarnContext(ctx, "groups not synced", "pipeline", pc.Name, "error", err)
		return
	}
	d.mu.Lock()
	d.groupSyncs[pc.Name] = now
	d.mu.Unlock()
	sum.Groups = groups
	sum.GroupsSynced, sum.GroupsSkipped = pipeline.GroupCounts(groups)
	d.o.Log.InfoContext(ctx, "groups synced", "pipeline", pc.Name, "groups", len(groups),
		"synced", sum.GroupsSynced, "skipped", sum.GroupsSkipped)
}

// emit writes the metrics of one pipeline's dispatch: one EMF line under
// the pipeline and the service. A pipeline that could not be surveyed
// writes none, so that its lag alarm sees missing data, not zero.
func (d *Dispatcher) emit(ctx context.Context, ps PipelineSummary) {
	if ps.Error != "" {
		return
	}
	err := d.o.Metrics.Emit(
		[]metrics.Dimension{{Name: metrics.DimService, Value: d.o.Service}, {Name: metrics.DimPipeline, Value: ps.Pipeline}},
		[][]string{{metrics.DimPipeline}, {metrics.DimService}},
		[]metrics.Value{
			{Name: metrics.LagRecords, Unit: metrics.Count, Value: ps.LagRecords},
			{Name: metrics.LagBytes, Unit: metrics.Bytes, Value: ps.LagBytes},
			{Name: metrics.Shards, Unit: metrics.Count, Value: int64(ps.Shards)},
			{Name: metrics.LeasedPartitions, Unit: metrics.Count, Value: int64(ps.Leased)},
			{Name: metrics.DeferredPartitions, Unit: metrics.Count, Value: int64(ps.Deferred)},
			{Name: metrics.BlockedPartitions, Unit: metrics.Count, Value: int64(ps.Blocked)},
			{Name: metrics.Gaps, Unit: metrics.Count, Value: int64(ps.Gaps)},
			{Name: metrics.GroupOffsetsSynced, Unit: metrics.Count, Value: int64(ps.GroupsSynced)},
			{Name: metrics.GroupOffsetsSkipped, Unit: metrics.Count, Value: int64(ps.GroupsSkipped)},
		})
	if err != nil {
		d.o.Log.ErrorContext(ctx, "metrics not written", "pipeline", ps.Pipeline, "error", err)
	}
}

// pipeline returns the connected pipeline pc, opened on first use and
// kept: surveying leases nothing, so one engine serves every dispatch.
func (d *Dispatcher) pipeline(ctx context.Context, pc *config.Pipeline) (*pipeline.Pipeline, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if p, ok := d.pipes[pc.Name]; ok {
		return p, nil
	}
	p, err := pipeline.Open(ctx, d.o.File, pc, pipeline.Options{Owner: "dispatch", Store: d.o.Store, Log: d.o.Log})
	if err != nil {
		return nil, err
	}
	d.pipes[pc.Name] = p
	return p, nil
}

// invoke starts one replicate invocation per shard, Concurrency at a time,
// and returns how many were queued and every failure.
func (d *Dispatcher) invoke(ctx context.Context, shards []Shard) (int, error) {
	sem := make(chan struct{}, d.o.Concurrency)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	invoked := 0
	for _, s := range shards {
		ev := worker.Event{Pipeline: s.Pipeline}
		for _, p := range s.Partitions {
			ev.Partitions = append(ev.Partitions, worker.Partition{Topic: p.Topic, Partition: p.Partition})
		}
		payload, err := json.Marshal(ev)
		if err != nil {
			return 0, err
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			err := d.o.Invoker.Invoke(ctx, payload)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("invoke replicate for pipeline %s, %d partitions: %w", s.Pipeline, len(s.Partitions), err))
				d.o.Log.ErrorContext(ctx, "shard not invoked", "pipeline", s.Pipeline, "partitions", len(s.Partitions), "error", err)
				return
			}
			invoked++
		})
	}
	wg.Wait()
	return invoked, errors.Join(errs...)
}

// fetcher is the part of a source cluster (replicate.Source) the sampler reads.
type fetcher interface {
	Fetch(ctx context.Context, p catchup.Partition, from int64, maxBytes int32) (catchup.Fetched, error)
}

// sampler reads a few records of topics without counters, within a budget
// shared by every pipeline of one dispatch.
type sampler struct {
	mu    sync.Mutex
	left  int
	bytes int32
}

// sample returns the average size of the records of p from offset from,
// ok false once the budget is spent or if the fetch read none.
func (sm *sampler) sample(ctx context.Context, src fetcher, p catchup.Partition, from int64) (float64, bool) {
	sm.mu.Lock()
	ok := sm.left > 0
	sm.left--
	sm.mu.Unlock()
	if !ok {
		return 0, false
	}
	f, err := src.Fetch(ctx, p, from, sm.bytes)
	if err != nil || len(f.Records) == 0 {
		return 0, false
	}
	n := 0
	for i := range f.Records {
		n += f.Records[i].Size()
	}
	return float64(n) / float64(len(f.Records)), true
}
