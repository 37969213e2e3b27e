// Package worker is the replicate Lambda function's handler: it decodes an
// invocation's event, copies the windows of one pipeline (or a subset of
// its partitions, or a backfill job) until done or until a margin before
// the invocation deadline, and answers with a summary per partition.
//
// The handler keeps the Kafka connections of each pipeline from one
// invocation to the next (an execution environment runs one invocation at
// a time, and may run thousands). Partial progress is a success: the next
// invocation resumes from the checkpoints. An invocation returns an error
// only when retrying it could help (see Handle), because Lambda retries a
// failed asynchronous invocation and then sends it to the on-failure
// destination.
package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/metrics"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/replicate"
	"github.com/kafka-catchup/catchup/internal/runmetrics"
)

// DefaultMargin is the replicate function's deadline margin when
// CATCHUP_DEADLINE_MARGIN is unset: time for the final DynamoDB commits.
const DefaultMargin = 10 * time.Second

// Options configure a Handler.
type Options struct {
	File  *config.File     // the configuration, secrets resolved; required
	Store checkpoint.Store // the checkpoint store, shared by all invocations; required
	// Owner is the lease owner id of this execution environment; required.
	// Where one environment runs invocations concurrently, the request id
	// is appended, so that two invocations never share an owner id.
	Owner string
	// Margin is how long before the invocation deadline copying stops, to
	// leave time for the final commits (capped by the engine to a tenth of
	// the time left); 0: none. The replicate function passes
	// CATCHUP_DEADLINE_MARGIN, DefaultMargin when unset.
	Margin  time.Duration
	Log     *slog.Logger     // default: discard
	Metrics *metrics.Emitter // nil: no metrics
	Service string           // value of the service dimension; "": metrics.DefaultService
	// TopicMetrics adds the topic dimension to the copy metrics: one
	// CloudWatch custom metric per topic and metric more (docs/operations.md, "Metrics
	// and their cost"). Off, they are per pipeline and service only.
	TopicMetrics bool
	// Concurrent says that the environment runs several invocations at
	// once (lambdacontext.MaxConcurrency() > 1).
	Concurrent bool
}

// Handler handles replicate invocations. It is safe for concurrent use.
type Handler struct {
	o Options

	mu       sync.Mutex
	clusters map[string]*pipeline.Clusters // by pipeline name, kept across invocations
}

// New returns a Handler for o.
func New(o Options) (*Handler, error) {
	if o.File == nil || o.Store == nil || o.Owner == "" {
		return nil, errors.New("worker: Options.File, Store and Owner are required")
	}
	if o.Margin < 0 {
		return nil, fmt.Errorf("worker: Options.Margin %v: want 0 (none) or more", o.Margin)
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Service == "" {
		o.Service = metrics.DefaultService
	}
	return &Handler{o: o, clusters: map[string]*pipeline.Clusters{}}, nil
}

// Summary is the response of a replicate invocation.
type Summary struct {
	Pipeline  string `json:"pipeline"`
	Namespace string `json:"namespace,omitempty"` // the checkpoint namespace, when it is not the pipeline's (a job)
	// Done is replicate.Report.Done: every partition reached the end fixed
	// at the start of the run. A partial, leased, in_doubt or failed
	// partition is not done; false means: invoke again to go on.
	Done          bool  `json:"done"`
	Copied        int64 `json:"copied"`
	Bytes         int64 `json:"bytes"`
	Lag           int64 `json:"lag"` // offsets of the windows left to copy
	DurationMS    int64 `json:"duration_ms"`
	StoreRequests int64 `json:"store_requests"`
	// InDoubt counts the partitions that ended in_doubt (their leases are
	// kept: the next invocation waits for the target again). Resent,
	// ReplicationWaits and ReplicationWaitedMS are replicate.Report's.
	InDoubt             int   `json:"in_doubt"`
	Resent              int64 `json:"resent"`
	ReplicationWaits    int64 `json:"replication_waits"`
	ReplicationWaitedMS int64 `json:"replication_waited_ms"`
	replicate.TimeFigures
	Partitions []PartitionSummary `json:"partitions"`
	// Error says why nothing was copied when retrying cannot help (a bad
	// event, an unknown pipeline); the invocation itself succeeds.
	Error string `json:"error,omitempty"`
}

// PartitionSummary is the outcome of one partition.
type PartitionSummary struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	From      int64  `json:"from"` // the window [from, to)
	To        int64  `json:"to"`
	Next      int64  `json:"next"` // the checkpoint committed
	Copied    int64  `json:"copied"`
	Bytes     int64  `json:"bytes"`
	Lag       int64  `json:"lag"` // to - next
	Status    string `json:"status"`
	// LeaseOwner and LeaseExpires name the holder of a leased partition.
	LeaseOwner   string     `json:"lease_owner,omitempty"`
	LeaseExpires *time.Time `json:"lease_expires,omitempty"`
	Error        string     `json:"error,omitempty"`
}

// Handle runs one invocation: payload is an Event. It returns an error,
// which makes Lambda retry an asynchronous invocation, only when retrying
// could help: the pipeline could not be surveyed (a cluster or the table
// unreachable), or a partition failed with a transient error (a broker
// unreachable, a retriable Kafka error, a produce whose outcome is
// unknown). A bad event, an unknown pipeline, a gap, a recreated topic or
// a lost lease are answered with a summary, logged at level ERROR and
// counted in the metrics: a retry would fail the same way.
func (h *Handler) Handle(ctx context.Context, payload json.RawMessage) (*Summary, error) {
	start := time.Now()
	ev, err := DecodeEvent(payload)
	if err != nil {
		h.o.Log.ErrorContext(ctx, "invocation rejected", "error", err)
		return &Summary{Error: err.Error()}, nil
	}
	log := h.o.Log.With("pipeline", ev.Pipeline)
	pc := h.pipeline(ev.Pipeline)
	if pc == nil {
		err := fmt.Errorf("pipeline %q is not in the configuration", ev.Pipeline)
		log.ErrorContext(ctx, "invocation rejected", "error", err)
		return &Summary{Pipeline: ev.Pipeline, Error: err.Error()}, nil
	}
	for _, p := range ev.Partitions {
		if !pc.Topics.Match(p.Topic) {
			err := fmt.Errorf("topic %s is not selected by pipeline %s", p.Topic, pc.Name)
			log.ErrorContext(ctx, "invocation rejected", "error", err)
			return &Summary{Pipeline: ev.Pipeline, Error: err.Error()}, nil
		}
	}
	cl, err := h.connect(pc)
	if err != nil {
		log.ErrorContext(ctx, "invocation rejected", "error", err)
		return &Summary{Pipeline: ev.Pipeline, Error: err.Error()}, nil
	}
	o := pipeline.Options{
		Owner: h.owner(ctx), Store: h.o.Store, Clusters: cl,
		Partitions: ev.partitions(), Margin: h.o.Margin, Log: h.o.Log, // the engine adds the pipeline itself
	}
	if ev.Job != nil {
		o.Job = &pipeline.Job{Name: ev.Job.Name, From: ev.Job.From, To: ev.Job.To}
	}
	p, err := pipeline.Open(ctx, h.o.File, pc, o)
	if err != nil {
		log.ErrorContext(ctx, "invocation rejected", "error", err)
		return &Summary{Pipeline: ev.Pipeline, Error: err.Error()}, nil
	}
	defer p.Close()
	if err := p.CheckJob(ctx, o.Partitions); err != nil {
		log.ErrorContext(ctx, "invocation rejected", "error", err)
		if !errors.Is(err, pipeline.ErrJobAhead) {
			return nil, fmt.Errorf("pipeline %s: %w", ev.Pipeline, err) // reading the store or the source failed: retry
		}
		return &Summary{Pipeline: ev.Pipeline, Error: err.Error()}, nil
	}
	rep, err := p.Engine.Run(ctx)
	if err != nil {
		log.ErrorContext(ctx, "run failed", "error", err)
		if errors.Is(err, replicate.ErrNoTopic) {
			return &Summary{Pipeline: ev.Pipeline, Error: err.Error()}, nil // a retry would find no topic either
		}
		return nil, fmt.Errorf("pipeline %s: %w", ev.Pipeline, err)
	}
	sum := summarize(ev, rep)
	sum.StoreRequests = rep.StoreRequests // this invocation's own, in a warm Lambda too
	sum.DurationMS = time.Since(start).Milliseconds()
	h.emit(ctx, ev.Pipeline, ev.Job != nil, rep, sum.StoreRequests)

	var transient []error
	for _, r := range rep.Partitions {
		if r.Status.Failed() {
			log.ErrorContext(ctx, "partition not copied", "topic", r.Topic, "partition", r.Partition.Partition,
				"status", string(r.Status), "next", r.Next, "error", r.Err)
			if r.Status == replicate.StatusFailed && Transient(r.Err) {
				transient = append(transient, fmt.Errorf("%s: %w", r.Partition, r.Err))
			}
		}
	}
	log.InfoContext(ctx, "invocation done", "namespace", rep.Pipeline, "done", sum.Done, "copied", sum.Copied,
		"bytes", sum.Bytes, "lag", sum.Lag, "partitions", len(sum.Partitions), "store_requests", sum.StoreRequests,
		"in_doubt", sum.InDoubt, "resent", sum.Resent, "replication_waits", sum.ReplicationWaits,
		"replication_waited_ms", sum.ReplicationWaitedMS, "duration_ms", sum.DurationMS)
	if len(transient) > 0 {
		return nil, fmt.Errorf("pipeline %s: %d partitions failed with transient errors (progress was kept): %w",
			ev.Pipeline, len(transient), errors.Join(transient...))
	}
	return sum, nil
}

// Transient reports whether err is worth retrying soon: a retriable Kafka
// error, a produce whose outcome is unknown (the next run reconciles), or
// a network error.
func Transient(err error) bool {
	var ne net.Error
	return errors.Is(err, catchup.ErrRetriable) || errors.Is(err, catchup.ErrUnknownOutcome) || errors.As(err, &ne)
}

func (h *Handler) pipeline(name string) *config.Pipeline {
	for i := range h.o.File.Pipelines {
		if h.o.File.Pipelines[i].Name == name {
			return &h.o.File.Pipelines[i]
		}
	}
	return nil
}

// connect returns the connections of p, made on the first invocation that
// needs them. Making them does no network I/O.
func (h *Handler) connect(p *config.Pipeline) (*pipeline.Clusters, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c, ok := h.clusters[p.Name]; ok {
		return c, nil
	}
	c, err := pipeline.Connect(p)
	if err != nil {
		return nil, err
	}
	h.clusters[p.Name] = c
	return c, nil
}

func (h *Handler) owner(ctx context.Context) string {
	if lc, ok := lambdacontext.FromContext(ctx); ok && h.o.Concurrent {
		return h.o.Owner + "/" + lc.AwsRequestID
	}
	return h.o.Owner
}

func summarize(ev Event, rep *replicate.Report) *Summary {
	sum := &Summary{Pipeline: ev.Pipeline, Done: rep.Done(), Partitions: make([]PartitionSummary, 0, len(rep.Partitions)),
		Resent: rep.Resent, ReplicationWaits: rep.ReplicationWaits, ReplicationWaitedMS: rep.ReplicationWaited.Milliseconds(),
		TimeFigures: rep.TimeFigures()}
	if rep.Pipeline != ev.Pipeline {
		sum.Namespace = rep.Pipeline
	}
	for _, r := range rep.Partitions {
		ps := PartitionSummary{Topic: r.Topic, Partition: r.Partition.Partition, From: r.From, To: r.To, Next: r.Next,
			Copied: r.Copied, Bytes: r.Bytes, Lag: r.Lag(), Status: string(r.Status), LeaseOwner: r.LeaseOwner,
			LeaseExpires: timeOrNil(r.LeaseExpires)}
		if r.Err != nil {
			ps.Error = r.Err.Error()
		}
		if r.Status == replicate.StatusInDoubt {
			sum.InDoubt++
		}
		sum.Copied += r.Copied
		sum.Bytes += r.Bytes
		sum.Lag += ps.Lag
		sum.Partitions = append(sum.Partitions, ps)
	}
	return sum
}

// timeOrNil returns &t, or nil for the zero time.
func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// emit writes the invocation's metrics: one EMF line for the pipeline (or,
// with TopicMetrics, one per topic), and one with its DynamoDB requests.
// A backfill job (job) writes under its pipeline's name, not its
// checkpoint namespace, so that jobs add no dimension values (each would
// be a custom metric more), and its time figures as timeValues says.
func (h *Handler) emit(ctx context.Context, pipeline string, job bool, rep *replicate.Report, storeRequests int64) {
	service := metrics.Dimension{Name: metrics.DimService, Value: h.o.Service}
	pipe := metrics.Dimension{Name: metrics.DimPipeline, Value: pipeline}
	var errs []error
	byTopic := runmetrics.Copy(rep, h.o.TopicMetrics) // by "" without TopicMetrics
	for _, topic := range slices.Sorted(maps.Keys(byTopic)) {
		dims, sets := []metrics.Dimension{service, pipe}, [][]string{{metrics.DimPipeline}, {metrics.DimService}}
		if topic != "" {
			dims = append(dims, metrics.Dimension{Name: metrics.DimTopic, Value: topic})
			sets = append(sets, []string{metrics.DimPipeline, metrics.DimTopic})
		}
		errs = append(errs, h.o.Metrics.Emit(dims, sets, byTopic[topic]))
	}
	errs = append(errs, h.o.Metrics.Emit([]metrics.Dimension{service, pipe},
		[][]string{{metrics.DimPipeline}, {metrics.DimService}}, runmetrics.Run(rep, storeRequests, job)))
	if err := errors.Join(errs...); err != nil {
		h.o.Log.ErrorContext(ctx, "metrics not written", "error", err)
	}
}
