package plan

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Retention is what a source topic's configs say about deleting records.
type Retention struct {
	// Time is retention.ms: a segment is deleted once its newest record is
	// older than this. Meaningless when Never.
	Time time.Duration
	// Never is set when nothing is deleted by time: retention.ms is -1, or
	// cleanup.policy is compact without delete.
	Never bool
	// BySize is set when retention.bytes also deletes (it is not -1 and
	// cleanup.policy has delete): deletion can come sooner than by time.
	BySize bool
}

// TopicRetention reads cleanup.policy, retention.ms and retention.bytes from
// the configs in force on a topic (as DescribeConfigs reports them).
// Missing keys take Kafka's defaults: delete, 7 days, -1.
func TopicRetention(configs map[string]string) (Retention, error) {
	policy := cmp.Or(configs["cleanup.policy"], "delete")
	deletes := slices.Contains(strings.Split(strings.ReplaceAll(policy, " ", ""), ","), "delete")
	ms, err := strconv.ParseInt(cmp.Or(configs["retention.ms"], "604800000"), 10, 64)
	if err != nil {
		return Retention{}, fmt.Errorf("retention.ms %q: %w", configs["retention.ms"], err)
	}
	bytes, err := strconv.ParseInt(cmp.Or(configs["retention.bytes"], "-1"), 10, 64)
	if err != nil {
		return Retention{}, fmt.Errorf("retention.bytes %q: %w", configs["retention.bytes"], err)
	}
	return Retention{
		Time:   time.Duration(ms) * time.Millisecond,
		Never:  !deletes || ms < 0,
		BySize: deletes && bytes >= 0,
	}, nil
}

// Deletion says when the source may delete the first record of a window.
type Deletion struct {
	// At is the earliest time retention.ms lets the source delete the
	// record: its timestamp plus retention.ms (the segment holding it can
	// only be newer). Zero when unknown or Never.
	At     time.Time
	Never  bool // nothing is deleted by time
	BySize bool // retention.bytes may delete it sooner than At
}

// Deletes returns when r lets the source delete a record with timestamp ts;
// a zero ts (unknown) gives an unknown time.
func (r Retention) Deletes(ts time.Time) Deletion {
	d := Deletion{Never: r.Never, BySize: r.BySize}
	if !r.Never && !ts.IsZero() {
		d.At = ts.Add(r.Time)
	}
	return d
}

// ByUrgency returns windows (a sorted copy) in the order their copies
// should start: first those that cannot be copied (Err set: records are
// already missing, or the topic was recreated; a person must look), then
// those with records to copy in the order the Lambda dispatcher hands out
// work (CompareUrgency of work(window), see NewWork), and last the empty
// ones; ties in partition order. catchup plan prints its rows so.
func ByUrgency(windows []Planned, work func(Planned) Work) []Planned {
	rank := func(w Planned) int {
		switch {
		case w.Err != nil:
			return 0
		case w.Len() == 0:
			return 2
		}
		return 1
	}
	out := slices.Clone(windows)
	slices.SortStableFunc(out, func(a, b Planned) int {
		ra, rb := rank(a), rank(b)
		if c := cmp.Compare(ra, rb); c != 0 {
			return c
		}
		if ra == 1 {
			return CompareUrgency(work(a), work(b))
		}
		return a.Partition.Compare(b.Partition)
	})
	return out
}
