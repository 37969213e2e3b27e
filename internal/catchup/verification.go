package catchup

import "time"

// Verification is what one `catchup verify` found for one partition: the
// source range [From, To) compared with the whole target partition, record
// for record, matched by the source offset in the provenance header. verify
// computes it, the checkpoint stores keep the last one of each partition
// (each in its own encoding), status and verify print it.
//
// Every source record in [From, To) is counted once:
// Source = Matched + OutOfOrder + Missing + LoopSkipped + Replaced.
// Every target record read is counted once:
// Target = Matched + OutOfOrder + Differing + Duplicated + Foreign + Outside.
type Verification struct {
	At          time.Time // when the comparison ended
	From, To    int64     // source offsets compared, [From, To)
	Source      int64     // source records in [From, To)
	Matched     int64     // source records with an equal copy in the target, in source order
	Missing     int64     // source records with no copy in the target, loop-skipped ones apart
	Duplicated  int64     // further equal copies of a source record that has one already
	Differing   int64     // copies with another key, value, headers or timestamp than their source record
	OutOfOrder  int64     // source records whose equal copy comes after a copy of a later source offset
	LoopSkipped int64     // source records with no copy that loop prevention skips: they came from the target cluster
	Replaced    int64     // source records whose only copies differ (each also counted in Differing)
	Foreign     int64     // target records that are no copy of this source partition (no or other provenance)
	Outside     int64     // copies of this source partition outside [From, To), or of offsets the source no longer holds
	Target      int64     // target records read: the whole target partition
	// Behind is how many source offsets the checkpoint is behind the source
	// end when the partition is stuck: its last commit recorded Stuck as
	// its error and left lag. Both are zero for a partition that is not.
	Behind int64
	Stuck  string
	First  string // the first problem found; "" if none
}

// OK reports whether v found an exact copy of [From, To) in source order,
// and a partition that is not stuck: nothing missing, duplicated,
// differing, replaced or out of order. Loop-skipped, foreign and outside
// records are expected and do not count against it.
func (v Verification) OK() bool {
	return v.Missing == 0 && v.Duplicated == 0 && v.Differing == 0 && v.OutOfOrder == 0 && v.Replaced == 0 && v.Stuck == ""
}
