package checkpoint

import (
	"fmt"
	"slices"
	"time"
)

// Begin is where a pipeline began copying a topic under start: latest: the
// source end offset of each partition of the topic at the instant the
// pipeline first resolved latest for it. A partition that has no checkpoint
// starts at its offset here however many runs later it is first reached (a
// run limited by its budget, a first fan-out round, a worker given a
// shard), so nothing written since the pipeline began is skipped; a
// partition the topic gained since (at or above len(Offsets)) starts at its
// log start, since all its records were written while the pipeline copied
// the topic. Stores write it once per pipeline and topic (Store.PutBegin)
// and keep it for good.
type Begin struct {
	At time.Time // when the offsets were read; stores keep it to the millisecond
	// Offsets holds, by partition number, where a partition without a
	// checkpoint starts: a source offset, or FromLogStart.
	Offsets []int64
}

// FromLogStart in Begin.Offsets starts its partition at its log start: a
// partition that had no checkpoint when a pipeline from before begins were
// recorded first wrote one, and whose records may all be unread.
const FromLogStart int64 = -2

// Start returns the offset where partition p starts when it has no
// checkpoint, and false if it starts at its log start (FromLogStart, or a
// partition the topic gained after b was taken).
func (b Begin) Start(p int32) (int64, bool) {
	if p < 0 || int(p) >= len(b.Offsets) || b.Offsets[p] == FromLogStart {
		return 0, false
	}
	return b.Offsets[p], true
}

// Partitions returns the partition count of the topic when b was taken.
func (b Begin) Partitions() int { return len(b.Offsets) }

// Clone returns b with its own copy of Offsets.
func (b Begin) Clone() Begin {
	b.Offsets = slices.Clone(b.Offsets)
	return b
}

// Validate returns an error naming the first offset of b that is neither a
// source offset (0 or more) nor FromLogStart. Stores refuse such a begin.
func (b Begin) Validate() error {
	for p, off := range b.Offsets {
		if off < 0 && off != FromLogStart {
			return fmt.Errorf("begin offset %d of partition %d: want 0 or more, or %d (from the log start)", off, p, FromLogStart)
		}
	}
	return nil
}
