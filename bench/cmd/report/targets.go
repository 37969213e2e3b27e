package main

// The performance targets, each met or missed with its figure, against the best
// tuned peer.

import (
	"bufio"
	"fmt"
	"math"
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
		if ceil, which := r.ceiling(shape); which != "" {
			x := ratio(c.rate, ceil)
			v := verdict(x, 0.85, false, "")
			if strings.TrimSuffix(shape, "-rf3") != "1k" {
				v += " (the target is for 1 KiB records)"
			}
			row("throughput ≥ 0.85 × min(produce-only, fetch-only)", shape, f2(x)+" ×"+overCeiling(x), ceilingVerdict(x, v))
			if sc := r.sharedCeiling(shape); !math.IsNaN(sc) {
				y := ratio(c.rate, sc)
				row("(the same against the ceiling with shared cores, 1/(1/fetch-only + 1/produce-only))", shape, f2(y)+" ×"+overCeiling(y), ceilingVerdict(y, verdict(y, 0.85, false, "")))
			}
		}
		if b := r.okStep(shape, "fetch+produce"); b != nil {
			y := ratio(c.rate, b.rate)
			want := 0.9
			if strings.TrimSuffix(shape, "-rf3") != "1k" {
				want = 0.8
			}
			row(fmt.Sprintf("throughput ≥ %.1f × the true shared ceiling (fetch+produce at once)", want), shape, f2(y)+" ×"+overCeiling(y), ceilingVerdict(y, verdict(y, want, false, "")))
		}
		if b := r.okStep(shape, "fetch+produce"); b != nil {
			y := ratio(c.rate, b.rate)
			row("throughput ≥ 0.95 × the true shared ceiling", shape, f2(y)+" ×"+overCeiling(y), ceilingVerdict(y, verdict(y, 0.95, false, "")))
		}
		if bt := r.bestPeer(shape, func(s *step) float64 { return s.rate }); bt != nil {
			x := ratio(c.rate, bt.rate)
			row("throughput ≥ 2 × the best tuned peer ("+toolName(bt.tool)+")", shape, f2(x)+" ×", verdict(x, 2, false, ""))
		}
		if bc := r.bestPeer(shape, (*step).mbPerCPU); bc != nil {
			x := ratio(c.mbPerCPU(), bc.mbPerCPU())
			row("MB per CPU-s ≥ 2 × the best tuned peer ("+toolName(bc.tool)+")", shape, f2(x)+" ×", verdict(x, 2, false, ""))
		}
		if c.rssKB > 0 {
			x := float64(c.rssKB) / 1024
			row("peak RSS ≤ 128 MiB at defaults", shape, f0(x)+" MiB", verdict(x, 128, true, " MiB"))
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

// tunedPeers are the peers that keep what a copy must keep (partition,
// key, headers, timestamp), each at its best settings here: kcat, which
// keeps values only, and MirrorMaker 2 at its defaults are not among them.
var tunedPeers = []string{"franzcopy", "mm2-tuned", "mm2-eos", "mm1"}

// bestPeer returns the median run of the tuned peer with the highest by in
// shape, nil when none ran.
func (r *results) bestPeer(shape string, by func(*step) float64) *step {
	var best *step
	for _, t := range tunedPeers {
		if o := r.okStep(shape, t); o != nil && !math.IsNaN(by(o)) && (best == nil || by(o) > by(best)) {
			best = o
		}
	}
	return best
}
