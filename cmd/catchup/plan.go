package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/plan"
)

// sampleBytes is how much of each window plan reads to estimate record sizes.
const sampleBytes = 64 << 10

func (a *app) planCmd() *cobra.Command {
	var rate float64
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Print the windows a run would copy now, most urgent first, without copying",
		Long: `plan prints, for every partition of the selected pipelines, the window a run
would copy now: its offsets, records, estimated bytes (from the copy counters
in the checkpoints, else the sizes of the records at a window's start), how
long until the source's retention may delete its first record (the record's
timestamp plus the topic's retention.ms; "never" for retention.ms -1 and
compacted topics; '*' where retention.bytes may delete sooner), and, with
--rate, an estimated copy duration. Rows are in the order the Lambda
dispatcher hands out work: partitions that cannot be copied first, then the
largest share of the source's retained log not copied yet, then the most
bytes; empty windows last.

catchup keeps no copy rate in its checkpoints, so the duration needs --rate:
the records/s a previous run of the pipeline reported (run prints it last).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if rate < 0 {
				return usageError{fmt.Errorf("--rate %v: want records per second, above 0", rate)}
			}
			f, err := a.load(cmd.Context())
			if err != nil {
				return err
			}
			ps, err := a.pipelines(f)
			if err != nil {
				return err
			}
			for _, pc := range ps {
				if err := a.planPipeline(ctx, f, pc, rate); err != nil {
					return fmt.Errorf("pipeline %s: %w", pc.Name, err)
				}
			}
			return nil
		},
	}
	a.addJSONFlag(cmd.Flags(), "print one JSON document (docs/json.md)")
	cmd.Flags().Float64Var(&rate, "rate", 0, "records per second to estimate copy durations at (the rate a previous run reported)")
	return cmd
}

func (a *app) planPipeline(ctx context.Context, f *config.File, pc *config.Pipeline, rate float64) error {
	p, err := pipeline.Open(ctx, f, pc, pipeline.Options{Log: a.logger(), ReadOnly: true})
	if err != nil {
		return err
	}
	defer p.Close()
	sv, err := p.Engine.Survey(ctx)
	if err != nil {
		return err
	}
	// A source topic deleted and refilled past the checkpoint shows as
	// blocked, as the run would find it, not as a normal window.
	p.Engine.CheckAnchors(ctx, sv)
	windows := sv.Windows
	// Targets that already hold copies past a window's start (a lost or
	// restored store, a renamed pipeline): the run resumes after them.
	var ahead []catchup.Partition
	for _, w := range windows {
		if w.Err == nil && w.Len() > 0 {
			ahead = append(ahead, w.Partition)
		}
	}
	copied, err := p.Engine.TargetCopied(ctx, ahead)
	if err != nil {
		return err
	}
	var stamp *catchup.Provenance
	if pc.ProvenanceEnabled() {
		stamp = &catchup.Provenance{Cluster: pc.Source.Name}
	}
	samples := sampleWindows(ctx, p, windows, stamp)
	retention, rerr := topicRetention(ctx, p, windows)
	del := make(map[catchup.Partition]plan.Deletion, len(windows))
	for _, w := range windows {
		if r, ok := retention[w.Topic]; ok {
			del[w.Partition] = r.Deletes(samples[w.Partition].first)
		}
	}
	// Record sizes and urgency as the dispatcher estimates them: the copy
	// counters first, then the window's sample.
	sizes := plan.RecordSizes(sv.Checkpoints)
	avg := make(map[catchup.Partition]float64, len(windows))
	work := make(map[catchup.Partition]plan.Work, len(windows))
	for i, w := range windows {
		if w.Len() == 0 || w.Err != nil {
			continue
		}
		avg[w.Partition] = sizes.Average(w.Partition, func() (float64, bool) {
			sm, ok := samples[w.Partition]
			return sm.avgBytes, ok
		})
		work[w.Partition] = plan.NewWork(pc.Name, w, sv.Offsets[i], avg[w.Partition])
	}
	pr := planReport{
		name: pc.Name, windows: plan.ByUrgency(windows, func(w plan.Planned) plan.Work { return work[w.Partition] }),
		del: del, avg: avg, now: time.Now(), rate: rate, parallelism: pc.Parallelism, retentionErr: rerr, copied: copied,
	}
	if a.jsonOut {
		_, doc := pr.rows()
		a.addJSON(doc)
		return nil
	}
	pr.print(a.out)
	return nil
}

// planReport is what plan prints for one pipeline.
type planReport struct {
	name         string
	windows      []plan.Planned // in urgency order
	del          map[catchup.Partition]plan.Deletion
	avg          map[catchup.Partition]float64 // estimated bytes a record (plan.Sizes)
	now          time.Time
	rate         float64 // records/s; 0 unknown
	parallelism  int
	retentionErr error // the topic configs could not be read
	// copied is, by partition, the source offset after the last copy the
	// target holds (replicate.Engine.TargetCopied).
	copied map[catchup.Partition]int64
}

// planRow is one partition of a plan, as printed and as --json prints it.
type planRow struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	From      int64  `json:"from"`
	To        int64  `json:"to"`
	Records   int64  `json:"records"`   // offsets in [from, to)
	Backlog   int64  `json:"backlog"`   // offsets from from to the end; above records when window.max_records cut the window
	EstBytes  int64  `json:"est_bytes"` // records times the average size sampled at the window's start
	// DeletedAt is when the source's retention may delete the window's
	// first record; absent if never, unknown or for an empty window.
	DeletedAt     time.Time `json:"deleted_at,omitzero"`
	NeverDeleted  bool      `json:"never_deleted,omitempty"` // retention.ms -1 or a compacted topic
	BySize        bool      `json:"deleted_by_size,omitempty"`
	EstDurationMS int64     `json:"est_duration_ms,omitempty"` // with --rate only
	Gap           []int64   `json:"gap,omitempty"`             // [from, to) that will be skipped (on_gap: skip)
	Error         string    `json:"error,omitempty"`           // why the partition cannot be copied now
	// TargetNext is, when the target already holds copies past From, the
	// source offset after the last one: the run resumes there.
	TargetNext int64  `json:"target_next,omitempty"`
	deleted    string // DELETED_IN as printed
	dur        string // EST_DURATION as printed
}

// planJSONT is one pipeline of catchup plan --json.
type planJSONT struct {
	Pipeline       string    `json:"pipeline"`
	Records        int64     `json:"records"`                   // the backlog: offsets from each window's start to the end
	WindowRecords  int64     `json:"window_records"`            // what one run copies of it (window.max_records)
	EstBytes       int64     `json:"est_bytes"`                 // of the backlog
	EstDurationMS  int64     `json:"est_duration_ms,omitempty"` // with --rate only
	RetentionError string    `json:"retention_error,omitempty"` // the topic configs could not be read
	Partitions     []planRow `json:"partitions"`                // most urgent first
}

// rows computes the plan's rows, in urgency order, and its totals.
func (r *planReport) rows() ([]planRow, planJSONT) {
	busy := 0
	for _, pl := range r.windows {
		if pl.Len() > 0 {
			busy++
		}
	}
	// Partitions are copied parallelism at a time: each gets its share of
	// the pipeline's rate.
	perPartition := r.rate / float64(max(1, min(r.parallelism, busy)))
	tot := planJSONT{Pipeline: r.name, Partitions: []planRow{}}
	if r.retentionErr != nil {
		tot.RetentionError = r.retentionErr.Error()
	}
	var longest time.Duration
	rows := make([]planRow, 0, len(r.windows))
	for _, pl := range r.windows {
		avg := r.avg[pl.Partition]
		row := planRow{Topic: pl.Topic, Partition: pl.Partition.Partition, From: pl.From, To: pl.To, Records: pl.Len(),
			Backlog: pl.Len(), EstBytes: int64(float64(pl.Len()) * avg), deleted: "-", dur: "-"}
		switch {
		case pl.Err != nil:
			row.Error = pl.Err.Error()
		case pl.Gap != nil:
			row.Gap = []int64{pl.Gap.From, pl.Gap.To}
		}
		if next, ok := r.copied[pl.Partition]; ok && next > pl.From {
			row.TargetNext = next
		}
		if pl.Err == nil && pl.End > pl.To {
			row.Backlog = pl.End - pl.From // window.max_records cut the window short
		}
		tot.Records += row.Backlog
		tot.WindowRecords += row.Records
		tot.EstBytes += int64(float64(row.Backlog) * avg)
		if r.rate > 0 && pl.Len() > 0 {
			d := time.Duration(float64(pl.Len()) / perPartition * float64(time.Second))
			longest = max(longest, d)
			row.dur, row.EstDurationMS = roundDuration(d), d.Milliseconds()
		}
		if pl.Len() > 0 {
			d := r.del[pl.Partition]
			row.deleted = deletedIn(d, r.now)
			row.NeverDeleted, row.BySize = d.Never, d.BySize && !d.Never
			if !d.Never {
				row.DeletedAt = d.At
			}
		}
		rows = append(rows, row)
	}
	if r.rate > 0 {
		tot.EstDurationMS = max(time.Duration(float64(tot.Records)/r.rate*float64(time.Second)), longest).Milliseconds()
	}
	tot.Partitions = rows
	return rows, tot
}

func (r *planReport) print(w io.Writer) {
	fmt.Fprintf(w, "pipeline %s: most urgent first (the largest share of the source's retained log not copied yet)\n", r.name)
	if r.retentionErr != nil {
		fmt.Fprintf(w, "retention unknown: %v\n", r.retentionErr)
	}
	rows, tot := r.rows()
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tFROM\tTO\tRECORDS\tEST_BYTES\tDELETED_IN\tEST_DURATION\tNOTE")
	bySize := false
	for _, row := range rows {
		note := row.Error
		if row.Gap != nil {
			note = fmt.Sprintf("gap [%d,%d) will be skipped", row.Gap[0], row.Gap[1])
		}
		if row.Backlog > row.Records {
			note = strings.TrimPrefix(note+fmt.Sprintf("; backlog %d records to %d, in windows of window.max_records",
				row.Backlog, row.From+row.Backlog), "; ")
		}
		if row.TargetNext > 0 {
			note = strings.TrimPrefix(note+fmt.Sprintf("; target ahead: it holds copies to %d, a run resumes at %d",
				row.TargetNext-1, row.TargetNext), "; ")
		}
		bySize = bySize || row.BySize
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", row.Topic, row.Partition, row.From, row.To, row.Records,
			humanBytes(row.EstBytes), row.deleted, row.dur, note)
	}
	tw.Flush()
	fmt.Fprintf(w, "%d partitions, %d records, about %s", len(rows), tot.Records, humanBytes(tot.EstBytes))
	if tot.WindowRecords < tot.Records {
		fmt.Fprintf(w, "; one run copies %d of them (window.max_records)", tot.WindowRecords)
	}
	if r.rate > 0 {
		fmt.Fprintf(w, "; about %s at %.0f records/s", roundDuration(time.Duration(tot.EstDurationMS)*time.Millisecond), r.rate)
	}
	fmt.Fprintln(w)
	if bySize {
		fmt.Fprintln(w, "* retention.bytes also applies: the source may delete sooner than DELETED_IN")
	}
	if r.rate == 0 && tot.Records > 0 {
		fmt.Fprintln(w, "EST_DURATION: catchup stores no copy rate; pass --rate with the records/s a previous run reported")
	}
}

// deletedIn says how long until d, from now.
func deletedIn(d plan.Deletion, now time.Time) string {
	mark := ""
	if d.BySize {
		mark = "*"
	}
	switch left := d.At.Sub(now); {
	case d.Never:
		return "never"
	case d.At.IsZero():
		return "unknown" + mark
	case left <= 0:
		// Kafka deletes whole segments: the record goes with its segment,
		// at the next retention check after the segment rolls.
		return "overdue by " + roundDuration(-left) + mark
	default:
		return roundDuration(left) + mark
	}
}

// roundDuration prints d to the second below an hour, to the minute above.
func roundDuration(d time.Duration) string {
	if d >= time.Hour {
		return d.Round(time.Minute).String()
	}
	return d.Round(time.Second).String()
}

// sample is what reading the start of a window tells.
type sample struct {
	avgBytes float64   // average record size
	first    time.Time // timestamp of the first record, the oldest not copied
}

// sampleWindows reads the first records of each window: their average size
// as written, with the provenance header stamp (nil: none) adds, exactly
// (RECORDS counts offsets, so the bytes are an upper bound), and the first
// record's timestamp.
func sampleWindows(ctx context.Context, p *pipeline.Pipeline, windows []plan.Planned, stamp *catchup.Provenance) map[catchup.Partition]sample {
	out := make(map[catchup.Partition]sample, len(windows))
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, w := range windows {
		if w.Len() == 0 || w.Err != nil {
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			f, err := p.Source.Fetch(ctx, w.Partition, w.From, sampleBytes)
			if err != nil || len(f.Records) == 0 {
				return
			}
			var n int
			for i := range f.Records {
				n += f.Records[i].Size()
				if stamp != nil {
					pv := *stamp
					pv.Partition, pv.Offset = w.Partition, f.Records[i].Offset
					n += len(catchup.ProvenanceHeader) + catchup.ProvenanceLen(pv)
				}
			}
			mu.Lock()
			out[w.Partition] = sample{avgBytes: float64(n) / float64(len(f.Records)), first: f.Records[0].Timestamp}
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// topicRetention reads the retention of the topics of windows.
func topicRetention(ctx context.Context, p *pipeline.Pipeline, windows []plan.Planned) (map[string]plan.Retention, error) {
	var topics []string
	for _, w := range windows {
		topics = append(topics, w.Topic)
	}
	slices.Sort(topics)
	topics = slices.Compact(topics)
	configs, err := p.Source.Cluster().TopicConfigs(ctx, topics)
	if err != nil {
		return nil, err
	}
	out := make(map[string]plan.Retention, len(configs))
	for t, c := range configs {
		r, err := plan.TopicRetention(c.Values)
		if err != nil {
			return nil, fmt.Errorf("topic %s: %w", t, err)
		}
		out[t] = r
	}
	return out, nil
}
