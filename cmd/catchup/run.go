package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/groupsync"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/plan"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

func (a *app) runCmd() *cobra.Command {
	var every time.Duration
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Copy every selected partition up to the end fixed at the start of the run",
		Long: `run copies, for every partition of the selected pipelines, the window from its
checkpoint to the source end offset fixed when the run starts (capped by the
pipeline's window limits), and commits checkpoints as acknowledged writes
complete. Interrupt it at any moment: the next run resumes exactly.

Each partition ends done (copied to the end fixed at the start), partial (a
window limit, the deadline or an interrupt stopped it: LAG is what is left),
leased (another run holds it: lease_owner until lease_expires), failed
(a source topic deleted while the store holds its checkpoints too), fenced,
in_doubt (the target's high watermark stayed below its leader's log end for
replication_wait, so what it holds could not be read: lease kept, nothing
re-sent) or not_started (the run ended before its turn: LAG is what is left). window.max_bytes counts bytes as written,
provenance header included, and stops within one record of the limit. Exit
codes:
  0  every selected partition is done
  1  some partition is partial, leased, failed, fenced, in_doubt or
     not_started, or the include pattern matches no topic: run again, or fix
     what the error says
  2  bad usage or configuration

With --every DURATION it runs again and again, each run planned afresh,
starting DURATION after the start of the previous one (at once if that took
longer; with a doubling backoff up to 5 minutes after a failed run), until
SIGTERM or SIGINT: the run in flight ends as an interrupted run does, its
acknowledged writes committed, and catchup exits 0.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if every < 0 {
				return usageError{fmt.Errorf("--every %v: give a positive duration such as 30s", every)}
			}
			f, err := a.load(cmd.Context())
			if err != nil {
				return err
			}
			ps, err := a.pipelines(f)
			if err != nil {
				return err
			}
			if err := a.shard.resolve(every > 0); err != nil {
				return err
			}
			if err := a.ops.start(cmd.Context(), every, a.logger()); err != nil {
				return err
			}
			if every > 0 {
				return a.runEvery(cmd.Context(), cmd.Name(), f, ps, every)
			}
			return a.runOnce(cmd.Context(), f, ps)
		},
	}
	a.addJSONFlag(cmd.Flags(), "print the run reports as one JSON document (docs/json.md)")
	cmd.Flags().BoolVar(&a.allowDuplicates, "allow-duplicates", false, "copy a partition the store holds no checkpoint of from its start policy even though its target already holds records that do not say how far it was copied (docs/lost-store.md): they may be copied twice")
	addOpsFlags(cmd, &a.ops)
	addShardFlags(cmd, &a.shard)
	cmd.Flags().DurationVar(&every, "every", 0, "continuous mode: run again every DURATION (from the start of one run to the next) until SIGTERM or SIGINT, which ends the run in flight, commits and exits 0")
	return cmd
}

// runOnce runs each pipeline of ps once, then pushes or writes the metrics
// where told (a CronJob's, a timer's). It returns errNotDone when a
// partition was left unfinished.
func (a *app) runOnce(ctx context.Context, f *config.File, ps []*config.Pipeline) error {
	done := true
	var runErr error
	for _, p := range ps {
		ok, err := a.runPipeline(ctx, f, p)
		if err != nil {
			runErr = fmt.Errorf("pipeline %s: %w", p.Name, err)
			break
		}
		done = done && ok
	}
	if err := a.ops.endRun(ctx, a.pipeline, errors.Join(append(a.ops.failed, runErr)...)); err != nil {
		return errors.Join(runErr, err)
	}
	if runErr != nil {
		return runErr
	}
	if !done {
		return errNotDone
	}
	return nil
}

// runPipeline runs one pipeline and prints its report; ok is false when a
// partition failed, was fenced or was left unfinished.
func (a *app) runPipeline(ctx context.Context, f *config.File, pc *config.Pipeline) (ok bool, err error) {
	log := a.logger() // the engine names the pipeline in every line
	prog := a.newProgress(pc.Name, log)
	opts := pipeline.Options{Owner: a.owner, Log: log, OnProgress: prog.add, OnPlan: prog.plan,
		AllowDuplicates: a.allowDuplicates}
	if a.shard.count > 1 {
		cl, mine, err := a.shardOf(ctx, pc, log)
		if err != nil {
			a.ops.observe(ctx, log, pc.Name, nil, nil, 0)
			return false, err
		}
		defer cl.Close()
		if len(mine) == 0 {
			return true, nil // more shards than partitions: nothing is this one's
		}
		opts.Clusters, opts.Partitions = cl, mine
	}
	p, err := pipeline.Open(ctx, f, pc, opts)
	if err != nil {
		a.ops.observe(ctx, log, pc.Name, nil, nil, 0)
		return false, err
	}
	defer p.Close()
	start := time.Now()
	rep, err := p.Engine.Run(ctx)
	prog.finish()
	if err != nil {
		a.ops.observe(ctx, log, pc.Name, nil, nil, time.Since(start))
		return false, err
	}
	groups := a.syncGroups(ctx, &groupSyncer{}, pc, p)
	a.ops.observe(ctx, log, pc.Name, rep, groups, 0)
	if a.jsonOut {
		out := reportJSON(rep)
		out.Groups = groups
		a.addJSON(out)
		return reportOK(rep), nil
	}
	printReport(a.out, rep)
	printGroups(a.out, groups)
	if ctx.Err() != nil {
		fmt.Fprintln(a.out, "interrupted: the checkpoints hold what was acknowledged; run again to resume")
	}
	return reportOK(rep), nil
}

// shardOf connects pc's clusters and returns them with this shard's
// partitions of the topics pc selects.
func (a *app) shardOf(ctx context.Context, pc *config.Pipeline, log *slog.Logger) (*pipeline.Clusters, []catchup.Partition, error) {
	cl, err := pipeline.Connect(pc)
	if err != nil {
		return nil, nil, err
	}
	parts, err := cl.Source.Partitions(ctx, pipeline.EngineSettings(pc).Match)
	if err != nil {
		cl.Close()
		return nil, nil, err
	}
	mine := a.shard.pick(parts)
	log.InfoContext(ctx, "shard", "pipeline", pc.Name, "index", a.shard.n, "shards", a.shard.count,
		"partitions", len(mine), "of", len(parts))
	return cl, mine, nil
}

// reportOK reports whether every partition was copied to the source end
// fixed at the start of the run (replicate.Report.Done). A partition leased
// by another run is not: its lag is left (the holder may be a dead run whose
// lease has yet to expire), so the run exits 1.
func reportOK(rep *replicate.Report) bool { return rep.Done() }

// progress counts what was copied, for the progress display, which starts
// when the engine has planned the run (plan) and ends with finish.
type progress struct {
	records, bytes atomic.Int64
	bar            atomic.Pointer[progressbar.ProgressBar]
	show           func(total int64) (stop func())
	stop           func()
}

// newProgress returns a progress display named name.
func (a *app) newProgress(name string, log *slog.Logger) *progress {
	p := &progress{}
	p.show = func(total int64) func() { return a.showProgress(name, total, p, log) }
	return p
}

// plan starts the display with the windows' total.
func (p *progress) plan(windows []plan.Planned) {
	var total int64
	for _, w := range windows {
		total += w.Len()
	}
	p.stop = p.show(total)
}

// finish ends the display, if it started.
func (p *progress) finish() {
	if p.stop != nil {
		p.stop()
	}
}

func (p *progress) add(records, bytes int64) {
	p.records.Add(records)
	p.bytes.Add(bytes)
	if b := p.bar.Load(); b != nil {
		_ = b.Add64(records)
	}
}

// showProgress shows a progress bar on a terminal and a log line every 10
// seconds elsewhere, until the returned function is called.
func (a *app) showProgress(name string, total int64, p *progress, log *slog.Logger) (stop func()) {
	if total == 0 {
		return func() {}
	}
	if a.isTerminal() {
		bar := progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(a.term.barWriter()),
			progressbar.OptionSetDescription(name),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("rec"),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
		p.bar.Store(bar)
		a.term.bar.Store(bar)
		return func() { p.bar.Store(nil); a.term.bar.Store(nil); _ = bar.Finish() }
	}
	start := time.Now()
	t := time.NewTicker(10 * time.Second)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-t.C:
				n, b := p.records.Load(), p.bytes.Load()
				el := time.Since(start)
				rate := float64(n) / el.Seconds()
				eta := time.Duration(0)
				if rate > 0 {
					eta = time.Duration(float64(total-n) / rate * float64(time.Second)).Round(time.Second)
				}
				log.Info("progress", "pipeline", name, "records", n, "of", total, "bytes", b, "records_per_s", int64(rate), "eta", eta.String())
			case <-done:
				return
			}
		}
	}()
	return func() { t.Stop(); close(done) }
}

func printReport(w io.Writer, rep *replicate.Report) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tFROM\tTO\tCOPIED\tBYTES\tLAG\tSTATUS\tERROR")
	for _, r := range rep.Partitions {
		msg := ""
		if r.Err != nil {
			msg = r.Err.Error()
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n",
			r.Topic, r.Partition.Partition, r.From, r.To, r.Copied, r.Bytes, r.Lag(), r.Status, msg)
	}
	tw.Flush()
	printSummary(w, rep)
	printSyncWarnings(w, rep)
}

// printSyncWarnings prints, each on a line of its own after the summary,
// why the run's topic ACL sync or topic config sync failed: the run's exit
// code stays the copy's (a missing grant is not fixed by running again),
// so these lines, the ACLSyncFailed and TopicConfigSyncFailed metrics and
// their alerts are what tell the operator. The errors name the cluster,
// the principal and the grant, never a secret.
func printSyncWarnings(w io.Writer, rep *replicate.Report) {
	if a := rep.ACLs; a != nil && a.Error != "" {
		fmt.Fprintf(w, "WARNING: pipeline %s: topic ACLs NOT synced to the target (the records were copied; "+
			"the target's topics may lack the source's ACLs): %s\n", rep.Pipeline, a.Error)
	}
	if rep.ConfigSyncError != "" {
		fmt.Fprintf(w, "WARNING: pipeline %s: topic configs NOT synced to the target (the records were copied; "+
			"the target's topics may lack the source's configs): %s\n", rep.Pipeline, rep.ConfigSyncError)
	}
}

// printSummary prints the last line of a report: totals and rate.
func printSummary(w io.Writer, rep *replicate.Report) {
	copied, bytes, failed := rep.Totals()
	rate := float64(copied) / max(rep.Duration.Seconds(), 1e-9)
	fmt.Fprintf(w, "pipeline %s: copied %d records (%s) in %s, %.0f records/s; %d partitions failed",
		rep.Pipeline, copied, humanBytes(bytes), rep.Duration.Round(time.Millisecond), rate, failed)
	var loop int64
	for _, r := range rep.Partitions {
		loop += r.LoopSkipped
	}
	if loop > 0 {
		fmt.Fprintf(w, "; %d records not copied back by loop prevention", loop)
	}
	if rep.StoreRequests > 0 {
		fmt.Fprintf(w, "; %d store requests", rep.StoreRequests)
	}
	if rep.Resent > 0 {
		fmt.Fprintf(w, "; %d produce requests of unknown outcome re-sent", rep.Resent)
	}
	if rep.ReplicationWaits > 0 {
		fmt.Fprintf(w, "; waited %d times (%s) for the target to replicate", rep.ReplicationWaits, rep.ReplicationWaited.Round(time.Millisecond))
	}
	if n := countStatus(rep, replicate.StatusInDoubt); n > 0 {
		fmt.Fprintf(w, "; %d partitions in doubt (leases kept: run again once the target's followers have caught up)", n)
	}
	if n := len(rep.ConfigChanges); n > 0 {
		fmt.Fprintf(w, "; %d topic configs synced", n)
	}
	if rep.ConfigSyncError != "" {
		fmt.Fprint(w, "; topic config sync FAILED (below)")
	}
	if a := rep.ACLs; a != nil {
		fmt.Fprintf(w, "; topic ACLs: %d created, %d already present, %d not copied", len(a.Created), a.Present, len(a.Skipped))
		if a.Error != "" {
			fmt.Fprint(w, ", sync FAILED (below)")
		}
	}
	if d, ok := rep.Latency(); ok {
		fmt.Fprintf(w, "; replication latency %s", d.Round(time.Second))
	}
	if d, ok := rep.RecordAge(); ok {
		fmt.Fprintf(w, "; oldest record not copied %s old", d.Round(time.Second))
	}
	if d, ok := rep.Headroom(); ok {
		fmt.Fprintf(w, "; retention headroom %s", d.Round(time.Second))
	}
	fmt.Fprintln(w)
}

// countStatus counts the partitions of rep that ended with st.
func countStatus(rep *replicate.Report, st replicate.Status) int {
	n := 0
	for _, r := range rep.Partitions {
		if r.Status == st {
			n++
		}
	}
	return n
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// partitionJSON is one partition of a report as JSON.
type partitionJSON struct {
	Topic      string `json:"topic"`
	Partition  int32  `json:"partition"`
	From       int64  `json:"from"`
	To         int64  `json:"to"`
	Next       int64  `json:"next"`
	Copied     int64  `json:"copied"`
	Bytes      int64  `json:"bytes"`
	Skipped    int64  `json:"skipped"`      // offsets reconciliation found already in the target
	LoopSkip   int64  `json:"loop_skipped"` // records loop prevention did not copy (they came from the target cluster)
	Lag        int64  `json:"lag"`
	Retries    int    `json:"retries"`
	Reconciled int    `json:"reconciled"`
	Settled    int64  `json:"settled,omitempty"`
	Status     string `json:"status"`
	// LeaseOwner and LeaseExpires name the run holding a leased partition.
	LeaseOwner   string     `json:"lease_owner,omitempty"`
	LeaseExpires *time.Time `json:"lease_expires,omitempty"`
	Gap          []int64    `json:"gap,omitempty"`
	Error        string     `json:"error,omitempty"`
	DurationMS   int64      `json:"duration_ms"`
}

type reportJSONT struct {
	Pipeline      string `json:"pipeline"`
	DurationMS    int64  `json:"duration_ms"`
	StoreRequests int64  `json:"store_requests"`
	Resent        int64  `json:"resent"` // produce requests of unknown outcome sent again with the same sequence (idempotent produce)
	// ReplicationWaits and ReplicationWaitedMS: the waits, before a
	// reconciliation, for the target's high watermark to reach its leader's
	// log end (replication_wait), and their time summed.
	ReplicationWaits    int64 `json:"replication_waits"`
	ReplicationWaitedMS int64 `json:"replication_waited_ms"`
	replicate.TimeFigures
	ConfigChanges []replicate.ConfigChange `json:"config_changes,omitempty"`    // topic configs synced onto the target (create_topics)
	ConfigSyncErr string                   `json:"config_sync_error,omitempty"` // why that sync failed
	ACLs          *replicate.ACLSync       `json:"acls,omitempty"`              // topic ACLs synced onto the target (sync_acls)
	Groups        []groupsync.Group        `json:"groups,omitempty"`            // consumer group offsets synced (sync_groups)
	Partitions    []partitionJSON          `json:"partitions"`
}

func reportJSON(rep *replicate.Report) reportJSONT {
	out := reportJSONT{Pipeline: rep.Pipeline, DurationMS: rep.Duration.Milliseconds(), StoreRequests: rep.StoreRequests, Resent: rep.Resent,
		ReplicationWaits: rep.ReplicationWaits, ReplicationWaitedMS: rep.ReplicationWaited.Milliseconds(),
		TimeFigures: rep.TimeFigures(), ConfigChanges: rep.ConfigChanges, ConfigSyncErr: rep.ConfigSyncError, ACLs: rep.ACLs}
	for _, r := range rep.Partitions {
		pj := partitionJSON{Topic: r.Topic, Partition: r.Partition.Partition, From: r.From, To: r.To, Next: r.Next,
			Copied: r.Copied, Bytes: r.Bytes, Skipped: r.Skipped, LoopSkip: r.LoopSkipped, Lag: r.Lag(), Retries: r.Retries, Reconciled: r.Reconciled,
			Settled: r.Settled, Status: string(r.Status), LeaseOwner: r.LeaseOwner, DurationMS: r.Duration.Milliseconds()}
		if !r.LeaseExpires.IsZero() {
			t := r.LeaseExpires.UTC()
			pj.LeaseExpires = &t
		}
		if g := r.GapSkipped(); g != nil {
			pj.Gap = []int64{g.From, g.To}
		}
		if r.Err != nil {
			pj.Error = r.Err.Error()
		}
		out.Partitions = append(out.Partitions, pj)
	}
	return out
}
