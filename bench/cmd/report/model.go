package main

// The model copier as the per-byte limit, and the ratios between tools,
// each with the range its runs allow and decided only when the runs of the
// two tools do not overlap.

import (
	"bufio"
	"fmt"
	"math"
	"slices"
)

// summary is what the runs of one tool in one shape measured: the median
// and the range of records/s and of MB per CPU-second over the runs that
// succeeded (each run of a fast copier is several copies of the backlog,
// see bench/run.sh).
type summary struct {
	tool         string
	n, failed    int
	rate, rateLo float64
	rateHi       float64
	eff, effLo   float64 // MB per CPU-s
	effHi        float64
	median       *step // the run with the median records/s
	runs         []*step
}

func (r *results) summary(shape, tool string) *summary {
	runs := r.runs(shape, tool)
	s := &summary{tool: tool, runs: runs, median: medianRun(runs)}
	var rates, effs []float64
	for _, x := range runs {
		if !x.ok || x.rate <= 0 {
			s.failed++
			continue
		}
		rates = append(rates, x.rate)
		if e := x.mbPerCPU(); !math.IsNaN(e) {
			effs = append(effs, e)
		}
	}
	s.n = len(rates)
	if s.n == 0 {
		return nil
	}
	s.rate, s.rateLo, s.rateHi = stats(rates)
	s.eff, s.effLo, s.effHi = stats(effs)
	return s
}

// stats returns the median (of an even number, the mean of the middle
// two), the lowest and the highest of v; NaN for an empty v.
func stats(v []float64) (med, lo, hi float64) {
	if len(v) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	v = slices.Clone(v)
	slices.Sort(v)
	n := len(v)
	med = v[n/2]
	if n%2 == 0 {
		med = (v[n/2-1] + v[n/2]) / 2
	}
	return med, v[0], v[n-1]
}

// ratioRange is a / b of two tools' medians and the range the runs allow:
// the lowest of a over the highest of b to the highest of a over the
// lowest of b. It is decided when that range does not hold 1: every run of
// one was faster than every run of the other.
type ratioRange struct {
	x, lo, hi float64
	single    bool // one run on a side: its spread is unknown
}

func rangeRatio(a, aLo, aHi, b, bLo, bHi float64) ratioRange {
	return ratioRange{ratio(a, b), ratio(aLo, bHi), ratio(aHi, bLo), false}
}

// over is s / o in throughput, or with eff in MB per CPU-s.
func (s *summary) over(o *summary, eff bool) ratioRange {
	q := rangeRatio(s.rate, s.rateLo, s.rateHi, o.rate, o.rateLo, o.rateHi)
	if eff {
		q = rangeRatio(s.eff, s.effLo, s.effHi, o.eff, o.effLo, o.effHi)
	}
	q.single = s.n == 1 || o.n == 1
	return q
}

func (q ratioRange) decided() bool { return !q.single && (q.lo > 1 || q.hi < 1) }

// String is "1.23 (1.10–1.35)", with "decided" or "not resolved".
func (q ratioRange) String() string {
	if math.IsNaN(q.x) {
		return "–"
	}
	if math.IsNaN(q.lo) || q.single {
		return f2(q.x) + " (one run on a side: not resolved)"
	}
	v := "not resolved: the runs overlap"
	if q.decided() {
		v = "**decided**"
	}
	return fmt.Sprintf("%s (%s–%s) %s", f2(q.x), f2(q.lo), f2(q.hi), v)
}

// againstModel is the ratio of a copier to the model, or its refusal: a
// copier that is not below the model means the model is no limit on this
// run, and the ratio is not printed as a share of it.
func againstModel(q ratioRange) string {
	if math.IsNaN(q.x) {
		return "–"
	}
	if q.x > 1 || q.hi > 1 {
		return fmt.Sprintf("%s **⚠ NOT BELOW THE MODEL: the model is no limit here**", q)
	}
	return q.String()
}

// fastTools are the copiers measured in interleaved rounds, each step
// several copies long; the rest are measured once or over a window.
var fastTools = []string{"model", "catchup", "catchup-baseline", "franzcopy"}

// modelBreaches lists, for the top of the report, every fast copier whose
// median throughput or MB per CPU-s is not below the model's.
func (r *results) modelBreaches() []string {
	var out []string
	for _, shape := range r.shapes() {
		m := r.summary(shape, "model")
		if m == nil {
			continue
		}
		for _, t := range fastTools[1:] {
			s := r.summary(shape, t)
			if s == nil {
				continue
			}
			tq := s.over(m, false)
			eq := s.over(m, true)
			if tq.x > 1 || tq.hi > 1 {
				out = append(out, fmt.Sprintf("%s: %s / model throughput = %s", shape, r.label(t), tq))
			}
			if eq.x > 1 || eq.hi > 1 {
				out = append(out, fmt.Sprintf("%s: %s / model MB per CPU-s = %s", shape, r.label(t), eq))
			}
		}
	}
	return out
}

func (r *results) writeModelCheck(w *bufio.Writer) {
	b := r.modelBreaches()
	if len(b) == 0 {
		return
	}
	fmt.Fprintf(w, "> **⚠ A COPIER'S RUNS REACH THE MODEL — THE MODEL IS NO LIMIT ON THIS RUN.** ")
	for i, x := range b {
		if i > 0 {
			fmt.Fprintf(w, "; ")
		}
		fmt.Fprintf(w, "%s", x)
	}
	fmt.Fprintf(w, ". The model (bench/cmd/model) does the least work per byte a verifying copier can do; a copier at or above it means the model does more than it should, or the machine's load changed between the steps (see the ranges and the load column). These ratios are not shares of a limit.\n\n")
}

func (r *results) writeModel(w *bufio.Writer) {
	fmt.Fprintf(w, "## The model copier: the per-byte limit\n\n")
	fmt.Fprintf(w, "bench/cmd/model copies the backlog on the same brokers doing the least work per byte a verifying copier can do: ")
	fmt.Fprintf(w, "each byte is read once (one read of each fetch response into a recycled buffer), CRC-checked twice (the source batch's CRC-32C verified, ")
	fmt.Fprintf(w, "then computed over the batch written for the target), copied once (into the produce request: a partition's source batches merged into one batch, ")
	fmt.Fprintf(w, "each record's bytes copied through with its offset and timestamp deltas written anew) and written once. ")
	fmt.Fprintf(w, "Fetches carry every partition a broker leads at catchup's fetch_bytes (1 MiB each), produce requests many partitions up to catchup's producer.batch_bytes (1,000,000), ")
	fmt.Fprintf(w, "acks=all, 5 requests in flight per broker, one connection per broker and direction (franz-go's kmsg encoding for fetches, produce requests encoded in place). ")
	fmt.Fprintf(w, "No idempotent sequence numbers, retries, checkpoints or provenance: nothing a copier needs costs less per byte. ")
	fmt.Fprintf(w, "Each copier's throughput and MB per CPU-s are read as a share of the model's; a share at or above 1 is flagged, never shown as fine.\n\n")
	fmt.Fprintf(w, "A ratio between two tools is printed with its range: the lowest over the highest run to the highest over the lowest. ")
	fmt.Fprintf(w, "It is **decided** when that range does not hold 1 (every run of one beat every run of the other), else *not resolved*: within this run's noise.\n\n")
}

// writeRatios writes catchup's ratios over every other tool of shape.
func (r *results) writeRatios(w *bufio.Writer, shape string) {
	c := r.summary(shape, "catchup")
	if c == nil {
		return
	}
	fmt.Fprintf(w, "Ratios, catchup run (file store) over the other (medians; in brackets the range the runs allow):\n\n")
	fmt.Fprintf(w, "| catchup / | throughput | MB per CPU-s |\n|---|---|---|\n")
	for _, t := range r.tools(shape) {
		if t == "catchup" || t == "profile" || t == "producer-perf" || t == "consumer-perf" || t == "catchup-dynamodb" {
			continue
		}
		o := r.summary(shape, t)
		if o == nil {
			continue
		}
		tq := c.over(o, false)
		eq := c.over(o, true)
		tv, ev := tq.String(), eq.String()
		if t == "model" {
			tv, ev = againstModel(tq), againstModel(eq)
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", r.label(t), tv, ev)
	}
	fmt.Fprintln(w)
	if f := r.summary(shape, "franzcopy"); f != nil {
		if m := r.summary(shape, "model"); m != nil {
			fmt.Fprintf(w, "franz-go copier / model: throughput %s, MB per CPU-s %s.\n\n",
				againstModel(f.over(m, false)),
				againstModel(f.over(m, true)))
		}
	}
}

// verdict says whether got meets want (at least, or at most with atMost).
func verdict(got, want float64, atMost bool, unit string) string {
	if math.IsNaN(got) {
		return "not measured"
	}
	if (!atMost && got >= want) || (atMost && got <= want) {
		return "**met**"
	}
	if atMost {
		return fmt.Sprintf("**missed**: %.3g%s over, %.0f%% above the limit", got-want, unit, (got/want-1)*100)
	}
	return fmt.Sprintf("**missed**: %.3g%s short, %.0f%% below the target", want-got, unit, (1-got/want)*100)
}
