package replicate

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/plan"
)

// latestStarts resolves start: latest for the partitions of marks that
// have no checkpoint and no start_offsets entry, from the begin of their
// topic (checkpoint.Begin): the offset the begin holds for a partition
// that existed when the pipeline began the topic, the log start for one
// the topic gained since. A selected topic without a begin gets one,
// stored by a run (write) and previewed by a survey: the source end of each
// partition now, or, for a topic this pipeline copied before begins were
// recorded, the log start of each partition without a checkpoint. A run
// given a shard (Options.Partitions) begins every selected topic, not only
// its shard's, since the pipeline begins when its first run does. So a
// partition first reached in a later run (a run cut short by its budget or
// deadline, a first fan-out round, a worker given another shard) starts
// where the pipeline began, and one the topic gained starts at its log
// start: no record written while the pipeline copied the topic is skipped.
//
// It costs nothing when every partition of marks has a checkpoint, else one
// LoadBegins (and, in a run given a shard, one listing of the selected
// partitions). Beginning topics costs, once per topic, a PutBegin, and in
// a run given a shard the offsets of the selected partitions outside it and
// one Load of the pipeline's checkpoints.
func (e *Engine) latestStarts(ctx context.Context, marks []catchup.Offsets, cps map[catchup.Partition]checkpoint.Checkpoint,
	pol plan.Policy, write bool) (map[catchup.Partition]int64, error) {
	var fresh []catchup.Offsets
	for _, m := range marks {
		if _, ok := pol.StartOffsets[m.Partition]; !ok && !cps[m.Partition].Exists {
			fresh = append(fresh, m)
		}
	}
	if len(fresh) == 0 {
		return nil, nil
	}
	var all []catchup.Partition // in a run given a shard: every selected partition
	if e.o.Partitions != nil {
		var err error
		if all, err = e.o.Source.Partitions(ctx, e.o.Match); err != nil {
			return nil, fmt.Errorf("list source partitions: %w", err)
		}
	}
	topics := topicsOf(partitionsOf(fresh), all)
	begins, err := e.o.Store.LoadBegins(ctx, e.o.Pipeline, topics)
	if err != nil {
		return nil, fmt.Errorf("load begins of pipeline %s: %w", e.o.Pipeline, err)
	}
	var missing []string
	for _, t := range topics {
		if _, ok := begins[t]; !ok {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		made, err := e.begin(ctx, missing, marks, all, cps, pol, write)
		if err != nil {
			return nil, err
		}
		if begins == nil {
			begins = make(map[string]checkpoint.Begin, len(made))
		}
		for t, b := range made {
			begins[t] = b
		}
	}
	out := make(map[catchup.Partition]int64, len(fresh))
	for _, m := range fresh {
		b := begins[m.Topic]
		off, ok := b.Start(m.Partition.Partition)
		if !ok {
			out[m.Partition] = m.LogStart
			if write {
				e.o.Log.InfoContext(ctx, "partition without a checkpoint copied from its log start, not latest", "pipeline", e.o.Pipeline,
					"topic", m.Topic, "partition", m.Partition.Partition, "log_start", m.LogStart, "begun_partitions", b.Partitions())
			}
			continue
		}
		// A begin stored by a run that read the offsets after these marks
		// may hold a higher one: start at the end these marks saw, a few
		// records early, rather than above the log end as they see it.
		out[m.Partition] = min(off, m.HighWatermark)
	}
	return out, nil
}

// topicsOf returns the topics of ps and of more, sorted, each once.
func topicsOf(ps, more []catchup.Partition) []string {
	var out []string
	for _, p := range slices.Concat(ps, more) {
		out = append(out, p.Topic)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// begin returns the begins of topics as they are now (see latestStarts),
// stored first if write: then the begins stored, another run's where it
// stored one meanwhile. marks and cps are the run's; all, in a run given a
// shard, every selected partition.
func (e *Engine) begin(ctx context.Context, topics []string, marks []catchup.Offsets, all []catchup.Partition,
	cps map[catchup.Partition]checkpoint.Checkpoint, pol plan.Policy, write bool) (map[string]checkpoint.Begin, error) {
	want := map[string]bool{}
	for _, t := range topics {
		want[t] = true
	}
	var tm []catchup.Offsets
	seen := map[catchup.Partition]bool{}
	for _, m := range marks {
		if want[m.Topic] {
			tm = append(tm, m)
			seen[m.Partition] = true
		}
	}
	copied := func(p catchup.Partition) bool { return cps[p].Exists }
	if e.o.Partitions != nil {
		var rest []catchup.Partition
		for _, p := range all {
			if want[p.Topic] && !seen[p] {
				rest = append(rest, p)
			}
		}
		if len(rest) > 0 {
			more, err := e.o.Source.ListOffsets(ctx, rest)
			if err != nil {
				return nil, fmt.Errorf("list source offsets: %w", err)
			}
			tm = append(tm, more...)
			// The shard's checkpoints are not all: whether the pipeline
			// copied these topics before is in the others'.
			stored, err := e.o.Store.Load(ctx, e.o.Pipeline)
			if err != nil {
				return nil, fmt.Errorf("load checkpoints of pipeline %s: %w", e.o.Pipeline, err)
			}
			has := map[catchup.Partition]bool{}
			for _, cp := range stored {
				has[cp.Partition] = cp.Exists
			}
			copied = func(p catchup.Partition) bool { return has[p] || cps[p].Exists }
		}
	}
	byTopic := map[string][]catchup.Offsets{}
	for _, m := range tm {
		byTopic[m.Topic] = append(byTopic[m.Topic], m)
	}
	out := make(map[string]checkpoint.Begin, len(topics))
	for _, t := range topics {
		b, legacy := e.newBegin(byTopic[t], copied, pol)
		if write {
			stored, err := e.o.Store.PutBegin(ctx, e.o.Pipeline, t, b)
			if err != nil {
				return nil, fmt.Errorf("store begin of %s in pipeline %s: %w", t, e.o.Pipeline, err)
			}
			e.o.Log.InfoContext(ctx, "topic begun under start latest", "pipeline", e.o.Pipeline, "topic", t,
				"begun_at", stored.At.UTC().Format(time.RFC3339Nano), "partitions", stored.Partitions(), "copied_before", legacy)
			b = stored
		}
		out[t] = b
	}
	return out, nil
}

// newBegin returns the begin of the topic whose partitions tm are: their
// ends, or, if the pipeline copied the topic before (legacy: a partition of
// it has a checkpoint), FromLogStart for each without one.
func (e *Engine) newBegin(tm []catchup.Offsets, copied func(catchup.Partition) bool, pol plan.Policy) (checkpoint.Begin, bool) {
	legacy, n := false, 0
	for _, m := range tm {
		legacy = legacy || copied(m.Partition)
		n = max(n, int(m.Partition.Partition)+1)
	}
	b := checkpoint.Begin{At: e.o.Now(), Offsets: make([]int64, n)}
	for i := range b.Offsets {
		b.Offsets[i] = checkpoint.FromLogStart // a partition number not listed: none is expected
	}
	for _, m := range tm {
		switch {
		case legacy && !copied(m.Partition):
			// FromLogStart: its records may all be unread
		case pol.ReadCommitted:
			b.Offsets[m.Partition.Partition] = m.LastStable
		default:
			b.Offsets[m.Partition.Partition] = m.HighWatermark
		}
	}
	return b, legacy
}
