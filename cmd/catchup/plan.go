package main

import (
	"context"
	"fmt"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/plan"
)

// sampleBytes is how much of each window plan reads to estimate record sizes.
const sampleBytes = 64 << 10

func (a *app) planCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "plan",
		Short: "Print the windows a run would copy now, without copying",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			f, err := a.load()
			if err != nil {
				return err
			}
			ps, err := a.pipelines(f)
			if err != nil {
				return err
			}
			for _, pc := range ps {
				p, err := pipeline.Open(ctx, f, pc, pipeline.Options{Log: a.logger()})
				if err != nil {
					return fmt.Errorf("pipeline %s: %w", pc.Name, err)
				}
				windows, err := p.Engine.Plan(ctx)
				if err == nil {
					a.printPlan(pc.Name, windows, sampleSizes(ctx, p, windows))
				}
				p.Close()
				if err != nil {
					return fmt.Errorf("pipeline %s: %w", pc.Name, err)
				}
			}
			return nil
		},
	}
}

func (a *app) printPlan(name string, windows []plan.Planned, avg map[catchup.Partition]float64) {
	fmt.Fprintf(a.out, "pipeline %s\n", name)
	tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tFROM\tTO\tRECORDS\tEST_BYTES\tNOTE")
	var records, bytes int64
	for _, w := range windows {
		note := ""
		switch {
		case w.Err != nil:
			note = w.Err.Error()
		case w.Gap != nil:
			note = fmt.Sprintf("gap [%d,%d) will be skipped", w.Gap.From, w.Gap.To)
		}
		est := int64(float64(w.Len()) * avg[w.Partition])
		records += w.Len()
		bytes += est
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\n", w.Topic, w.Partition.Partition, w.From, w.To, w.Len(), humanBytes(est), note)
	}
	tw.Flush()
	fmt.Fprintf(a.out, "%d partitions, %d records, about %s\n", len(windows), records, humanBytes(bytes))
}

// sampleSizes estimates the average record size of each window by reading
// its first records; RECORDS counts offsets, so it is an upper bound.
func sampleSizes(ctx context.Context, p *pipeline.Pipeline, windows []plan.Planned) map[catchup.Partition]float64 {
	out := make(map[catchup.Partition]float64, len(windows))
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, w := range windows {
		if w.Len() == 0 || w.Err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			f, err := p.Source.Fetch(ctx, w.Partition, w.From, sampleBytes)
			if err != nil || len(f.Records) == 0 {
				return
			}
			var n int
			for i := range f.Records {
				n += f.Records[i].Size()
			}
			mu.Lock()
			out[w.Partition] = float64(n) / float64(len(f.Records))
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}
