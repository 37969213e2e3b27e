package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/groupsync"
	"github.com/kafka-catchup/catchup/internal/pipeline"
)

// groupSyncer syncs the groups of one pipeline at most every
// sync_groups.interval.
type groupSyncer struct {
	last time.Time
}

// syncGroups runs group sync for pc on p if it is configured and due; nil
// when not. A failure is logged, never fatal to the copy.
func (a *app) syncGroups(ctx context.Context, gs *groupSyncer, pc *config.Pipeline, p *pipeline.Pipeline) []groupsync.Group {
	g := pc.SyncGroups
	if g == nil || ctx.Err() != nil || (!gs.last.IsZero() && time.Since(gs.last) < g.Interval) {
		return nil
	}
	log := a.logger()
	res, err := p.SyncGroups(ctx, pc)
	if err != nil {
		log.WarnContext(ctx, "groups not synced", "pipeline", pc.Name, "error", err)
		return nil
	}
	gs.last = time.Now()
	for _, r := range res {
		synced, skipped := pipeline.GroupCounts([]groupsync.Group{r})
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
