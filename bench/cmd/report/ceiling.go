package main

// The ceilings, the ratios to them (refused above 1), and the side-by-side
// baseline tables.

import (
	"bufio"
	"cmp"
	"fmt"
	"math"
	"strings"
)

func (r *results) ceiling(shape string) (rate float64, which string) {
	f, p := r.okStep(shape, "fetch-only"), r.okStep(shape, "produce-only")
	switch {
	case f != nil && p != nil:
		if f.rate < p.rate {
			return f.rate, "fetch-only"
		}
		return p.rate, "produce-only"
	case f != nil:
		return f.rate, "fetch-only"
	case p != nil:
		return p.rate, "produce-only"
	}
	return math.NaN(), ""
}

// sharedCeiling is the rate of a copy whose fetch and produce each run at
// their ceiling but take turns on the same cores: 1/(1/fetch + 1/produce).
// On a machine where the brokers and the replicator share few cores (as
// here: 2), this, not min(), is what a copy can reach.
func (r *results) sharedCeiling(shape string) float64 {
	f, p := r.okStep(shape, "fetch-only"), r.okStep(shape, "produce-only")
	if f == nil || p == nil {
		return math.NaN()
	}
	return 1 / (1/f.rate + 1/p.rate)
}

// overCeiling is what a ratio of the copy over a ceiling gets after it:
// nothing up to 1, and above 1 a loud mark, because a copy cannot beat the
// same brokers doing the same work with one of its two ends taken away.
func overCeiling(x float64) string {
	if math.IsNaN(x) || x <= 1 {
		return ""
	}
	return " **⚠ ABOVE 1: NOT A BOUND**"
}

// ceilingVerdict is v, the verdict on a ratio x of the copy over a
// ceiling, unless x is above 1: then no target is met, the figure is refused.
func ceilingVerdict(x float64, v string) string {
	if x > 1 {
		return "**refused**: above 1, the ceiling did not bound the copy"
	}
	return v
}

// ceilingRatios returns, for each shape in order, catchup's throughput over
// each of the ceilings measured: min(fetch-only, produce-only), the one
// computed for shared cores, and fetch+produce at once.
func (r *results) ceilingRatios() []ceilingRatio {
	var out []ceilingRatio
	for _, shape := range r.shapes() {
		c := r.okStep(shape, "catchup")
		if c == nil {
			continue
		}
		if ceil, which := r.ceiling(shape); which != "" {
			out = append(out, ceilingRatio{shape, "min(fetch-only, produce-only) = " + which, ratio(c.rate, ceil)})
		}
		if sc := r.sharedCeiling(shape); !math.IsNaN(sc) {
			out = append(out, ceilingRatio{shape, "1/(1/fetch-only + 1/produce-only)", ratio(c.rate, sc)})
		}
		if b := r.okStep(shape, "fetch+produce"); b != nil {
			out = append(out, ceilingRatio{shape, "fetch+produce at once", ratio(c.rate, b.rate)})
		}
	}
	return out
}

// ceilingRatio is catchup's throughput over one ceiling of one shape.
type ceilingRatio struct {
	shape, ceiling string
	x              float64
}

// writeCeilingCheck refuses, at the top of the report, every ceiling ratio
// above 1: such a figure says nothing about how close catchup is to the
// machine's limit, and whoever reads the report must not take it for one.
func (r *results) writeCeilingCheck(w *bufio.Writer) {
	var bad []string
	for _, c := range r.ceilingRatios() {
		if c.x > 1 {
			bad = append(bad, fmt.Sprintf("%s: catchup / %s = %s", c.shape, c.ceiling, f2(c.x)))
		}
	}
	if len(bad) == 0 {
		return
	}
	fmt.Fprintf(w, "> **⚠ CEILING RATIOS ABOVE 1 — THIS RUN'S CEILINGS DID NOT BOUND THE COPY.** %s. ", strings.Join(bad, "; "))
	fmt.Fprintf(w, "A copy cannot beat its own engine with one end taken away on the same brokers and cores: either the machine's load changed between the steps ")
	fmt.Fprintf(w, "(compare the runs' ranges and the load column) or a ceiling no longer measures catchup's code path (bench/cmd/ceiling). ")
	fmt.Fprintf(w, "Do not quote these ratios as \"how close catchup is to the limit\".\n\n")
}

// writeCeilings says what each ceiling measures and why it bounds the copy.
func (r *results) writeCeilings(w *bufio.Writer) {
	fmt.Fprintf(w, "## The ceilings, and why each bounds the copy\n\n")
	fmt.Fprintf(w, "bench/cmd/ceiling runs `replicate.Engine`, the engine `catchup run` runs, with the settings `internal/pipeline` gives it from the same configuration file ")
	fmt.Fprintf(w, "(fetch size, parallelism, producer batch limits and acks, provenance, isolation), with one end of the copy taken away:\n\n")
	fmt.Fprintf(w, "- **fetch-only**: the engine reads the backlog through `kafkago.Source` (the same fetch decoder and CRC checks, request sizes, one fetch ahead per partition, buffer recycling) ")
	fmt.Fprintf(w, "into a sink that acknowledges every record at once. A copy fetches the same bytes in the same requests and produces them besides: it cannot be faster.\n")
	fmt.Fprintf(w, "- **produce-only**: the backlog is first read into memory (not timed); the engine then copies it from memory through `kafkago.Target` (the same encoder, provenance header, request sizes, acks). ")
	fmt.Fprintf(w, "A copy sends the same requests and fetches besides: it cannot be faster.\n")
	fmt.Fprintf(w, "- **fetch+produce at once**: the two engines above at once in one process, timed until both are done. It is all the work of a copy on the same cores, ")
	fmt.Fprintf(w, "without the coupling (a record produced only after it was fetched) and with checkpoints in memory: where the brokers and catchup share the cores (here %s), this, not min(), bounds the copy.\n", cmp.Or(r.meta["cores"], "few"))
	fmt.Fprintf(w, "- 1/(1/fetch-only + 1/produce-only) is what the two would reach taking turns on the cores; a guide, not a bound (they overlap in part).\n")
	fmt.Fprintf(w, "- **Kafka ProducerPerformance / ConsumerPerformance** (reference, at their best settings: 256 KiB batches with 10 ms linger and acks=all; 1 MiB fetches): the brokers' own limits with Kafka's Java client. ")
	fmt.Fprintf(w, "They bound nothing catchup does (another client, another process), but say how far the brokers could go.\n\n")
	fmt.Fprintf(w, "The report marks any ratio of catchup over a ceiling above 1 with **⚠ ABOVE 1: NOT A BOUND**, and lists them at the top.\n\n")
}

func (r *results) writeRatios(w *bufio.Writer, shape string) {
	c := r.okStep(shape, "catchup")
	if c == nil {
		return
	}
	fmt.Fprintf(w, "Ratios (catchup run, file store, over the other):\n\n")
	fmt.Fprintf(w, "| catchup / | throughput | MB per CPU-s | peak RSS |\n|---|--:|--:|--:|\n")
	if ceil, which := r.ceiling(shape); which != "" {
		x := ratio(c.rate, ceil)
		fmt.Fprintf(w, "| ceiling = min(fetch-only, produce-only) = %s, %s rec/s | %s%s | | |\n", which, thousands(ceil), f2(x), overCeiling(x))
	}
	if sc := r.sharedCeiling(shape); !math.IsNaN(sc) {
		x := ratio(c.rate, sc)
		fmt.Fprintf(w, "| ceiling with fetch and produce sharing the cores = 1/(1/fetch-only + 1/produce-only), %s rec/s | %s%s | | |\n", thousands(sc), f2(x), overCeiling(x))
	}
	if b := r.okStep(shape, "fetch+produce"); b != nil {
		x := ratio(c.rate, b.rate)
		fmt.Fprintf(w, "| measured fetch+produce at once (ceiling both), %s rec/s | %s%s | %s | |\n", thousands(b.rate), f2(x), overCeiling(x), f2(ratio(c.mbPerCPU(), b.mbPerCPU())))
	}
	for _, t := range []string{"franzcopy", "mm2", "mm2-tuned", "mm2-eos", "mm1", "kcat", "catchup-dynamodb"} {
		o := r.okStep(shape, t)
		if o == nil {
			continue
		}
		rss := "–"
		if c.rssKB > 0 && o.rssKB > 0 {
			rss = f2(float64(c.rssKB) / float64(o.rssKB))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", toolName(t), f2(ratio(c.rate, o.rate)), f2(ratio(c.mbPerCPU(), o.mbPerCPU())), rss)
		if strings.HasPrefix(t, "mm") && !math.IsNaN(o.steadyRate) {
			fmt.Fprintf(w, "| %s, both after their first record (start-up left out) | %s | %s | |\n", toolName(t),
				f2(ratio(c.steadyRate, o.steadyRate)), f2(ratio(c.mbPerCPU(), o.steadyMB/o.steadyCPU)))
		}
	}
	fmt.Fprintln(w)
}

// writeBaseline compares this commit's median runs with the baseline's, step
// by step.
func (r *results) writeBaseline(w *bufio.Writer, shape string) {
	b := r.meta["baseline"]
	if b == "" {
		return
	}
	head := false
	for _, t := range []string{"fetch-only", "produce-only", "catchup"} {
		cr, br := r.runs(shape, t), r.runs(shape, t+"-baseline")
		c, o := medianRun(cr), medianRun(br)
		if c == nil || o == nil {
			continue
		}
		if !head {
			fmt.Fprintf(w, "This commit / baseline %s (median runs; above 1 is faster or leaner for throughput and MB per CPU-s, heavier for peak RSS and broker CPU-s):\n\n", b)
			fmt.Fprintf(w, "| step | throughput | MB per CPU-s | peak RSS | broker CPU-s | records/s of the runs |\n|---|--:|--:|--:|--:|---|\n")
			head = true
		}
		rss := "–"
		if c.rssKB > 0 && o.rssKB > 0 {
			rss = f2(float64(c.rssKB) / float64(o.rssKB))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", strings.ReplaceAll(toolName(t), "**", ""),
			f2(ratio(c.rate, o.rate)), f2(ratio(c.mbPerCPU(), o.mbPerCPU())), rss, f2(ratio(c.brokerCPU, o.brokerCPU)), apart(cr, br))
	}
	if head {
		fmt.Fprintf(w, "\nBroker CPU-s is the whole step's, so it includes recreating the target topic and, for produce-only, reading the backlog into memory before the timed part.\n\n")
	}
}

// apart says whether the records/s of this commit's runs and of the
// baseline's overlap: when they do, the difference of the medians is within
// what the machine's noise did in this run.
func apart(this, base []*step) string {
	tlo, thi := rangeOf(this)
	blo, bhi := rangeOf(base)
	switch {
	case math.IsInf(tlo, 0) || math.IsInf(blo, 0):
		return "–"
	case len(this) < 2 || len(base) < 2:
		return "one run each: within noise unless beyond ±20%"
	case tlo > bhi:
		return "apart: this commit faster in every run"
	case thi < blo:
		return "apart: the baseline faster in every run"
	}
	return "overlap: within this run's noise"
}

// verdict says whether got meets want (got >= want, or <= with atMost) and,
// if not, by how much it misses, in unit.
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
