package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/pipeline"
)

// statusRow is one partition in catchup status.
type statusRow struct {
	Topic        string    `json:"topic"`
	Partition    int32     `json:"partition"`
	Checkpoint   *int64    `json:"checkpoint"` // null: never copied
	SourceStart  int64     `json:"source_start"`
	SourceEnd    int64     `json:"source_end"`
	Lag          int64     `json:"lag"`
	Records      int64     `json:"records_copied"`
	Bytes        int64     `json:"bytes_copied"`
	Owner        string    `json:"lease_owner,omitempty"`
	LeaseExpires time.Time `json:"lease_expires,omitzero"`
	Gaps         int       `json:"gaps"`
	LastError    string    `json:"last_error,omitempty"`
	Updated      time.Time `json:"updated,omitzero"`
}

func (a *app) statusCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Print checkpoint, source end and lag per partition",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			f, err := a.load(cmd.Context())
			if err != nil {
				return err
			}
			ps, err := a.pipelines(f)
			if err != nil {
				return err
			}
			all := map[string][]statusRow{}
			for _, pc := range ps {
				rows, err := a.status(ctx, f, pc)
				if err != nil {
					return fmt.Errorf("pipeline %s: %w", pc.Name, err)
				}
				all[pc.Name] = rows
				if !a.jsonOut {
					printStatus(a, pc.Name, rows)
				}
			}
			if a.jsonOut {
				return printJSON(a.out, all)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&a.jsonOut, "json", false, "print JSON")
	return cmd
}

func (a *app) status(ctx context.Context, f *config.File, pc *config.Pipeline) ([]statusRow, error) {
	p, err := pipeline.Open(ctx, f, pc, pipeline.Options{Log: a.logger()})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	parts, err := p.Source.Partitions(ctx, pc.Topics.Match)
	if err != nil {
		return nil, err
	}
	marks, err := p.Source.ListOffsets(ctx, parts)
	if err != nil {
		return nil, err
	}
	stored, err := p.Store.Load(ctx, pc.Name)
	if err != nil {
		return nil, err
	}
	cps := map[catchup.Partition]checkpoint.Checkpoint{}
	for _, c := range stored {
		cps[c.Partition] = c
	}
	now := time.Now()
	rows := make([]statusRow, 0, len(marks))
	for _, m := range marks {
		end := m.HighWatermark
		if pc.Isolation == "read_committed" {
			end = m.LastStable
		}
		r := statusRow{Topic: m.Topic, Partition: m.Partition.Partition, SourceStart: m.LogStart, SourceEnd: end, Lag: end - m.LogStart}
		if c, ok := cps[m.Partition]; ok {
			if c.Exists {
				next := c.Next
				r.Checkpoint, r.Lag = &next, max(0, end-c.Next)
			}
			r.Records, r.Bytes, r.Gaps, r.LastError, r.Updated = c.Records, c.Bytes, len(c.Gaps), c.LastError, c.Updated
			if c.Owner != "" && c.Expires.After(now) {
				r.Owner, r.LeaseExpires = c.Owner, c.Expires
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func printStatus(a *app, name string, rows []statusRow) {
	fmt.Fprintf(a.out, "pipeline %s\n", name)
	tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tCHECKPOINT\tSOURCE_END\tLAG\tCOPIED\tLEASE\tGAPS\tLAST_ERROR")
	var lag int64
	for _, r := range rows {
		cp := "-"
		if r.Checkpoint != nil {
			cp = fmt.Sprint(*r.Checkpoint)
		}
		lease := "-"
		if r.Owner != "" {
			lease = r.Owner + " until " + r.LeaseExpires.Format(time.RFC3339)
		}
		lag += r.Lag
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\t%s\t%d\t%s\n", r.Topic, r.Partition, cp, r.SourceEnd, r.Lag, r.Records, lease, r.Gaps, r.LastError)
	}
	tw.Flush()
	fmt.Fprintf(a.out, "%d partitions, total lag %d records\n", len(rows), lag)
}
