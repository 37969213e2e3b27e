// Package plan turns watermarks, checkpoints and a start policy into the
// windows a run copies. It is pure: no I/O, no clock.
package plan

import (
	"fmt"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// Checkpoint is a partition's checkpoint as plan reads it: its
// catchup.Progress. checkpoint.Checkpoint and catchup.Progress are ones;
// the zero value of a Checkpoint type must mean "never copied".
type Checkpoint interface {
	Progress() catchup.Progress
}

// StartKind says where a partition without a checkpoint starts.
type StartKind int

const (
	Earliest  StartKind = iota // the log start
	Latest                     // the window end: copy only what arrives later
	Timestamp                  // the first record at or after Policy.StartTime
)

// Policy is what the windows of one pipeline are computed from.
type Policy struct {
	Start StartKind
	// StartOffsets gives the start of partitions without a checkpoint: the
	// offsets of Timestamp resolved by the caller, and explicit offsets from
	// the configuration, which win over Start.
	StartOffsets map[catchup.Partition]int64
	// ReadCommitted ends windows at the last stable offset instead of the
	// high watermark.
	ReadCommitted bool
	// SkipGaps moves a window that starts below the log start up to it and
	// reports the gap, instead of failing the partition.
	SkipGaps bool
	// MaxRecords caps the window length in offsets; 0 means no cap.
	MaxRecords int64
	// Pipeline names the pipeline in the reset commands errors suggest;
	// empty: a placeholder.
	Pipeline string
	// StopOffsets caps the window end of given partitions: a bounded
	// backfill copies nothing at or after them.
	StopOffsets map[catchup.Partition]int64
}

// Planned is the window of one partition, or why it cannot be copied.
type Planned struct {
	catchup.Window
	// Gap is the missing range below the log start; set with SkipGaps (the
	// window starts after it) and as Err without.
	Gap *catchup.GapError
	// End is where the window would end without Policy.MaxRecords: the
	// source end fixed now (or the stop offset). A window with To < End
	// leaves End-To offsets for a later run, so copying it is not done.
	End int64
	// Err is set when the partition must not be copied: a gap without
	// SkipGaps, or a checkpoint above the log end (topic recreated).
	Err error
}

// Window computes the window of the partition o describes. c is its
// checkpoint; Exists false in its Progress means the partition was never
// copied.
func Window[C Checkpoint](o catchup.Offsets, c C, pol Policy) Planned {
	cp := c.Progress()
	end := o.HighWatermark
	if pol.ReadCommitted {
		end = o.LastStable
	}
	pl := Planned{Window: catchup.Window{Partition: o.Partition}}
	from, explicit := int64(0), false
	switch off, ok := pol.StartOffsets[o.Partition]; {
	case cp.Exists:
		from = cp.Next
		if from > o.HighWatermark {
			pl.From, pl.To = from, from
			pl.Err = fmt.Errorf("%s: checkpoint %d is above the source log end %d: the topic was deleted and "+
				"recreated, or the source is a different cluster; run `catchup reset --pipeline %s --topic %s --to earliest --allow-duplicates` "+
				"to copy it again deliberately: %w", o.Partition, from, o.HighWatermark, pipelineName(pol), o.Topic, catchup.ErrTopicRecreated)
			return pl
		}
	case ok:
		from, explicit = off, true
	case pol.Start == Latest:
		from = end
	default:
		from = o.LogStart
	}
	if explicit && from > o.HighWatermark {
		pl.From, pl.To = from, from
		pl.Err = fmt.Errorf("%s: start offset %d is above the source log end %d", o.Partition, from, o.HighWatermark)
		return pl
	}
	to := max(end, from)
	if stop, ok := pol.StopOffsets[o.Partition]; ok {
		to = max(min(to, stop), from)
	}
	if from < o.LogStart {
		pl.Gap = &catchup.GapError{Partition: o.Partition, From: from, To: o.LogStart}
		if !pol.SkipGaps {
			// The window it would copy, gap included: its lag is real.
			pl.From, pl.To, pl.End, pl.Err = from, to, to, pl.Gap
			return pl
		}
		from = o.LogStart
		to = max(to, from)
	}
	pl.End = to
	if pol.MaxRecords > 0 && to-from > pol.MaxRecords {
		to = from + pol.MaxRecords
	}
	pl.From, pl.To = from, to
	return pl
}

// pipelineName is pol.Pipeline, or a placeholder for the reset hints.
func pipelineName(pol Policy) string {
	if pol.Pipeline == "" {
		return "NAME"
	}
	return pol.Pipeline
}

// Windows computes the window of every partition in marks, in their order.
// A partition absent from cps was never copied.
func Windows[C Checkpoint](marks []catchup.Offsets, cps map[catchup.Partition]C, pol Policy) []Planned {
	out := make([]Planned, len(marks))
	for i, o := range marks {
		out[i] = Window(o, cps[o.Partition], pol)
	}
	return out
}
