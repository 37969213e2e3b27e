package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/pipeline"
)

func (a *app) backfillCmd() *cobra.Command {
	var from, to, topics, job string
	cmd := &cobra.Command{
		Use:   "backfill --pipeline P --from TIME --to TIME",
		Short: "Copy the records of a time range, once, under the job's own checkpoints",
		Long: `backfill copies, for every partition of the pipeline's topics (narrowed by
--topics), the source offsets from the first record whose timestamp is at or
after --from up to, not including, the first record whose timestamp is at or
after --to: the two offsets Kafka's ListOffsets gives for the two times. With
timestamps that never go back within a partition, that is exactly the records
of [--from, --to). Where they do (producers setting their own timestamps),
records between the two offsets with a timestamp before --from are copied too,
and records after the second offset with a timestamp before --to are not.

The job keeps its progress under its own checkpoint namespace,
"<pipeline>.job.<name>" (the name defaults to one made of the two times), so
it never moves the pipeline's own checkpoints. Interrupt it at any moment and
run the same command again: it resumes exactly, and once complete it copies
nothing more. It is refused where the pipeline's own checkpoint is still below
the end of the range: the pipeline copies those records itself (docs/commands.md,
"Backfills and their pipeline").

TIME is RFC 3339 (2026-11-01T00:00:00Z) or a date (2026-11-01, midnight UTC).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" || to == "" {
				return usageError{errors.New("backfill needs --from and --to")}
			}
			start, err := parseTime("--from", from)
			if err != nil {
				return err
			}
			stop, err := parseTime("--to", to)
			if err != nil {
				return err
			}
			if !stop.After(start) {
				return usageError{fmt.Errorf("--to %s is not after --from %s", to, from)}
			}
			if job == "" {
				job = jobName(start, stop)
			} else if !isJobName(job) {
				return usageError{fmt.Errorf("--job %q may hold only letters, digits, '.', '_' and '-'", job)}
			}
			f, err := a.load(cmd.Context())
			if err != nil {
				return err
			}
			pc, err := a.onePipeline(f, "backfill")
			if err != nil {
				return err
			}
			match := pc.Topics.Match
			if topics != "" {
				narrow := config.Topics{Include: []string{topics}}
				if err := narrow.Compile(); err != nil {
					return usageError{fmt.Errorf("--topics: %w", err)}
				}
				match = func(t string) bool { return pc.Topics.Match(t) && narrow.Match(t) }
			}
			ok, err := a.backfill(cmd.Context(), f, pc, &pipeline.Job{Name: job, From: start, To: stop}, match)
			if err != nil {
				return fmt.Errorf("pipeline %s: backfill %s: %w", pc.Name, job, err)
			}
			if !ok {
				return errNotDone
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&from, "from", "", "copy from the first record at or after this time (RFC 3339 or YYYY-MM-DD)")
	fl.StringVar(&to, "to", "", "stop before the first record at or after this time (RFC 3339 or YYYY-MM-DD)")
	fl.StringVar(&topics, "topics", "", "copy only the pipeline's topics that also match this regular expression (Go RE2, whole name)")
	fl.StringVar(&job, "job", "", "job name, its checkpoint namespace is <pipeline>.job.<name> (default: made of --from and --to)")
	a.addJSONFlag(fl, "print the run reports as one JSON document (docs/json.md)")
	return cmd
}

// backfill runs job over the partitions of the pipeline's topics that match
// selects, shows its progress and prints the report; ok is false when a
// partition failed or was left unfinished.
func (a *app) backfill(ctx context.Context, f *config.File, pc *config.Pipeline, job *pipeline.Job, match func(string) bool) (ok bool, err error) {
	log := a.logger().With("pipeline", pc.Name, "job", job.Name)
	cl, err := pipeline.Connect(pc)
	if err != nil {
		return false, err
	}
	defer cl.Close()
	parts, err := cl.Source.Partitions(ctx, match)
	if err != nil {
		return false, err
	}
	if len(parts) == 0 {
		return false, usageError{errors.New("no topic of the source matches the pipeline's topics and --topics")}
	}
	prog := a.newProgress(job.Namespace(pc.Name), log)
	p, err := pipeline.Open(ctx, f, pc, pipeline.Options{
		Owner: a.owner, Log: log, OnProgress: prog.add, OnPlan: prog.plan,
		Clusters: cl, Partitions: parts, Job: job,
	})
	if err != nil {
		return false, err
	}
	defer p.Close()
	if err := p.CheckJob(ctx, parts); errors.Is(err, pipeline.ErrJobAhead) {
		return false, usageError{err}
	} else if err != nil {
		return false, err
	}
	if !a.jsonOut {
		fmt.Fprintf(a.out, "backfill %s of pipeline %s: records from %s to %s (checkpoints %s)\n", job.Name, pc.Name,
			job.From.Format(time.RFC3339Nano), job.To.Format(time.RFC3339Nano), job.Namespace(pc.Name))
	}
	rep, err := p.Engine.Run(ctx)
	prog.finish()
	if err != nil {
		return false, err
	}
	if a.jsonOut {
		a.addJSON(backfillJSON{Job: job.Name, From: job.From, To: job.To, Checkpoints: job.Namespace(pc.Name), reportJSONT: reportJSON(rep)})
		return reportOK(rep), nil
	}
	printReport(a.out, rep)
	if ctx.Err() != nil {
		fmt.Fprintln(a.out, "interrupted: the job's checkpoints hold what was acknowledged; run the same command again to resume")
	}
	return reportOK(rep), nil
}

// onePipeline returns the pipeline --pipeline names, or the only one.
func (a *app) onePipeline(f *config.File, command string) (*config.Pipeline, error) {
	if a.pipeline == "" && len(f.Pipelines) != 1 {
		return nil, usageError{fmt.Errorf("%s works on one pipeline: name it with --pipeline", command)}
	}
	ps, err := a.pipelines(f)
	if err != nil {
		return nil, err
	}
	return ps[0], nil
}

// parseTime reads an RFC 3339 time or a date (midnight UTC).
func parseTime(flag, v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	return time.Time{}, usageError{fmt.Errorf("%s %q: want an RFC 3339 time (2026-11-01T00:00:00Z) or a date (2026-11-01)", flag, v)}
}

// jobName names the job of [from, to) after its times, in UTC, to the
// millisecond when they have one (Kafka timestamps are milliseconds):
// 20261101T000000Z-20261102T000000Z.
func jobName(from, to time.Time) string {
	format := func(t time.Time) string {
		t = t.UTC()
		if t.Nanosecond() != 0 {
			return t.Format("20060102T150405.000Z")
		}
		return t.Format("20060102T150405Z")
	}
	return format(from) + "-" + format(to)
}

// isJobName reports whether s is a valid job name: the characters a
// pipeline name may hold, because it becomes part of a checkpoint namespace.
func isJobName(s string) bool {
	return s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == ""
}

// backfillJSON is one pipeline's backfill in the --json document: the job
// and the run report.
type backfillJSON struct {
	Job         string    `json:"job"`
	From        time.Time `json:"from_time"`
	To          time.Time `json:"to_time"`
	Checkpoints string    `json:"checkpoints"` // the job's checkpoint namespace
	reportJSONT
}
