package main

// The performance targets, each met or missed with its figure, against the best
// tuned peer.

import (
	"bufio"
	"fmt"
	"math"
	"slices"
	"strings"
)

func (r *results) writeTargets(w *bufio.Writer) {
	fmt.Fprintf(w, "## Targets\n\n")
	fmt.Fprintf(w, "| target | shape | measured | verdict |\n|---|---|--:|---|\n")
	row := func(target, shape, got, v string) { fmt.Fprintf(w, "| %s | %s | %s | %s |\n", target, shape, got, v) }
	for _, shape := range r.shapes() {
		c := r.okStep(shape, "catchup")
		if c == nil {
			continue
		}
		cs := r.summary(shape, "catchup")
		if f := r.summary(shape, "franzcopy"); f != nil {
			eq := cs.over(f, true)
			want := 2.0
			if strings.TrimSuffix(shape, "-rf3") == "100b" {
				want = 1.3
			}
			row(fmt.Sprintf("MB per CPU-s ≥ %.1f × the franz-go copier's, ranges apart", want), shape, eq.String(), decidedVerdict(eq, want))
			tq := cs.over(f, false)
			row("throughput ≥ the franz-go copier's", shape, tq.String(), decidedVerdict(tq, 1))
		}
		if m := r.summary(shape, "model"); m != nil {
			tq := cs.over(m, false)
			eq := cs.over(m, true)
			row("share of the model's throughput (information)", shape, againstModel(tq), "–")
			row("share of the model's MB per CPU-s (information)", shape, againstModel(eq), "–")
		}
		if c.rssKB > 0 {
			x := float64(c.rssKB) / 1024
			row("peak RSS ≤ 128 MiB at defaults", shape, f0(x)+" MiB"+r.copiesRSS(shape, "catchup", 128), verdict(x, 128, true, " MiB"))
		}
		if d := r.okStep(shape, "catchup-dynamodb"); d != nil && d.rssKB > 0 {
			x := float64(d.rssKB) / 1024
			row("peak RSS ≤ 128 MiB at defaults (DynamoDB store)", shape, f0(x)+" MiB", verdict(x, 128, true, " MiB"))
		}
		for _, s := range r.steps {
			x, ok := strings.CutPrefix(s.tool, "catchup-x")
			if s.shape != shape || !ok || !s.ok || c.rssKB <= 0 || s.rssKB <= 0 {
				continue
			}
			g := float64(s.rssKB)/float64(c.rssKB) - 1
			v := "**met**"
			if math.Abs(g) > 0.10 {
				v = fmt.Sprintf("**missed**: %+.0f%% instead of at most ±10%% (%.0f MiB beyond)", g*100,
					(math.Abs(float64(s.rssKB-c.rssKB))-0.10*float64(c.rssKB))/1024)
			}
			row(fmt.Sprintf("RSS of the %s× backlog within 10%% of the 1× backlog's", x), shape,
				fmt.Sprintf("%s vs %s MiB (%+.0f%%)", mib(s.rssKB), mib(c.rssKB), g*100), v)
		}
	}
	if win := r.window(); win != nil {
		row("a 1-record window completes in under 50 ms (engine: plan, copy, commit)", "window",
			fmt.Sprintf("%.0f ms (median of %d)", win.engineMedian, win.n), verdict(win.engineMedian, 50, true, " ms"))
	}
	fmt.Fprintln(w)
}

// decidedVerdict: met when the whole range is at or above want, missed
// when the whole range is below it, else not resolved by this run.
func decidedVerdict(q ratioRange, want float64) string {
	switch {
	case math.IsNaN(q.x):
		return "not measured"
	case math.IsNaN(q.lo) || q.single:
		return "not resolved (one run on a side)"
	case q.lo >= want:
		return "**met**"
	case q.hi < want:
		return fmt.Sprintf("**missed**: %s of %s", f2(q.x), f2(want))
	}
	return fmt.Sprintf("not resolved: the range %s–%s holds %s", f2(q.lo), f2(q.hi), f2(want))
}

// copiesRSS says, beside the median run's peak RSS, how the peaks of every
// copy of tool's runs spread and how many were above limit MiB: the verdict
// reads the median run, and a shape on the line shows here how often a
// copy crosses it. "" with fewer than two copies.
func (r *results) copiesRSS(shape, tool string, limit float64) string {
	var peaks []int64
	for _, s := range r.runs(shape, tool) {
		if s.ok {
			peaks = append(peaks, s.copyRSSKB...)
		}
	}
	if len(peaks) < 2 {
		return ""
	}
	over := 0
	for _, p := range peaks {
		if float64(p)/1024 > limit {
			over++
		}
	}
	hi := float64(slices.Max(peaks)) / 1024
	his := f0(hi)
	if hi > limit && his == f0(limit) { // 128.4 above 128 says so
		his = f1(hi)
	}
	return fmt.Sprintf(" (its %d copies: %s–%s MiB, %d above %s)", len(peaks), f0(float64(slices.Min(peaks))/1024), his, over, f0(limit))
}
