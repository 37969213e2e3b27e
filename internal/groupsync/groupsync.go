// Package groupsync commits the offsets of source consumer groups on the
// target, translated exactly through the provenance headers (package
// translate): a consumer of a synced group that starts on the target reads
// exactly the record it would have read next on the source. It is
// MirrorMaker 2's sync.group.offsets, without its approximation. It commits
// only for groups with no active members on the target, never moves a
// target group backwards, and never commits past what has been copied.
package groupsync

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/translate"
)

// Source is the source cluster's group API; kafkago.Cluster implements it.
type Source interface {
	// ListGroups returns the ids of the cluster's consumer groups.
	ListGroups(ctx context.Context) ([]string, error)
	// CommittedOffsets returns the offsets group has committed.
	CommittedOffsets(ctx context.Context, group string) (map[catchup.Partition]int64, error)
}

// Target is the target cluster: read through the provenance headers, and its
// group API.
type Target interface {
	translate.Reader
	// GroupActive reports whether group has members, or is rebalancing,
	// on the target: committing for it would race with its consumers.
	GroupActive(ctx context.Context, group string) (bool, error)
	CommittedOffsets(ctx context.Context, group string) (map[catchup.Partition]int64, error)
	// CommitOffsets commits offs for group as an administrator does (no
	// member, generation -1).
	CommitOffsets(ctx context.Context, group string, offs map[catchup.Partition]int64) error
}

// Options say which groups and partitions to sync.
type Options struct {
	Cluster     string                  // source cluster name in the provenance headers; required
	Group       func(group string) bool // selects the groups; required
	Topic       func(topic string) bool // the pipeline's topics; required
	TargetTopic func(topic string) string
	Parallelism int // translations at once; default 8
}

// Status of one partition of a group.
type Status string

const (
	StatusSynced  Status = "synced"  // committed on the target
	StatusInSync  Status = "in_sync" // the target group was at the translated offset already
	StatusSkipped Status = "skipped" // not committed; Reason says why
)

// Partition is what happened to one partition of a group.
type Partition struct {
	Source    catchup.Partition `json:"-"`
	Topic     string            `json:"topic"`
	Partition int32             `json:"partition"`
	Committed int64             `json:"committed"` // on the source
	// Offset is the translated target offset; -1 when there is none.
	Offset int64 `json:"target_offset"`
	// Previous is the target group's committed offset before; -1 none.
	Previous int64  `json:"previous"`
	Status   Status `json:"status"`
	Reason   string `json:"reason,omitempty"`
}

// Group is what happened to one group.
type Group struct {
	Group string `json:"group"`
	// Skipped says why nothing of the group was committed ("" otherwise).
	Skipped    string      `json:"skipped,omitempty"`
	Partitions []Partition `json:"partitions"`
	Err        error       `json:"-"`
	Error      string      `json:"error,omitempty"`
}

// Sync syncs every selected group of src onto dst. A group that fails (its
// offsets unreadable, the commit refused) is reported with its error, and
// the others go on; the error is for listing the groups.
func Sync(ctx context.Context, src Source, dst Target, o Options) ([]Group, error) {
	if o.TargetTopic == nil {
		o.TargetTopic = func(t string) string { return t }
	}
	if o.Parallelism <= 0 {
		o.Parallelism = 8
	}
	all, err := src.ListGroups(ctx)
	if err != nil {
		return nil, fmt.Errorf("list source groups: %w", err)
	}
	var out []Group
	for _, g := range all {
		if !o.Group(g) {
			continue
		}
		r := syncGroup(ctx, src, dst, o, g)
		if r.Err != nil {
			r.Error = r.Err.Error()
		}
		out = append(out, r)
	}
	return out, nil
}

// syncGroup syncs one group.
func syncGroup(ctx context.Context, src Source, dst Target, o Options, group string) Group {
	r := Group{Group: group}
	committed, err := src.CommittedOffsets(ctx, group)
	if err != nil {
		r.Err = err
		return r
	}
	for _, p := range slices.SortedFunc(maps.Keys(committed), catchup.Partition.Compare) {
		if o.Topic(p.Topic) {
			r.Partitions = append(r.Partitions, Partition{Source: p, Topic: p.Topic, Partition: p.Partition,
				Committed: committed[p], Offset: -1, Previous: -1})
		}
	}
	if len(r.Partitions) == 0 {
		r.Skipped = "no committed offset on a topic of the pipeline"
		return r
	}
	active, err := dst.GroupActive(ctx, group)
	if err != nil {
		r.Err = err
		return r
	}
	if active {
		r.Skipped = "the group has active members on the target: its consumers there own its offsets"
		for i := range r.Partitions {
			r.Partitions[i].Status, r.Partitions[i].Reason = StatusSkipped, "group active on the target"
		}
		return r
	}
	if r.Err = translateAll(ctx, dst, o, r.Partitions); r.Err != nil {
		return r
	}
	current, err := dst.CommittedOffsets(ctx, group)
	if err != nil {
		r.Err = err
		return r
	}
	offs := map[catchup.Partition]int64{}
	for i := range r.Partitions {
		p := &r.Partitions[i]
		tp := catchup.Partition{Topic: o.TargetTopic(p.Topic), Partition: p.Partition}
		if prev, ok := current[tp]; ok {
			p.Previous = prev
		}
		switch {
		case p.Status == StatusSkipped:
		case p.Previous == p.Offset:
			p.Status = StatusInSync
		case p.Previous > p.Offset:
			p.Status, p.Reason = StatusSkipped, fmt.Sprintf("the target group is at %d, past %d: never moved backwards", p.Previous, p.Offset)
		default:
			p.Status = StatusSynced
			offs[tp] = p.Offset
		}
	}
	if len(offs) > 0 {
		if err := dst.CommitOffsets(ctx, group, offs); err != nil {
			r.Err = err
			for i := range r.Partitions {
				if r.Partitions[i].Status == StatusSynced {
					r.Partitions[i].Status, r.Partitions[i].Reason = StatusSkipped, "commit refused"
				}
			}
		}
	}
	return r
}

// translateAll finds the target offset of each of ps; a partition whose copy
// has not reached the group's offset is skipped with the reason.
func translateAll(ctx context.Context, dst Target, o Options, ps []Partition) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	sem := make(chan struct{}, o.Parallelism)
	for i := range ps {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			p := &ps[i]
			tp := catchup.Partition{Topic: o.TargetTopic(p.Topic), Partition: p.Partition}
			pos, err := translate.Find(ctx, dst, p.Source, tp, p.Committed, translate.Options{Cluster: o.Cluster})
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				return
			}
			switch pos.Status {
			case translate.StatusExact, translate.StatusEnd:
				p.Offset = pos.Offset
			case translate.StatusLagging:
				p.Status, p.Reason = StatusSkipped, fmt.Sprintf("the copy has not reached it: source offsets %d to %d are not copied yet",
					pos.LastCopied+1, p.Committed-1)
			default:
				p.Status, p.Reason = StatusSkipped, "no copy of this partition in the target yet"
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
