package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/segmentio/kafka-go"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/groupsync"
	"github.com/kafka-catchup/catchup/internal/kafkago"
)

// groupTarget is the target cluster as group sync needs it: read through a
// read_uncommitted Source (the provenance headers), and its group API.
type groupTarget struct {
	*kafkago.Source
	cl *kafkago.Cluster
}

func (g groupTarget) GroupActive(ctx context.Context, group string) (bool, error) {
	gr, err := g.cl.DescribeGroup(ctx, group)
	if errors.Is(err, kafka.GroupIdNotFound) {
		// A group of the new consumer protocol (KIP-848), which
		// DescribeGroups does not describe: its coordinator refuses a
		// commit without a member epoch unless the group is empty.
		return false, nil
	}
	return gr.Active(), err
}

func (g groupTarget) CommittedOffsets(ctx context.Context, group string) (map[catchup.Partition]int64, error) {
	return g.cl.CommittedOffsets(ctx, group)
}

func (g groupTarget) CommitOffsets(ctx context.Context, group string, offs map[catchup.Partition]int64) error {
	return g.cl.CommitOffsets(ctx, group, offs)
}

// SyncGroups runs group sync (sync_groups) for pipeline pc, opened as p:
// the selected source groups' offsets, translated through the provenance
// headers, committed on the target (package groupsync). It is nil, nil when
// pc has no sync_groups.
func (p *Pipeline) SyncGroups(ctx context.Context, pc *config.Pipeline) ([]groupsync.Group, error) {
	g := pc.SyncGroups
	if g == nil {
		return nil, nil
	}
	reader, err := ConnectReader(pc.Target, "read_uncommitted")
	if err != nil {
		return nil, fmt.Errorf("read target: %w", err)
	}
	defer reader.Close()
	return groupsync.Sync(ctx, p.Source.Cluster(), groupTarget{Source: reader, cl: p.Target.Cluster()}, groupsync.Options{
		Cluster: pc.Source.Name, Group: g.Match, Topic: pc.Topics.Match, TargetTopic: pc.MapTopic,
	})
}

// GroupCounts returns how many partitions of groups were synced (committed)
// and skipped, for logs and metrics.
func GroupCounts(groups []groupsync.Group) (synced, skipped int) {
	for _, r := range groups {
		for _, p := range r.Partitions {
			switch p.Status {
			case groupsync.StatusSynced:
				synced++
			case groupsync.StatusSkipped:
				skipped++
			}
		}
	}
	return synced, skipped
}
