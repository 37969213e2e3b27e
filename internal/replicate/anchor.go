package replicate

import (
	"context"
	"errors"
	"fmt"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// anchorBatches bounds how many target batches checkAnchor reads back.
const anchorBatches = 4

// checkAnchor compares the source record at next-1, the last one copied,
// with its copy in the target. A difference means the source topic was
// deleted and recreated (and refilled past the checkpoint, or the plan would
// have seen its log end below it): copying on from the checkpoint would
// skip the new topic's first records, so the partition fails closed. When
// either record cannot be found cheaply (a transaction marker or a
// compacted record at next-1, retention, loop prevention) there is nothing
// to compare and the check passes.
//
// committedEnd is the target end stored with the checkpoint: this
// pipeline's copy of next-1 was acknowledged before it, so a record at or
// above it that claims to be that copy is foreign (another pipeline or
// producer writing copies of the same source partition). A foreign copy
// that differs is passed over, and blamed, not the source, when this
// pipeline's own copy is not found or matches.
//
// checkAnchor reads the source record with a fetch of its own (plan's
// CheckAnchors); a run's copy reads it from its first fetch (see copyFrom).
func (pc *partitionCopy) checkAnchor(ctx context.Context, committedEnd int64) error {
	anchor := pc.next - 1
	// The source record and the target's last batch are read at once: two
	// round trips in the time of one.
	first := pc.readBackEnd(ctx)
	f, err := pc.e.o.Source.Fetch(ctx, pc.p, anchor, 1)
	var gap *catchup.GapError
	switch {
	case errors.As(err, &gap):
		return nil // retention passed it; the gap, if any, is the copy's business
	case err != nil:
		return fmt.Errorf("read the source record at %s offset %d: %w", pc.p, anchor, err)
	case len(f.Records) == 0 || f.Records[0].Offset != anchor:
		return nil
	}
	return pc.compareAnchor(ctx, &f.Records[0], committedEnd, first)
}

// readBack is the outcome of one Target.ReadBack.
type readBack struct {
	recs []catchup.Record
	base int64
	err  error
}

// readBackEnd reads back, in the background, the target batch that holds
// offset targetEnd-1 (no records when the target is empty), for
// compareAnchor's first batch.
func (pc *partitionCopy) readBackEnd(ctx context.Context) <-chan readBack {
	first := make(chan readBack, 1)
	tp, end := pc.targetPartition(), pc.targetEnd
	go func() {
		if end <= 0 {
			first <- readBack{}
			return
		}
		recs, base, err := pc.e.o.Target.ReadBack(ctx, tp, end)
		first <- readBack{recs, base, err}
	}()
	return first
}

// compareAnchor is checkAnchor's comparison of src, the source record at
// next-1, with its copy, read back from the target's end down: first, if
// not nil, gives the last batch (readBackEnd), the others are read here.
func (pc *partitionCopy) compareAnchor(ctx context.Context, src *catchup.Record, committedEnd int64, first <-chan readBack) error {
	anchor := pc.next - 1
	tp := pc.targetPartition()
	end := pc.targetEnd
	var foreign *catchup.Record // a differing copy written after the last commit
	defer func() {
		if foreign != nil {
			pc.e.o.Log.WarnContext(ctx, "foreign record in the target", "pipeline", pc.e.o.Pipeline, "topic", tp.Topic,
				"partition", tp.Partition, "target_offset", foreign.Offset, "source_offset", anchor)
		}
	}()
	for range anchorBatches {
		if end <= 0 {
			return nil
		}
		var rb readBack
		if first != nil {
			rb, first = <-first, nil
		} else {
			rb.recs, rb.base, rb.err = pc.e.o.Target.ReadBack(ctx, tp, end)
		}
		recs, base, err := rb.recs, rb.base, rb.err
		if err != nil {
			return fmt.Errorf("read back %s for the copy of source offset %d: %w", tp, anchor, err)
		}
		for i := len(recs) - 1; i >= 0; i-- {
			off, ok := catchup.SourceOffset(&recs[i], pc.e.o.Cluster, pc.p)
			switch {
			case !ok || off > anchor:
				continue
			case off < anchor:
				return pc.foreignAnchor(foreign, anchor, committedEnd) // copies are in order: the anchor was never copied (loop prevention)
			case !catchup.SameContent(src, &recs[i], true) && committedEnd >= 0 && recs[i].Offset >= committedEnd:
				if foreign == nil {
					foreign = &recs[i]
				}
				continue
			case !catchup.SameContent(src, &recs[i], true):
				return fmt.Errorf("%s: the source record at offset %d differs from its copy at target offset %d "+
					"(%s): the source topic was deleted and recreated; copying on from the checkpoint would skip "+
					"its first %d offsets. Run `catchup reset --pipeline %s --topic %s --to earliest --allow-duplicates` to copy it again "+
					"deliberately: %w", pc.p, anchor, recs[i].Offset, tp, pc.next, pc.e.o.Pipeline, pc.p.Topic, catchup.ErrTopicRecreated)
			default:
				return nil
			}
		}
		if base >= end {
			return pc.foreignAnchor(foreign, anchor, committedEnd)
		}
		end = base
	}
	return pc.foreignAnchor(foreign, anchor, committedEnd)
}

// foreignAnchor is checkAnchor's verdict when this pipeline's copy of the
// anchor was not found: an error naming the foreign record if one claimed
// to be that copy with other content, nil if none.
func (pc *partitionCopy) foreignAnchor(foreign *catchup.Record, anchor, committedEnd int64) error {
	if foreign == nil {
		return nil
	}
	tp := pc.targetPartition()
	return fmt.Errorf("%s: target %s offset %d holds a record whose provenance header says it is the copy of source "+
		"offset %d, but its content differs from the source record, and it was written after this pipeline's last "+
		"commit (target end %d): another writer (a second pipeline with source cluster name %q, or a producer) writes "+
		"into this target partition. The source topic was not shown to be recreated; stop the other writer, then run "+
		"again: %w", pc.p, tp, foreign.Offset, anchor, committedEnd, pc.e.o.Cluster, catchup.ErrForeignRecord)
}

// passAnchor ends the anchor check on the first batch of the copy: it
// compares src, the source record at next-1 (nil when the first fetch did
// not begin with it: a marker, a compacted record, retention), with its copy
// in the target, then makes the commit that run left to it, before anything
// is produced.
func (pc *partitionCopy) passAnchor(ctx context.Context, src *catchup.Record, first <-chan readBack) error {
	if src != nil {
		err := pc.retry(ctx, func() error {
			err := pc.compareAnchor(ctx, src, pc.committedTargetEnd, first)
			first = nil // a retry reads back again
			return err
		})
		if err != nil {
			return err
		}
	}
	pc.enter(stateCopying)
	// The start and the target end, so that a crash after the first produce
	// can be reconciled.
	return pc.commitProgress()
}
