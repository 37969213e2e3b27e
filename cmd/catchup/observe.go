package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/kafka-catchup/catchup/internal/groupsync"
	"github.com/kafka-catchup/catchup/internal/metrics"
	"github.com/kafka-catchup/catchup/internal/metrics/prom"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// ops is the operational surface of run and mirrormaker off Lambda:
// Prometheus metrics (served, pushed or written for node_exporter) and,
// with --every, health endpoints.
type ops struct {
	listen         string        // --listen: serve /metrics, /healthz, /readyz
	push, pushJob  string        // --metrics-push, --metrics-job
	textfile       string        // --metrics-textfile
	interval       time.Duration // --interval: the scheduler's, for the no-success alert
	unhealthyAfter int           // --unhealthy-after

	exp    *prom.Exporter
	health health
	failed []error // the failures of the run in flight (all pipelines), reset by endRun
}

// addOpsFlags adds the flags of o to cmd.
func addOpsFlags(cmd *cobra.Command, o *ops) {
	fl := cmd.Flags()
	fl.StringVar(&o.listen, "listen", "", "with --every: serve /metrics (Prometheus), /healthz and /readyz on ADDR, such as :9464 or 127.0.0.1:0 (docs/metrics.md)")
	fl.StringVar(&o.push, "metrics-push", "", "push the metrics to the Pushgateway at URL after each run (a CronJob's; docs/metrics.md)")
	fl.StringVar(&o.pushJob, "metrics-job", "catchup", "the job label of --metrics-push: its grouping key, with instance=PIPELINE when --pipeline is given")
	fl.StringVar(&o.textfile, "metrics-textfile", "", "write the metrics to FILE after each run, for node_exporter's textfile collector (a systemd timer's; name it *.prom)")
	fl.DurationVar(&o.interval, "interval", 0, "how often a scheduler (CronJob, systemd timer) runs this command, exported as catchup_run_interval_seconds for the no-successful-run alert (--every sets it)")
	fl.IntVar(&o.unhealthyAfter, "unhealthy-after", 3, "with --listen: /healthz fails after this many runs in a row failed")
}

// start makes the exporter and, with --listen, serves the endpoints until
// ctx ends. every is --every (0: one run).
func (o *ops) start(ctx context.Context, every time.Duration, log *slog.Logger) error {
	if o.unhealthyAfter < 1 {
		return usageError{fmt.Errorf("--unhealthy-after %d: give at least 1", o.unhealthyAfter)}
	}
	interval := o.interval
	if every > 0 {
		interval = every
	}
	o.exp = prom.New(nil, interval)
	o.health.after = o.unhealthyAfter
	if o.listen == "" {
		return nil
	}
	if every == 0 {
		return usageError{errors.New("--listen serves while run --every runs: add --every, or use --metrics-push or --metrics-textfile for a single run")}
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return usageError{fmt.Errorf("--listen %s: %w", o.listen, err)}
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", o.exp.Handler())
	mux.HandleFunc("GET /healthz", o.health.healthz)
	mux.HandleFunc("GET /readyz", o.health.readyz)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	context.AfterFunc(ctx, func() { _ = srv.Close() })
	log.InfoContext(ctx, "serving metrics and health", "addr", ln.Addr().String())
	return nil
}

// observe records a run's report, or its failure when rep is nil.
func (o *ops) observe(ctx context.Context, log *slog.Logger, name string, rep *replicate.Report, groups []groupsync.Group, took time.Duration) {
	if o.exp == nil {
		return
	}
	if rep == nil {
		o.exp.ObserveFailure(name, took)
		o.failed = append(o.failed, fmt.Errorf("pipeline %s: the run failed", name))
		return
	}
	if _, _, failed := rep.Totals(); failed > 0 {
		o.failed = append(o.failed, fmt.Errorf("pipeline %s: %d partitions failed", name, failed))
	}
	synced, skipped := pipeline.GroupCounts(groups)
	if err := o.exp.Observe(rep,
		metrics.Value{Name: metrics.GroupOffsetsSynced, Unit: metrics.Count, Value: int64(synced)},
		metrics.Value{Name: metrics.GroupOffsetsSkipped, Unit: metrics.Count, Value: int64(skipped)}); err != nil {
		log.ErrorContext(ctx, "metrics not recorded", "pipeline", name, "error", err)
	}
}

// endRun records the result of a run of every pipeline, and pushes or
// writes the metrics where told. The error is that of the push or write.
func (o *ops) endRun(ctx context.Context, pipelineName string, failed error) error {
	if o.exp == nil {
		return nil
	}
	o.failed = nil
	o.exp.EndIteration(failed != nil)
	o.health.record(failed)
	var errs []error
	if o.push != "" {
		grouping := map[string]string{}
		if pipelineName != "" {
			grouping["instance"] = pipelineName // the metrics carry pipeline already
		}
		errs = append(errs, o.exp.Push(ctx, o.push, o.pushJob, grouping))
	}
	if o.textfile != "" {
		errs = append(errs, o.exp.WriteTextfile(o.textfile))
	}
	return errors.Join(errs...)
}

// health is the state /healthz and /readyz report in continuous mode:
// ready once a run succeeded; unhealthy once after runs in a row failed,
// healthy again after the next success.
type health struct {
	mu        sync.Mutex
	after     int
	succeeded bool
	failures  int
	last      error
}

func (h *health) record(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil {
		h.succeeded, h.failures, h.last = true, 0, nil
		return
	}
	h.failures++
	h.last = err
}

func (h *health) healthz(w http.ResponseWriter, _ *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failures >= h.after {
		http.Error(w, fmt.Sprintf("unhealthy: %d runs in a row failed (--unhealthy-after %d); the last: %v", h.failures, h.after, h.last),
			http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintf(w, "ok: %d runs in a row failed (unhealthy at %d)\n", h.failures, h.after)
}

func (h *health) readyz(w http.ResponseWriter, _ *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.succeeded {
		http.Error(w, "not ready: no run has succeeded yet", http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "ready")
}
