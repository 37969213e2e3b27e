package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/pipeline"
)

// statusRow is one partition in catchup status.
type statusRow struct {
	Topic        string    `json:"topic"`
	Partition    int32     `json:"partition"`
	Checkpoint   *int64    `json:"checkpoint"` // null: never copied
	Start        *int64    `json:"start"`      // where copying began; null: unknown
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
	// Verification is the result of the last catchup verify; null: never
	// verified.
	Verification *verificationJSON `json:"last_verification"`
}

// verificationJSON is a catchup.Verification as --json prints it (status
// and verify): an encoding only, with OK added, First spelt
// first_problem and every count always present; docs/json.md says what
// each count holds.
type verificationJSON struct {
	At          time.Time `json:"at,omitzero"` // absent from verify's own output: it is being recorded
	OK          bool      `json:"ok"`
	From        int64     `json:"from"`
	To          int64     `json:"to"`
	Source      int64     `json:"source"`
	Matched     int64     `json:"matched"`
	Missing     int64     `json:"missing"`
	Duplicated  int64     `json:"duplicated"`
	Differing   int64     `json:"differing"`
	OutOfOrder  int64     `json:"out_of_order"`
	LoopSkipped int64     `json:"loop_skipped"`
	Replaced    int64     `json:"replaced"`
	Foreign     int64     `json:"foreign"`
	Outside     int64     `json:"outside"`
	Target      int64     `json:"target"`
	Behind      int64     `json:"behind"`
	Stuck       string    `json:"stuck,omitempty"`
	First       string    `json:"first_problem,omitempty"`
}

// verificationJSONOf is v as --json prints it.
func verificationJSONOf(v catchup.Verification) *verificationJSON {
	return &verificationJSON{
		At: v.At, OK: v.OK(), From: v.From, To: v.To, Source: v.Source, Matched: v.Matched,
		Missing: v.Missing, Duplicated: v.Duplicated, Differing: v.Differing, OutOfOrder: v.OutOfOrder,
		LoopSkipped: v.LoopSkipped, Replaced: v.Replaced, Foreign: v.Foreign, Outside: v.Outside, Target: v.Target,
		Behind: v.Behind, Stuck: v.Stuck, First: v.First,
	}
}

// statusJSONT is one pipeline of catchup status --json.
type statusJSONT struct {
	Pipeline   string      `json:"pipeline"`
	Partitions []statusRow `json:"partitions"`
}

func (a *app) statusCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Print checkpoint, source end, lag and last verification per partition",
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
			for _, pc := range ps {
				rows, err := a.status(ctx, f, pc)
				if err != nil {
					return fmt.Errorf("pipeline %s: %w", pc.Name, err)
				}
				if a.jsonOut {
					a.addJSON(statusJSONT{Pipeline: pc.Name, Partitions: rows})
				} else {
					printStatus(a, pc.Name, rows)
				}
			}
			return nil
		},
	}
	a.addJSONFlag(cmd.Flags(), "print one JSON document (docs/json.md)")
	return cmd
}

func (a *app) status(ctx context.Context, f *config.File, pc *config.Pipeline) ([]statusRow, error) {
	p, err := pipeline.Open(ctx, f, pc, pipeline.Options{Log: a.logger(), ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	sv, err := p.Engine.Survey(ctx)
	if err != nil {
		return nil, err
	}
	marks, cps := sv.Offsets, sv.Checkpoints
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
				r.Start = c.Start
			}
			r.Records, r.Bytes, r.Gaps, r.LastError, r.Updated = c.Records, c.Bytes, len(c.Gaps), c.LastError, c.Updated
			if c.Owner != "" && c.Expires.After(now) {
				r.Owner, r.LeaseExpires = c.Owner, c.Expires
			}
			if v := c.LastVerification; v != nil {
				r.Verification = verificationJSONOf(*v)
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func printStatus(a *app, name string, rows []statusRow) {
	fmt.Fprintf(a.out, "pipeline %s\n", name)
	tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tCHECKPOINT\tSOURCE_END\tLAG\tCOPIED\tSINCE_UPDATE\tLEASE\tGAPS\tVERIFIED\tLAST_ERROR")
	var lag int64
	now := time.Now()
	var last time.Time
	for _, r := range rows {
		if r.Updated.After(last) {
			last = r.Updated
		}
		cp := "-"
		if r.Checkpoint != nil {
			cp = fmt.Sprint(*r.Checkpoint)
		}
		lease := "-"
		if r.Owner != "" {
			lease = r.Owner + " until " + r.LeaseExpires.Format(time.RFC3339)
		}
		lag += r.Lag
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\t%s\t%s\t%d\t%s\t%s\n", r.Topic, r.Partition, cp, r.SourceEnd, r.Lag, r.Records,
			since(now, r.Updated), lease, r.Gaps, verified(r.Verification), r.LastError)
	}
	tw.Flush()
	if last.IsZero() {
		fmt.Fprintf(a.out, "%d partitions, total lag %d records; no checkpoint written\n", len(rows), lag)
	} else {
		fmt.Fprintf(a.out, "%d partitions, total lag %d records; last checkpoint write %s ago\n", len(rows), lag, since(now, last))
	}
}

// verified is the VERIFIED cell: "-" if never verified, "ok" and the time
// (UTC, to the minute) for an exact copy of the range, else "MISMATCH", the
// time and the problem counts that are not zero, or "STUCK", the time and
// how far behind for a partition whose copied range matched.
func verified(v *verificationJSON) string {
	if v == nil {
		return "-"
	}
	at := v.At.UTC().Format("2006-01-02T15:04Z")
	if v.OK {
		return "ok " + at
	}
	var problems []string
	for _, c := range []struct {
		n    int64
		what string
	}{{v.Missing, "missing"}, {v.Duplicated, "duplicated"}, {v.Differing, "differing"}, {v.OutOfOrder, "out of order"}} {
		if c.n != 0 {
			problems = append(problems, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	if len(problems) == 0 && v.Stuck != "" {
		return fmt.Sprintf("STUCK %s: %d behind", at, v.Behind)
	}
	return "MISMATCH " + at + ": " + strings.Join(problems, ", ")
}

// since is the SINCE_UPDATE cell: how long before now t was, "3m12s" (to
// the second; to the minute past an hour), "0s" for a t after now (another
// host's clock), or "-" for the zero time: never written. One word, for
// scripts that split the table on blanks.
func since(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := max(0, now.Sub(t))
	if d < time.Hour {
		return d.Truncate(time.Second).String()
	}
	return strings.TrimSuffix(d.Truncate(time.Minute).String(), "0s")
}
