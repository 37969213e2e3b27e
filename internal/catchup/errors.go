package catchup

import (
	"errors"
	"fmt"
)

// GapError reports source records that no longer exist but were never
// copied: the checkpoint points below the partition's log start.
type GapError struct {
	Partition
	From int64 // first missing offset (the checkpoint)
	To   int64 // first offset still in the log (the log start)
}

func (e *GapError) Error() string {
	return fmt.Sprintf("gap in %s: offsets [%d,%d) were deleted from the source before they were copied "+
		"(%d records lost to retention or deletion); set on_gap: skip to record the gap and continue, "+
		"or reset the checkpoint with catchup reset", e.Partition, e.From, e.To, e.To-e.From)
}

// ErrUnknownOutcome marks a produce error after which the records may or may
// not have been appended to the target (a timeout, a connection lost after the
// request was sent, NOT_ENOUGH_REPLICAS_AFTER_APPEND). Retrying such a produce
// blindly can duplicate; the engine reconciles with the target first.
var ErrUnknownOutcome = errors.New("catchup: produce outcome unknown")

// ErrRetriable marks an error after which the same request can be sent again
// safely because nothing was written (NOT_LEADER_OR_FOLLOWER, a connection
// refused before the request was sent, ...).
var ErrRetriable = errors.New("catchup: retriable")

// ErrTopicRecreated marks a source partition whose log end moved below the
// checkpoint, or whose topic id changed: the topic was deleted and created
// again. catchup fails closed; the checkpoint must be reset deliberately.
var ErrTopicRecreated = errors.New("catchup: source topic was recreated")

// ErrForeignRecord marks a target partition where a record that another
// writer produced claims, by its provenance header, to be the copy of a
// source record it does not match: the target, not the source, changed.
var ErrForeignRecord = errors.New("catchup: foreign record in the target")

// ErrTargetAhead marks a partition the checkpoint store holds no checkpoint
// of while its target partition already holds records, and whose target
// tail does not say how far it was copied (records another writer produced,
// or copies made without provenance): copying from the start policy could
// write every record a second time, so catchup fails closed until a start is
// chosen deliberately (catchup reset, start_offsets, --allow-duplicates).
var ErrTargetAhead = errors.New("catchup: the target holds records the checkpoint store does not account for")
