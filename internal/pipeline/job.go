package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
)

// ErrJobAhead is returned (wrapped) by CheckJob for a job over records that
// the pipeline's own copy has not passed yet.
var ErrJobAhead = errors.New("pipeline: the backfill range is ahead of the pipeline's own copy")

// CheckJob refuses the job p was opened with (Options.Job) if the pipeline's
// own checkpoint of any of parts (nil: every selected partition) is below
// the job's end. A job and its pipeline write the same target partitions
// under two checkpoint namespaces, and the provenance header does not say
// which wrote a copy: if the job wrote offsets above the pipeline's
// checkpoint, the pipeline's reconciliation would take them for its own and
// skip to their end, over records nobody copied. A pipeline that never ran
// has no checkpoint and does not reconcile its first window: the job is
// allowed, and the pipeline copies the range again, without loss.
func (p *Pipeline) CheckJob(ctx context.Context, parts []catchup.Partition) error {
	if p.job == nil {
		return nil
	}
	var stored []checkpoint.Checkpoint
	var err error
	if parts != nil {
		stored, err = p.Store.LoadPartitions(ctx, p.Config.Name, parts)
	} else {
		stored, err = p.Store.Load(ctx, p.Config.Name)
	}
	if err != nil {
		return fmt.Errorf("load the checkpoints of pipeline %s: %w", p.Config.Name, err)
	}
	if len(stored) == 0 {
		return nil
	}
	if parts == nil {
		if parts, err = p.Source.Partitions(ctx, p.Config.Topics.Match); err != nil {
			return err
		}
	}
	ends := map[catchup.Partition]int64{}
	if p.job.To.IsZero() {
		marks, err := p.Source.ListOffsets(ctx, parts)
		if err != nil {
			return err
		}
		for _, m := range marks {
			ends[m.Partition] = m.HighWatermark
		}
	} else if ends, err = p.Source.OffsetsForTime(ctx, parts, p.job.To); err != nil {
		return fmt.Errorf("resolve the job's end: %w", err)
	}
	var behind []string
	for _, c := range stored {
		if end, ok := ends[c.Partition]; ok && c.Exists && c.Next < end {
			behind = append(behind, fmt.Sprintf("%s at %d, range end %d", c.Partition, c.Next, end))
		}
	}
	if len(behind) == 0 {
		return nil
	}
	return fmt.Errorf("pipeline %s has not copied up to the end of this range yet (%s): it copies these records "+
		"itself, and a job writing them into the same target partitions under its own checkpoints could make it skip "+
		"records; let the pipeline pass the range, or backfill a range it has passed: %w",
		p.Config.Name, strings.Join(behind, "; "), ErrJobAhead)
}
