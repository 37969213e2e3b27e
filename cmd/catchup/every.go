package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/groupsync"
	"github.com/kafka-catchup/catchup/internal/loop"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// runEvery is continuous mode (`run --every`, `mirrormaker --every`): a run
// of every pipeline, then another every `every`, until SIGTERM or SIGINT
// cancels ctx. Each run is planned afresh (Engine.Run surveys the source
// and the store each time) and commits and releases its leases like a
// separate run; the pipelines (connections, store) stay open between runs.
// A stop lets the run in flight end as an interrupted run does (its last
// acknowledged writes committed) and returns nil: exit 0. A failed run is
// followed by a backoff (internal/loop); a configuration error ends it.
func (a *app) runEvery(ctx context.Context, command string, f *config.File, ps []*config.Pipeline, every time.Duration) error {
	log := a.logger()
	open := map[string]*pipeline.Pipeline{}
	syncers := map[string]*groupSyncer{}
	defer func() {
		for _, p := range open {
			p.Close()
		}
	}()
	iteration := 0
	err := loop.Run(ctx, loop.Options{Every: every, Log: log, Fatal: isUsage}, func(ctx context.Context) error {
		iteration++
		var errs []error
		for _, pc := range ps {
			p := open[pc.Name]
			if p == nil {
				var err error
				if p, err = pipeline.Open(ctx, f, pc, pipeline.Options{Owner: a.owner, Log: log, AllowDuplicates: a.allowDuplicates}); err != nil {
					if ctx.Err() == nil {
						a.ops.observe(ctx, log, pc.Name, nil, nil, 0)
					}
					err = fmt.Errorf("pipeline %s: %w", pc.Name, err)
					errs = append(errs, err)
					if perr := a.printIterationError(ctx, command, err); perr != nil {
						return perr
					}
					continue
				}
				open[pc.Name] = p
				syncers[pc.Name] = &groupSyncer{}
			}
			start := time.Now()
			rep, err := p.Engine.Run(ctx)
			if err != nil {
				if ctx.Err() == nil {
					a.ops.observe(ctx, log, pc.Name, nil, nil, time.Since(start))
				}
				err = fmt.Errorf("pipeline %s: %w", pc.Name, err)
				errs = append(errs, err)
				if perr := a.printIterationError(ctx, command, err); perr != nil {
					return perr
				}
				continue
			}
			groups := a.syncGroups(ctx, syncers[pc.Name], pc, p)
			a.ops.observe(ctx, log, pc.Name, rep, groups, 0)
			if err := a.printIteration(command, rep, groups); err != nil {
				return err
			}
			if _, _, failed := rep.Totals(); failed > 0 {
				errs = append(errs, fmt.Errorf("pipeline %s: %d partitions failed", pc.Name, failed))
			}
		}
		log.InfoContext(ctx, "iteration done", "iteration", iteration, "failed", len(errs))
		if ctx.Err() == nil {
			if err := a.ops.endRun(ctx, a.pipeline, errors.Join(errs...)); err != nil {
				log.ErrorContext(ctx, "metrics not sent", "error", err)
			}
		}
		return errors.Join(errs...)
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(a.err, "catchup: stopped after %d runs; the checkpoints hold what was acknowledged\n", iteration)
	return nil
}

// printIteration prints what one run of continuous mode did: the JSON
// report with --json (one document of command, with one pipeline, per
// pipeline and run: a stream of documents); otherwise the
// table when a partition failed, the summary line when records were
// copied, and nothing for a run that found nothing to copy.
func (a *app) printIteration(command string, rep *replicate.Report, groups []groupsync.Group) error {
	if a.jsonOut {
		out := reportJSON(rep)
		out.Groups = groups
		a.jsonPipelines, a.jsonStreamed = []any{out}, true
		defer func() { a.jsonPipelines = nil }()
		return a.printJSON(a.jsonDocument(command, nil))
	}
	printGroups(a.out, groups)
	copied, _, failed := rep.Totals()
	switch {
	case failed > 0:
		printReport(a.out, rep)
	case copied > 0:
		printSummary(a.out, rep)
	}
	return nil
}

// printIterationError prints, with --json, the document of a run of
// continuous mode that failed before it had a report (the pipeline could
// not be opened or surveyed): no pipeline entry, and the error, so that a
// reader of the stream sees every run. A run stopped (SIGTERM) prints none:
// the stop is no failure.
func (a *app) printIterationError(ctx context.Context, command string, err error) error {
	if !a.jsonOut || ctx.Err() != nil {
		return nil
	}
	a.jsonStreamed = true
	return a.printJSON(a.jsonDocument(command, err))
}

// isUsage reports whether err is a usage or configuration error, which
// continuous mode does not retry.
func isUsage(err error) bool {
	var ue usageError
	return errors.As(err, &ue)
}
