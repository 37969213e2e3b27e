// Package prom exports catchup's metrics for Prometheus off Lambda: the
// figures internal/worker writes as EMF lines on Lambda (internal/runmetrics
// makes both from the run's report), under names derived from the EMF names
// (Name), plus the figures of the runs themselves that a scheduler's alerts
// need (runs, last success, duration, interval). One Exporter serves them
// three ways: an HTTP handler for `run --every`, a Pushgateway push for a
// CronJob, and a node_exporter textfile for a systemd timer.
//
// prometheus/client_golang rather than OpenTelemetry: every consumer catchup
// targets off Lambda (a ServiceMonitor, a Pushgateway, node_exporter's
// textfile collector) reads the Prometheus exposition format natively, and
// client_golang writes all three; OpenTelemetry would need a collector in
// between for the pull and textfile paths. docs/metrics.md says more.
package prom

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/push"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kafka-catchup/catchup/internal/metrics"
	"github.com/kafka-catchup/catchup/internal/replicate"
	"github.com/kafka-catchup/catchup/internal/runmetrics"
)

// Namespace prefixes every metric name.
const Namespace = "catchup"

// Labels of the metrics.
const (
	LabelPipeline = "pipeline"
	LabelTopic    = "topic"
	LabelResult   = "result" // of catchup_runs_total: "success" or "failure"
)

// Kind is how a Prometheus metric carries an EMF figure.
type Kind string

// The kinds.
const (
	// Counter: the EMF figure is what one run did (records copied); the
	// counter adds up every run of the process.
	Counter Kind = "counter"
	// Gauge: the EMF figure is a state at the end of the run (partitions
	// failed, lag, record age); the gauge holds the last run's.
	Gauge Kind = "gauge"
)

// Exported returns how the exporter carries the EMF metric name, and
// whether it does: the figures of a run do; the dispatcher's (shards,
// deferred partitions), which only the Lambda dispatcher computes, do not.
func Exported(name string) (Kind, bool) {
	switch name {
	case metrics.Records, metrics.BytesCopied, metrics.Windows, metrics.WindowsDone, metrics.FencedCommits,
		metrics.Retries, metrics.DynamoDBRequests, metrics.Resent, metrics.ReplicationWaits,
		metrics.ReplicationWaited, metrics.TopicConfigChanges, metrics.GroupOffsetsSynced, metrics.GroupOffsetsSkipped:
		return Counter, true
	case metrics.Gaps, metrics.FailedPartitions, metrics.LeasedPartitions, metrics.InDoubtPartitions,
		metrics.LagRecords, metrics.ReplicationLatency, metrics.RecordAge, metrics.RetentionHeadroom,
		metrics.ACLSyncFailed, metrics.TopicConfigSyncFailed:
		return Gauge, true
	}
	return "", false
}

// Name returns the Prometheus name of the EMF metric emf of unit u carried
// as k: "catchup_" and emf in snake case, the base unit (seconds for
// Seconds and Milliseconds, bytes for Bytes) unless the name ends in it,
// and "_total" for a counter: RecordAge is catchup_record_age_seconds,
// ReplicationWaited catchup_replication_waited_seconds_total.
func Name(emf string, u metrics.Unit, k Kind) string {
	var b strings.Builder
	rs := []rune(emf)
	for i, r := range rs {
		// A word starts at an upper-case letter after a lower-case one, or
		// before a lower-case one (the "R" of "DBRequests").
		if i > 0 && unicode.IsUpper(r) && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	name := Namespace + "_" + b.String()
	if suffix := unitSuffix(u); suffix != "" && !strings.HasSuffix(name, suffix) {
		name += suffix
	}
	if k == Counter {
		name += "_total"
	}
	return name
}

func unitSuffix(u metrics.Unit) string {
	switch u {
	case metrics.Seconds, metrics.Milliseconds:
		return "_seconds"
	case metrics.Bytes:
		return "_bytes"
	}
	return ""
}

// scale converts a value of unit u into the base unit of Name.
func scale(v int64, u metrics.Unit) float64 {
	if u == metrics.Milliseconds {
		return float64(v) / 1000
	}
	return float64(v)
}

// The metrics of the runs themselves, which EMF does not carry (Lambda
// reports invocations, errors and durations itself).
const (
	RunsTotal         = Namespace + "_runs_total"                     // runs by pipeline and result
	LastSuccess       = Namespace + "_last_success_timestamp_seconds" // end of the last successful run, by pipeline
	LastRun           = Namespace + "_last_run_timestamp_seconds"     // end of the last run, by pipeline
	RunDuration       = Namespace + "_run_duration_seconds"           // duration of the last run, by pipeline
	RunInterval       = Namespace + "_run_interval_seconds"           // the schedule's interval (--every or --interval)
	ConsecutiveFailed = Namespace + "_consecutive_failed_runs"        // runs failed in a row, all pipelines
	resultSuccess     = "success"
	resultFailure     = "failure"
)

// Exporter holds the metrics of the runs of one process. It is safe for
// concurrent use.
type Exporter struct {
	reg  *prometheus.Registry
	now  func() time.Time
	mu   sync.Mutex
	vecs map[string]vec // by EMF name, made when first observed
	// units of the vecs, to refuse a figure whose unit changed
	units map[string]metrics.Unit

	runs                           *prometheus.CounterVec
	lastSuccess, lastRun, duration *prometheus.GaugeVec
	interval, failing              prometheus.Gauge
	succeeded                      map[string]bool // pipelines that succeeded in this process
}

// vec is a CounterVec or a GaugeVec and whether it is per topic.
type vec struct {
	counter  *prometheus.CounterVec
	gauge    *prometheus.GaugeVec
	perTopic bool
}

// New returns an Exporter. now is the clock of the run timestamps; nil
// means time.Now. interval is the schedule's interval (0: unknown), which
// the "no successful run" alert compares the last success with.
func New(now func() time.Time, interval time.Duration) *Exporter {
	if now == nil {
		now = time.Now
	}
	e := &Exporter{reg: prometheus.NewRegistry(), now: now, vecs: map[string]vec{}, units: map[string]metrics.Unit{},
		succeeded: map[string]bool{},
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: RunsTotal,
			Help: "Runs of the pipeline by result: success (no partition failed, fenced or in doubt) or failure."}, []string{LabelPipeline, LabelResult}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: LastSuccess,
			Help: "Unix time at the end of the last successful run of the pipeline."}, []string{LabelPipeline}),
		lastRun: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: LastRun,
			Help: "Unix time at the end of the last run of the pipeline."}, []string{LabelPipeline}),
		duration: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: RunDuration,
			Help: "Duration of the last run of the pipeline."}, []string{LabelPipeline}),
		interval: prometheus.NewGauge(prometheus.GaugeOpts{Name: RunInterval,
			Help: "Interval of the schedule that runs catchup (run --every, or --interval for a CronJob or timer); 0 when unknown."}),
		failing: prometheus.NewGauge(prometheus.GaugeOpts{Name: ConsecutiveFailed,
			Help: "Runs (all pipelines) that failed in a row, in this process."}),
	}
	e.interval.Set(interval.Seconds())
	e.reg.MustRegister(e.runs, e.lastSuccess, e.lastRun, e.duration, e.interval, e.failing)
	return e
}

// Registry is the registry of the exporter's metrics.
func (e *Exporter) Registry() *prometheus.Registry { return e.reg }

// Handler serves the metrics in the Prometheus exposition formats.
func (e *Exporter) Handler() http.Handler {
	return promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Observe records the report of a run of rep.Pipeline with extra figures
// of the pipeline (group sync counts), and the run's result: a success
// when no partition failed, was fenced or is in doubt. Gauges of the
// pipeline that rep does not have (no record age when nothing is left) are
// removed, so that an alert never reads a stale one; but for the figures
// of a sync that did not run in rep (runmetrics.Syncs: ACLSyncFailed,
// TopicConfigSyncFailed), which hold the last sync's result until the
// next sync: a run in which the sync was not due (acl_sync_interval,
// config_sync_interval) leaves the target as that sync left it.
func (e *Exporter) Observe(rep *replicate.Report, extra ...metrics.Value) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, notRun := runmetrics.Syncs(rep)
	for name, v := range e.vecs {
		if v.gauge != nil && !slices.Contains(notRun, name) {
			v.gauge.DeletePartialMatch(prometheus.Labels{LabelPipeline: rep.Pipeline})
		}
	}
	var errs []error
	for _, byTopic := range []map[string][]metrics.Value{runmetrics.Copy(rep, true), runmetrics.Lag(rep)} {
		for topic, values := range byTopic {
			errs = append(errs, e.set(rep.Pipeline, topic, values))
		}
	}
	errs = append(errs, e.set(rep.Pipeline, "", append(runmetrics.Run(rep, rep.StoreRequests, false), extra...)))
	_, _, failed := rep.Totals()
	e.result(rep.Pipeline, failed == 0, rep.Duration)
	return errors.Join(errs...)
}

// ObserveFailure records a run of pipeline that failed before it had a
// report (the source could not be surveyed).
func (e *Exporter) ObserveFailure(pipeline string, took time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.result(pipeline, false, took)
}

func (e *Exporter) result(pipeline string, ok bool, took time.Duration) {
	now := float64(e.now().UnixMilli()) / 1000
	e.lastRun.WithLabelValues(pipeline).Set(now)
	e.duration.WithLabelValues(pipeline).Set(took.Seconds())
	if ok {
		e.runs.WithLabelValues(pipeline, resultSuccess).Inc()
		e.lastSuccess.WithLabelValues(pipeline).Set(now)
		e.succeeded[pipeline] = true
	} else {
		e.runs.WithLabelValues(pipeline, resultFailure).Inc()
	}
	e.runs.WithLabelValues(pipeline, resultSuccess).Add(0) // both results exist from the first run
	e.runs.WithLabelValues(pipeline, resultFailure).Add(0)
}

// EndIteration records the result of one run of every pipeline (an
// iteration of run --every): failed counts the iterations failed in a row.
func (e *Exporter) EndIteration(failed bool) {
	if failed {
		e.failing.Inc()
	} else {
		e.failing.Set(0)
	}
}

// set records values of pipeline (and of topic, unless ""), making each
// metric's vec the first time it is seen.
func (e *Exporter) set(pipeline, topic string, values []metrics.Value) error {
	var errs []error
	for _, val := range values {
		k, ok := Exported(val.Name)
		if !ok {
			errs = append(errs, fmt.Errorf("prom: metric %s is not exported (prom.Exported)", val.Name))
			continue
		}
		v, ok := e.vecs[val.Name]
		if !ok {
			v = e.newVec(val.Name, val.Unit, k, topic != "")
			if err := e.reg.Register(v.collector()); err != nil {
				errs = append(errs, fmt.Errorf("prom: register %s: %w", val.Name, err))
				continue
			}
			e.vecs[val.Name], e.units[val.Name] = v, val.Unit
		}
		if e.units[val.Name] != val.Unit || v.perTopic != (topic != "") {
			errs = append(errs, fmt.Errorf("prom: metric %s observed in %s (per topic: %v), registered in %s (per topic: %v)",
				val.Name, val.Unit, topic != "", e.units[val.Name], v.perTopic))
			continue
		}
		labels := []string{pipeline}
		if v.perTopic {
			labels = append(labels, topic)
		}
		x := scale(val.Value, val.Unit)
		if v.counter != nil {
			v.counter.WithLabelValues(labels...).Add(max(0, x))
		} else {
			v.gauge.WithLabelValues(labels...).Set(x)
		}
	}
	return errors.Join(errs...)
}

func (e *Exporter) newVec(emf string, u metrics.Unit, k Kind, perTopic bool) vec {
	labels := []string{LabelPipeline}
	if perTopic {
		labels = append(labels, LabelTopic)
	}
	name := Name(emf, u, k)
	help := fmt.Sprintf("The EMF metric %s (%s) of catchup's runs; docs/metrics.md.", emf, u)
	if k == Counter {
		return vec{counter: prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels), perTopic: perTopic}
	}
	return vec{gauge: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels), perTopic: perTopic}
}

func (v vec) collector() prometheus.Collector {
	if v.counter != nil {
		return v.counter
	}
	return v.gauge
}

// Push sends the metrics to the Pushgateway at url under job and the
// grouping labels (the pipeline, the instance), with POST: metrics of the
// group that this push lacks keep their pushed value, so a failed run
// leaves the last success's timestamp in place for the alert.
func (e *Exporter) Push(ctx context.Context, url, job string, grouping map[string]string) error {
	p := push.New(url, job).Gatherer(e.reg)
	for k, v := range grouping {
		p = p.Grouping(k, v)
	}
	if err := p.AddContext(ctx); err != nil {
		return fmt.Errorf("push metrics to %s: %w", url, err)
	}
	return nil
}

// WriteTextfile writes the metrics to path for node_exporter's textfile
// collector, atomically (a temporary file renamed). A pipeline that has not
// succeeded in this process keeps the last success the file at path
// recorded, so that a timer whose runs fail keeps its last success's
// timestamp, and the "no successful run" alert its reference.
func (e *Exporter) WriteTextfile(path string) error {
	if err := e.carryLastSuccess(path); err != nil {
		return err
	}
	if err := prometheus.WriteToTextfile(path, e.reg); err != nil {
		return fmt.Errorf("write metrics to %s: %w", path, err)
	}
	return nil
}

// carryLastSuccess sets, for each pipeline that has run but not succeeded
// in this process, the last success recorded in the textfile at path, if
// any. A missing file has none; an unreadable one is an error.
func (e *Exporter) carryLastSuccess(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("read metrics textfile %s: %w", path, err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(f)
	if err != nil {
		return fmt.Errorf("read metrics textfile %s: %w (remove it, or point --metrics-textfile elsewhere)", path, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	fam := families[LastSuccess]
	if fam == nil {
		return nil
	}
	for _, m := range fam.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == LabelPipeline && !e.succeeded[l.GetValue()] {
				e.lastSuccess.WithLabelValues(l.GetValue()).Set(m.GetGauge().GetValue())
			}
		}
	}
	return nil
}

// PromName returns the Prometheus name under which the exporter carries the
// EMF metric emf, once it has observed it.
func (e *Exporter) PromName(emf string) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	v, ok := e.vecs[emf]
	if !ok {
		return "", false
	}
	k := Gauge
	if v.counter != nil {
		k = Counter
	}
	return Name(emf, e.units[emf], k), true
}
