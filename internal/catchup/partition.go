package catchup

import (
	"cmp"
	"fmt"
)

// Partition names one partition of one topic.
type Partition struct {
	Topic     string
	Partition int32
}

func (p Partition) String() string { return fmt.Sprintf("%s/%d", p.Topic, p.Partition) }

// Compare orders partitions by topic, then partition number.
func (p Partition) Compare(q Partition) int {
	if c := cmp.Compare(p.Topic, q.Topic); c != 0 {
		return c
	}
	return cmp.Compare(p.Partition, q.Partition)
}

// Window is the half-open source offset range [From, To) that one run copies
// from one partition. To is fixed when the run starts and never grows.
type Window struct {
	Partition
	From int64 // first offset to copy
	To   int64 // first offset not to copy
}

// Len is the number of offsets in the window (records, transaction markers and
// compacted holes alike), never negative.
func (w Window) Len() int64 { return max(0, w.To-w.From) }

func (w Window) String() string { return fmt.Sprintf("%s [%d,%d)", w.Partition, w.From, w.To) }

// Offsets are a partition's watermarks as the source broker reports them.
type Offsets struct {
	Partition
	LogStart      int64 // earliest offset still stored
	HighWatermark int64 // offset after the last replicated record
	LastStable    int64 // offset after the last record whose transaction is decided; equals HighWatermark without transactions
}
