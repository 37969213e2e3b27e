package main

import (
	"context"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/kafkago"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/verify"
)

func (a *app) verifyCmd() *cobra.Command {
	var from, to string
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Compare the source with the target record for record, through the provenance headers",
		Long: `verify compares, for every partition of the selected pipelines, the copied
source range (from the source log start, or --from, to the checkpoint, or --to)
with the target: record counts and a digest of key, value, headers and
timestamp, matched through the provenance header. It records each partition's
result with its checkpoint (catchup status shows it) and exits 1 on any
mismatch. Recording needs no lease: with DynamoDB, verify may run beside a
run; with the file store it locks the pipeline, as run does.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := a.load(cmd.Context())
			if err != nil {
				return err
			}
			ps, err := a.pipelines(f)
			if err != nil {
				return err
			}
			ok := true
			for _, pc := range ps {
				pok, err := a.verify(cmd.Context(), f, pc, from, to)
				if err != nil {
					return fmt.Errorf("pipeline %s: %w", pc.Name, err)
				}
				ok = pok && ok
			}
			if !ok {
				return errNotDone
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "first source offset or RFC 3339 time to compare (default: the source log start)")
	cmd.Flags().StringVar(&to, "to", "", "source offset or RFC 3339 time to stop before (default: the checkpoint)")
	return cmd
}

// verify compares pipeline pc's source with its target, prints the table,
// then records every partition's result in the store. It reports whether
// every partition matched.
func (a *app) verify(ctx context.Context, f *config.File, pc *config.Pipeline, from, to string) (bool, error) {
	if !pc.ProvenanceEnabled() {
		return false, usageError{fmt.Errorf("verify matches records through the provenance header, which pipeline %s turns off", pc.Name)}
	}
	p, err := pipeline.Open(ctx, f, pc, pipeline.Options{Log: a.logger()})
	if err != nil {
		return false, err
	}
	defer p.Close()
	res, err := compare(ctx, p, pc, from, to)
	if err != nil {
		return false, err
	}
	at := time.Now()
	ok := printVerify(a, pc.Name, res)
	for _, r := range res {
		v := checkpoint.Verification{
			At: at, From: r.From, To: r.To, Source: r.Source, Matched: r.Matched,
			Missing: r.Missing, Duplicated: r.Duplicated, Differing: r.Differing, OutOfOrder: r.OutOfOrder, First: r.First,
		}
		if err := p.Store.RecordVerification(ctx, pc.Name, r.Partition, v); err != nil {
			return ok, err
		}
	}
	return ok, nil
}

// compare runs verify.Partition on every partition of pc's topics.
func compare(ctx context.Context, p *pipeline.Pipeline, pc *config.Pipeline, from, to string) ([]verify.Result, error) {
	dst, err := kafkago.NewSource(pc.Target, "read_uncommitted", nil)
	if err != nil {
		return nil, err
	}
	defer dst.Close()
	sv, err := p.Engine.Survey(ctx)
	if err != nil {
		return nil, err
	}
	marks := sv.Offsets
	parts := make([]catchup.Partition, len(marks))
	for i, m := range marks {
		parts[i] = m.Partition
	}
	next := map[catchup.Partition]int64{}
	for _, c := range sv.Checkpoints {
		if c.Exists {
			next[c.Partition] = c.Next
		}
	}
	fromOff, err := bound(ctx, p, parts, from)
	if err != nil {
		return nil, err
	}
	toOff, err := bound(ctx, p, parts, to)
	if err != nil {
		return nil, err
	}
	var out []verify.Result
	for _, m := range marks {
		lo, hi := m.LogStart, next[m.Partition]
		if v, ok := fromOff[m.Partition]; ok {
			lo = max(lo, v)
		}
		if v, ok := toOff[m.Partition]; ok {
			hi = min(v, m.HighWatermark)
		}
		if hi <= lo {
			out = append(out, verify.Result{Partition: m.Partition, From: lo, To: max(lo, hi)})
			continue
		}
		tp := catchup.Partition{Topic: pc.MapTopic(m.Topic), Partition: m.Partition.Partition}
		r, err := verify.Partition(ctx, p.Source, dst, m.Partition, tp, lo, hi, verify.Options{Cluster: pc.Source.Name, FetchBytes: pc.FetchBytes})
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// bound resolves a --from or --to value: an offset for every partition, or a
// time resolved per partition; empty gives no bound.
func bound(ctx context.Context, p *pipeline.Pipeline, parts []catchup.Partition, v string) (map[catchup.Partition]int64, error) {
	if v == "" {
		return nil, nil
	}
	if off, err := strconv.ParseInt(v, 10, 64); err == nil && off >= 0 {
		out := map[catchup.Partition]int64{}
		for _, q := range parts {
			out[q] = off
		}
		return out, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return nil, usageError{fmt.Errorf("%q: use an offset or an RFC 3339 time", v)}
	}
	return p.Source.OffsetsForTime(ctx, parts, t)
}

// printVerify prints the table and reports whether every partition matched.
func printVerify(a *app, name string, res []verify.Result) bool {
	fmt.Fprintf(a.out, "pipeline %s\n", name)
	tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tFROM\tTO\tSOURCE\tMATCHED\tMISSING\tDUPLICATED\tDIFFERING\tOUT_OF_ORDER\tFIRST_PROBLEM")
	ok := true
	var total, matched int64
	for _, r := range res {
		ok = ok && r.OK()
		total += r.Source
		matched += r.Matched
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", r.Topic, r.Partition.Partition, r.From, r.To,
			r.Source, r.Matched, r.Missing, r.Duplicated, r.Differing, r.OutOfOrder, r.First)
	}
	tw.Flush()
	verdict := "exact copy"
	if !ok {
		verdict = "MISMATCH"
	}
	fmt.Fprintf(a.out, "%s: %d of %d source records matched\n", verdict, matched, total)
	return ok
}
