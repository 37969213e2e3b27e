package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/verify"
)

func (a *app) verifyCmd() *cobra.Command {
	var fromFlag, toFlag string
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Compare the source with the target record for record, through the provenance headers",
		Long: `verify compares, for every partition of the selected pipelines, the copied
source range (from where the pipeline began copying the partition, or --from,
to the checkpoint, or --to) with the whole target partition: each copy is
matched to its source record by the source offset in its provenance header,
whatever its order, and compared by a digest of key, value, headers and
timestamp. It counts, per partition: MATCHED, OUT_OF_ORDER (an equal copy after
a copy of a later source offset), MISSING, LOOP_SKIPPED (records that came from
the target cluster, which loop prevention does not copy), DIFFERING,
DUPLICATED, FOREIGN (target records that are not copies of the partition) and
OUTSIDE (copies from outside the range); --json adds REPLACED (records whose
only copies differ) and gives the sums they add up to. A partition whose last commit
recorded an error and left lag is STUCK, with how far behind. It records each
partition's result with its checkpoint (catchup status shows it) and exits 1
on any mismatch or stuck partition. Recording needs no lease: with DynamoDB,
verify may run beside a run; with the file store it locks the pipeline, as
run does. Checkpoints written before catchup recorded where copying began are
compared from the source log start.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Before anything connects: a bad range is bad usage, and an
			// empty one would store a verification of nothing as exact.
			from, to, err := verifyRange(fromFlag, toFlag)
			if err != nil {
				return err
			}
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
	cmd.Flags().StringVar(&fromFlag, "from", "", "first source offset or RFC 3339 time to compare (default: where copying began, else the source log start)")
	cmd.Flags().StringVar(&toFlag, "to", "", "source offset or RFC 3339 time to stop before (default: the checkpoint)")
	a.addJSONFlag(cmd.Flags(), "print one JSON document (docs/json.md)")
	return cmd
}

// verify compares pipeline pc's source with its target, prints the table,
// then records every partition's result in the store. It reports whether
// every partition matched.
func (a *app) verify(ctx context.Context, f *config.File, pc *config.Pipeline, from, to rangeBound) (bool, error) {
	if !pc.ProvenanceEnabled() {
		return false, usageError{fmt.Errorf("verify matches records through the provenance header, which pipeline %s turns off", pc.Name)}
	}
	log := a.logger()
	p, err := pipeline.Open(ctx, f, pc, pipeline.Options{Log: log})
	if err != nil {
		return false, err
	}
	defer p.Close()
	res, err := a.compare(ctx, p, pc, from, to, log)
	if err != nil {
		return false, err
	}
	at := time.Now()
	var ok bool
	if a.jsonOut {
		doc := verifyJSONOf(pc, res)
		ok = doc.OK
		a.addJSON(doc)
	} else {
		ok = printVerify(a, pc.Name, res)
	}
	for _, r := range res {
		v := r.Verification
		v.At = at
		if err := p.Store.RecordVerification(ctx, pc.Name, r.Partition, v); err != nil {
			return ok, err
		}
	}
	return ok, nil
}

// compare runs verify.Partition on every partition of pc's topics, with
// progress (records, rate, ETA) on a terminal and a log line every 10
// seconds elsewhere.
func (a *app) compare(ctx context.Context, p *pipeline.Pipeline, pc *config.Pipeline, from, to rangeBound, log *slog.Logger) ([]verify.Result, error) {
	dst, err := pipeline.ConnectReader(pc.Target, "read_uncommitted")
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
	opts := verify.Options{Cluster: pc.Source.Name, FetchBytes: pc.FetchBytes}
	if pc.LoopPreventionEnabled() {
		opts.LoopCluster = pc.Target.Name
	}
	// The ranges first, for the progress display's total.
	type span struct{ lo, hi int64 }
	spans := make([]span, len(marks))
	var total int64
	for i, m := range marks {
		cp := sv.Checkpoints[m.Partition]
		lo, hi := m.LogStart, next[m.Partition]
		if cp.Start != nil {
			lo = max(lo, *cp.Start) // records before the log start are gone
		}
		if v, ok := fromOff[m.Partition]; ok {
			lo = max(m.LogStart, v)
		}
		if v, ok := toOff[m.Partition]; ok {
			hi = min(v, m.HighWatermark)
		}
		spans[i] = span{lo, hi}
		total += max(0, hi-lo)
	}
	if total == 0 && len(marks) > 0 && (from.set || to.set) {
		// Compared, every partition would come out an "exact copy" of
		// nothing, and be recorded as verified.
		return nil, usageError{fmt.Errorf("--from and --to leave no record to compare on any of the %d partitions "+
			"(the range stops at each partition's checkpoint and high watermark and starts no lower than its log start); "+
			"run catchup status to see them, and give a range that holds records, or leave the flags out", len(marks))}
	}
	prog := a.newProgress(pc.Name, log)
	prog.stop = prog.show(total)
	defer prog.finish()
	opts.OnSource = prog.add
	var out []verify.Result
	for i, m := range marks {
		cp := sv.Checkpoints[m.Partition]
		lo, hi := spans[i].lo, spans[i].hi
		r := verify.Result{Partition: m.Partition}
		r.From, r.To = lo, max(lo, hi)
		if cp.Exists || hi > lo {
			// Even an empty range reads the target of a partition copied
			// before: what it holds is counted (foreign, outside). A
			// partition never copied may have no target partition yet.
			tp := catchup.Partition{Topic: pc.MapTopic(m.Topic), Partition: m.Partition.Partition}
			if r, err = verify.Partition(ctx, p.Source, dst, m.Partition, tp, lo, hi, opts); err != nil {
				return nil, err
			}
		}
		end := m.HighWatermark
		if pc.Isolation == "read_committed" {
			end = m.LastStable
		}
		if cp.Exists && cp.LastError != "" && cp.Next < end {
			// Stuck behind a record it cannot copy: what was copied may
			// match, but the partition is not caught up and will not be.
			r.Behind, r.Stuck = end-cp.Next, cp.LastError
		}
		out = append(out, r)
	}
	return out, nil
}

// rangeBound is verify's --from or --to: a source offset, or a time
// resolved per partition. The zero rangeBound is no bound.
type rangeBound struct {
	set    bool
	isTime bool
	offset int64     // when !isTime
	at     time.Time // when isTime: resolved per partition
}

// parseBound reads the value v of flag: empty (no bound), an offset or an
// RFC 3339 time.
func parseBound(flag, v string) (rangeBound, error) {
	if v == "" {
		return rangeBound{}, nil
	}
	if off, err := strconv.ParseInt(v, 10, 64); err == nil && off >= 0 {
		return rangeBound{set: true, offset: off}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return rangeBound{}, usageError{fmt.Errorf("%s %q: use an offset (0 or more) or an RFC 3339 time (2026-11-01T00:00:00Z)", flag, v)}
	}
	return rangeBound{set: true, isTime: true, at: t}, nil
}

// verifyRange reads --from and --to, and refuses a range that holds
// nothing when both are offsets or both are times (an offset and a time
// are compared only per partition, once the time is resolved).
func verifyRange(from, to string) (lo, hi rangeBound, err error) {
	if lo, err = parseBound("--from", from); err != nil {
		return lo, hi, err
	}
	if hi, err = parseBound("--to", to); err != nil {
		return lo, hi, err
	}
	if !lo.set || !hi.set || lo.isTime != hi.isTime {
		return lo, hi, nil
	}
	if empty := !lo.isTime && hi.offset <= lo.offset || lo.isTime && !hi.at.After(lo.at); empty {
		return lo, hi, usageError{fmt.Errorf("--to %s is not after --from %s: the range [--from, --to) holds no record; "+
			"give a --to above --from", to, from)}
	}
	return lo, hi, nil
}

// bound resolves b for every partition of parts; the zero b gives no bound.
func bound(ctx context.Context, p *pipeline.Pipeline, parts []catchup.Partition, b rangeBound) (map[catchup.Partition]int64, error) {
	if !b.set {
		return nil, nil
	}
	if !b.isTime {
		out := map[catchup.Partition]int64{}
		for _, q := range parts {
			out[q] = b.offset
		}
		return out, nil
	}
	return p.Source.OffsetsForTime(ctx, parts, b.at)
}

// printVerify prints the table and reports whether every partition matched
// and none is stuck.
func printVerify(a *app, name string, res []verify.Result) bool {
	fmt.Fprintf(a.out, "pipeline %s\n", name)
	tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tFROM\tTO\tSOURCE\tMATCHED\tMISSING\tDUPLICATED\tDIFFERING\tOUT_OF_ORDER\t"+
		"LOOP_SKIPPED\tFOREIGN\tOUTSIDE\tTARGET\tFIRST_PROBLEM")
	ok := true
	var total, matched int64
	var stuck []verify.Result
	for _, r := range res {
		ok = ok && r.OK()
		total += r.Source
		matched += r.Matched
		if r.Stuck != "" {
			stuck = append(stuck, r)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", r.Topic, r.Partition.Partition, r.From, r.To,
			r.Source, r.Matched, r.Missing, r.Duplicated, r.Differing, r.OutOfOrder, r.LoopSkipped, r.Foreign, r.Outside, r.Target, r.First)
	}
	tw.Flush()
	for _, r := range stuck {
		fmt.Fprintf(a.out, "STUCK %s: the checkpoint is %d offsets behind the source end; last error: %s\n", r.Partition, r.Behind, r.Stuck)
	}
	fmt.Fprintf(a.out, "%s: %d of %d source records matched\n", verdict(res), matched, total)
	return ok
}

// verdict is "MISMATCH" if a partition's copied range is not an exact copy,
// else "STUCK" if a partition is stuck, else "exact copy".
func verdict(res []verify.Result) string {
	stuck := false
	for _, r := range res {
		v := r.Verification
		if v.Stuck != "" {
			stuck, v.Stuck = true, ""
		}
		if !v.OK() {
			return "MISMATCH"
		}
	}
	if stuck {
		return "STUCK"
	}
	return "exact copy"
}

// verifyJSONT is one pipeline of catchup verify --json.
type verifyJSONT struct {
	Pipeline   string                `json:"pipeline"`
	OK         bool                  `json:"ok"`      // every partition an exact copy, none stuck: exit 0
	Verdict    string                `json:"verdict"` // "exact copy", "MISMATCH" or "STUCK", as the table's last line
	Partitions []verifyPartitionJSON `json:"partitions"`
}

// verifyPartitionJSON is one partition's verification.
type verifyPartitionJSON struct {
	Topic       string `json:"topic"`
	Partition   int32  `json:"partition"`
	TargetTopic string `json:"target_topic"`
	verificationJSON
}

// verifyJSONOf is what verify --json prints for pipeline pc.
func verifyJSONOf(pc *config.Pipeline, res []verify.Result) verifyJSONT {
	out := verifyJSONT{Pipeline: pc.Name, OK: true, Verdict: verdict(res), Partitions: []verifyPartitionJSON{}}
	for _, r := range res {
		out.OK = out.OK && r.OK()
		out.Partitions = append(out.Partitions, verifyPartitionJSON{Topic: r.Topic, Partition: r.Partition.Partition,
			TargetTopic: pc.MapTopic(r.Topic), verificationJSON: *verificationJSONOf(r.Verification)})
	}
	return out
}
