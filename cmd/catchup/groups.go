package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/groupsync"
	"github.com/kafka-catchup/catchup/internal/kafkago"
	"github.com/kafka-catchup/catchup/internal/pipeline"
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

// groupSyncer syncs the groups of one pipeline at most every
// sync_groups.interval.
type groupSyncer struct {
	last time.Time
}

// sync runs group sync for pc on p if it is configured and due; nil when
// not. A failure is logged and reported in the result, never fatal to the
// copy.
func (a *app) syncGroups(ctx context.Context, gs *groupSyncer, pc *config.Pipeline, p *pipeline.Pipeline) []groupsync.Group {
	g := pc.SyncGroups
	if g == nil || ctx.Err() != nil || (!gs.last.IsZero() && time.Since(gs.last) < g.Interval) {
		return nil
	}
	log := a.logger()
	reader, err := kafkago.NewSource(pc.Target, "read_uncommitted", nil)
	if err != nil {
		log.WarnContext(ctx, "groups not synced", "pipeline", pc.Name, "error", err)
		return nil
	}
	defer reader.Close()
	res, err := groupsync.Sync(ctx, p.Source.Cluster(), groupTarget{Source: reader, cl: p.Target.Cluster()}, groupsync.Options{
		Cluster: pc.Source.Name, Group: g.Match, Topic: pc.Topics.Match, TargetTopic: pc.MapTopic,
	})
	if err != nil {
		log.WarnContext(ctx, "groups not synced", "pipeline", pc.Name, "error", err)
		return nil
	}
	gs.last = time.Now()
	for _, r := range res {
		var synced, skipped int
		for _, p := range r.Partitions {
			switch p.Status {
			case groupsync.StatusSynced:
				synced++
			case groupsync.StatusSkipped:
				skipped++
			}
		}
		log.InfoContext(ctx, "group synced", "pipeline", pc.Name, "group", r.Group, "synced", synced, "skipped", skipped,
			"group_skipped", r.Skipped, "error", r.Error)
	}
	return res
}

// printGroups prints what group sync did, one row per group and partition.
func printGroups(w io.Writer, groups []groupsync.Group) {
	if len(groups) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tTOPIC\tPARTITION\tCOMMITTED\tTARGET_OFFSET\tPREVIOUS\tSTATUS\tREASON")
	for _, g := range groups {
		if len(g.Partitions) == 0 || g.Error != "" {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\tskipped\t%s%s\n", g.Group, g.Skipped, g.Error)
			continue
		}
		for _, p := range g.Partitions {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\n", g.Group, p.Topic, p.Partition, p.Committed, p.Offset, p.Previous, p.Status, p.Reason)
		}
	}
	tw.Flush()
}
