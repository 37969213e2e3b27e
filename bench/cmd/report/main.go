// Command report turns the results folder of bench/run.sh into
// docs/benchmarks.md:
//
//	report -in bench/out/<run> -o docs/benchmarks.md
//
// It reads meta.env (machine, versions, settings, timings) and one folder
// per step under steps/ (step.env, the tools' own outputs, /usr/bin/time
// lines, the target poller's wait.json), and writes the tables, the ratios
// against the performance targets, the profile and the exact commands.
//
// A tool that ran more than once in a shape (BENCH_REPEAT) is shown, and
// compared, by its median run; a tool named TOOL-baseline is TOOL run with
// the binaries of the commit meta.env names as baseline.
package main

import (
	"bufio"
	"cmp"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

func main() {
	in := flag.String("in", "", "results folder of bench/run.sh (required)")
	out := flag.String("o", "", "report file (default stdout)")
	scale := flag.String("scale", "", "bench/SCALE.md, whose tables (make bench-scale) the report summarises")
	flag.Parse()
	if *in == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: report -in DIR [-o FILE]")
		os.Exit(2)
	}
	r, err := load(*in)
	if err == nil {
		r.scalePath = *scale
		r.scaleLink = scaleLink(*out, *scale)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
	var w io.Writer = os.Stdout
	var f *os.File
	if *out != "" {
		if f, err = os.Create(*out); err != nil {
			fmt.Fprintln(os.Stderr, "report:", err)
			os.Exit(1)
		}
		w = f
	}
	bw := bufio.NewWriter(w)
	r.write(bw)
	err = bw.Flush()
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

// scaleLink is the scale report's address as a link in the report written to
// out: relative to out's folder, so that it resolves wherever the two files
// sit (docs/benchmarks.md links ../bench/SCALE.md).
func scaleLink(out, scale string) string {
	if scale == "" {
		return ""
	}
	from := "."
	if out != "" {
		from = filepath.Dir(out)
	}
	absFrom, err1 := filepath.Abs(from)
	absScale, err2 := filepath.Abs(scale)
	if err1 != nil || err2 != nil {
		return filepath.ToSlash(scale)
	}
	rel, err := filepath.Rel(absFrom, absScale)
	if err != nil {
		return filepath.ToSlash(absScale)
	}
	return filepath.ToSlash(rel)
}

// ---------------------------------------------------------------- figures

func (s *step) mb() float64 { return float64(s.records*s.valueBytes) / 1e6 }

func (s *step) mbPerCPU() float64 {
	if s.cpu <= 0 {
		return math.NaN()
	}
	return s.mb() / s.cpu
}

func (r *results) find(shape, tool string) *step {
	for _, s := range r.steps {
		if s.shape == shape && s.tool == tool {
			return s
		}
	}
	return nil
}

func (r *results) shapes() []string {
	var out []string
	for _, s := range r.steps {
		if s.shape != "window" && s.shape != "latency" && !slices.Contains(out, s.shape) {
			out = append(out, s.shape)
		}
	}
	return out
}

// ---------------------------------------------------------------- writing

var toolNames = map[string]string{
	"model":            "model copier (bench/cmd/model), the per-byte limit",
	"producer-perf":    "Kafka ProducerPerformance (reference)",
	"consumer-perf":    "Kafka ConsumerPerformance (reference)",
	"catchup":          "**catchup run**, file store",
	"catchup-dynamodb": "**catchup run**, DynamoDB store",
	"mm2":              "MirrorMaker 2 (dedicated), defaults",
	"mm2-tuned":        "MirrorMaker 2 (dedicated), tuned",
	"mm2-eos":          "MirrorMaker 2 (dedicated), tuned, exactly-once",
	"franzcopy":        "franz-go copier (bench/cmd/franzcopy)",
	"mm1":              "MirrorMaker 1",
	"kcat":             "kcat -C \\| kcat -P",
	"profile":          "catchup run + profiler",
}

func toolName(t string) string {
	if n, ok := toolNames[t]; ok {
		return n
	}
	if x, ok := strings.CutPrefix(t, "catchup-x"); ok {
		return "**catchup run**, file store, " + x + "× backlog"
	}
	return t
}

// label is toolName, and for TOOL-baseline TOOL's name (not bold: it is not
// the commit under test) with the baseline's short hash.
func (r *results) label(t string) string {
	if kind, ok := strings.CutSuffix(t, "-baseline"); ok {
		return strings.ReplaceAll(toolName(kind), "**", "") + " — baseline " + cmp.Or(r.meta["baseline"], "(unknown commit)")
	}
	return toolName(t)
}

func f0(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return fmt.Sprintf("%.0f", v)
}

func f1(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return fmt.Sprintf("%.1f", v)
}

func f2(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return fmt.Sprintf("%.2f", v)
}

func thousands(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	s := strconv.FormatInt(int64(math.Round(v)), 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func mib(kb int64) string {
	if kb < 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f", float64(kb)/1024)
}

func (r *results) write(w *bufio.Writer) {
	m := r.meta
	fmt.Fprintf(w, "# Benchmarks\n\n")
	fmt.Fprintf(w, "Generated by `make bench` (`bench/run.sh`, report by `bench/cmd/report`) from the run of %s to %s; do not edit by hand: run it again.\n\n",
		m["started"], cmp.Or(m["finished"], "(unfinished)"))
	fmt.Fprintf(w, "catchup drains a backlog from one real Apache Kafka broker to another, next to what else could do it, on the same data, ")
	fmt.Fprintf(w, "each copy into a freshly deleted and recreated target topic of %s partitions. ", m["partitions"])
	fmt.Fprintf(w, "MB are 10^6 bytes of record values (keys are null, no headers, except in the keyed shape: keys of 16 bytes and two headers, written by `kafkactl seed`). ")
	fmt.Fprintf(w, "**Fast copiers** (the model, catchup, the franz-go copier%s): a calibration (not reported) times one copy of the backlog by each, after a warm-up copy that warms the brokers' JIT; ", map[bool]string{true: ", catchup at the baseline"}[m["baseline"] != ""])
	fmt.Fprintf(w, "each step of a copier is then as many copies of the backlog, one after the other (process start included, the target recreated between them and not timed), as make it last %s s or more, ", cmp.Or(m["step_s"], "20"))
	fmt.Fprintf(w, "and the steps run in %s (every copier once a round, the order rotated each round), so that a drift in the machine's load hits them alike. ", roundsText(cmp.Or(m["repeat"], "1")))
	fmt.Fprintf(w, "records/s is the records of the step's copies over the sum of their wall times; CPU-s is %s. ", cpuSourceText(m["cpu_source"]))
	fmt.Fprintf(w, "Each figure is the median of the runs with the lowest–highest beside it. ")
	fmt.Fprintf(w, "**Slow peers** (the MirrorMakers, kcat; %s round(s)%s) are measured over a window of their steady state on the same backlog: ", cmp.Or(m["peer_repeat"], "1"), peerShapesText(m))
	fmt.Fprintf(w, "from when the target holds %s%% of the backlog, for %s s or until 90%%, whichever comes first, CPU-s from /proc in that window; then they are stopped. ", cmp.Or(m["window_from"], "20"), cmp.Or(m["window_s"], "20"))
	if m["pin"] == "1" {
		fmt.Fprintf(w, "**Pinned run** (BENCH_PIN=1): every broker thread on CPU 0, the copier on CPU 1 (taskset), so that a copier's cost is its own. ")
	}
	fmt.Fprintf(w, "Broker CPU-s is what the brokers spent during the step. The machine is shared with other jobs: the load is in the last column.\n\n")
	if b := m["baseline"]; b != "" {
		fmt.Fprintf(w, "Rows marked *baseline %s* ran `catchup` built from commit %s (%q), as one more fast copier of the same rounds: a change measured side by side in one run.\n\n", b, b, m["baseline_subject"])
	}

	if f := m["failed"]; f != "" {
		fmt.Fprintf(w, "**Failed steps in this run: %s.** Their rows are marked.\n\n", f)
	}

	r.writeModelCheck(w)
	r.writeMachine(w)
	r.writeModel(w)
	for _, shape := range r.shapes() {
		r.writeShape(w, shape)
	}
	r.writeTargets(w)
	r.writeWindow(w)
	r.writeLatency(w)
	r.writeProfile(w)
	r.writeScale(w)
	r.writeCost(w)
	r.writeTimeline(w)
	r.writeCommands(w)
}

func (r *results) writeMachine(w *bufio.Writer) {
	m := r.meta
	fmt.Fprintf(w, "## Machine and versions\n\n")
	fmt.Fprintf(w, "| | |\n|---|---|\n")
	row := func(k, v string) { fmt.Fprintf(w, "| %s | %s |\n", k, v) }
	row("CPU", fmt.Sprintf("%s cores, %s", m["cores"], m["cpu_model"]))
	row("memory", m["mem_gib"]+" GiB")
	row("kernel", m["kernel"])
	if a, b := num(m, "page_reported_kib_start"), num(m, "page_reported_kib_end"); b >= a {
		row("free page reporting", fmt.Sprintf("on: the kernel handed %s GiB of freed memory back to the virtual machine's host during the run (/sys/module/page_reporting)", f1((b-a)/1048576)))
	}
	row("load (1 min) at start / end", m["load_start"]+" / "+m["load_end"]+" — the machine is shared with other jobs; the load before each step is in the tables")
	row("catchup", "commit "+m["commit"]+", "+m["go"])
	if b := m["baseline"]; b != "" {
		row("baseline", fmt.Sprintf("commit %s (%s), BENCH_BASELINE", m["baseline_commit"], m["baseline_subject"]))
	}
	row("brokers", fmt.Sprintf("Apache Kafka %s, single-node KRaft (test/kafka/start.sh), %s, loopback", m["kafka_version"], m["broker_heap"]))
	if m["dst_rf3"] != "" {
		row("3-broker target (rf3 rows)", fmt.Sprintf("Apache Kafka %s: a KRaft controller and three brokers (test/kafka/start.sh as test/kafka/cluster.sh starts the replicated target; brokers at %s), "+
			"topics of replication factor 3, min.insync.replicas=2, unclean leader election off; every copier at acks=all. 5 broker JVMs and a controller on %s cores", m["kafka_version"], m["broker_heap"], m["cores"]))
	}
	row("Java", m["java"])
	row("MirrorMaker 2", fmt.Sprintf("org.apache.kafka:connect-mirror %s (the newest on Maven Central; bench/pom.xml), %s %s", m["mm2_version"], m["heap_mm2"], m["jvm_perf"]))
	row("MirrorMaker 1", fmt.Sprintf("kafka.tools.MirrorMaker of Kafka %s, %s", m["mm1_version"], m["heap_mm1"]))
	row("Kafka perf tools", fmt.Sprintf("Kafka %s, %s", m["kafka_version"], m["heap_perf"]))
	row("kcat", cmp.Or(m["kcat"], "–"))
	row("settings", fmt.Sprintf("BENCH_GB=%s BENCH_SMALL_GB=%s BENCH_SCALES=%q BENCH_REPEAT=%q BENCH_STEP_S=%s BENCH_PEER_REPEAT=%s BENCH_PEER_SHAPES=%q BENCH_WINDOW_S=%s BENCH_WINDOW_FROM=%s BENCH_PIN=%s BENCH_BASELINE=%q BENCH_SHAPES=%q BENCH_TOPOLOGIES=%q BENCH_TOOLS=%q BENCH_QUICK=%s",
		m["bench_gb"], m["bench_small_gb"], m["bench_scales"], cmp.Or(m["repeat"], "1"), m["step_s"], m["peer_repeat"], m["peer_shapes"], m["window_s"], m["window_from"], cmp.Or(m["pin"], "0"),
		m["baseline"], m["shapes"], m["topologies"], m["tools"], cmp.Or(m["quick"], "0")))
	row("CPU accounting", cpuSourceText(m["cpu_source"]))
	row("whole run", fmt.Sprintf("%s s (%s; build and fetch %s s, brokers up %s s)", m["total_s"], minutes(m["total_s"]), m["build_fetch_s"], m["brokers_up_s"]))
	fmt.Fprintln(w)
}

// shapeTitle names a shape of the results (SHAPE or SHAPE-rf3).
func shapeTitle(shape string) string {
	base, rf3 := strings.CutSuffix(shape, "-rf3")
	title := map[string]string{
		"1k": "1 KiB values", "100b": "100-byte values",
		"1k-zstd": "1 KiB values, zstd source batches to a zstd target", "1k-keyed": "1 KiB values with keys and two headers",
	}[base]
	title = cmp.Or(title, base)
	if rf3 {
		return title + " → 3-broker target, RF=3, min.insync.replicas=2, acks=all"
	}
	return title + " → single-broker target"
}

// seedOf is the seeding step of shape: rf3 shapes copy the backlog seeded
// for the single-broker run of the same shape.
func (r *results) seedOf(shape string) *step {
	return r.find(strings.TrimSuffix(shape, "-rf3"), "seed")
}

func (r *results) writeShape(w *bufio.Writer, shape string) {
	seed := r.seedOf(shape)
	title := shapeTitle(shape)
	fmt.Fprintf(w, "## %s", title)
	if seed != nil {
		fmt.Fprintf(w, ": %s records, %s MB, %s partitions", thousands(float64(seed.records)), f0(seed.mb()), r.meta["partitions"])
	}
	fmt.Fprintf(w, "\n\n")
	if seed != nil {
		by := cmp.Or(seed.env["seeder"], "ProducerPerformance (acks=all)")
		values := ""
		if v := seed.env["values"]; v != "" {
			values = "; values: " + v
		}
		fmt.Fprintf(w, "Seeded with %s at %s records/s in %s s%s.\n\n", by, thousands(seed.rate), f0(seed.wall), values)
	}
	fmt.Fprintf(w, "| tool | runs | records/s | lowest–highest | MB/s | MB per CPU-s | lowest–highest | CPU-s a GB | kernel share | peak RSS MiB | s a run | first record s | broker CPU-s | load |\n")
	fmt.Fprintf(w, "|---|---|--:|---|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|\n")
	var notes []string
	for _, tool := range r.tools(shape) {
		name := r.label(tool)
		sm := r.summary(shape, tool)
		if sm == nil {
			runs := r.runs(shape, tool)
			f := runs[len(runs)-1]
			for _, x := range runs {
				if !x.ok {
					f = x
					break
				}
			}
			fmt.Fprintf(w, "| %s | %d, all failed: %s | | | | | | | | | | | | %s |\n", name, len(runs), f.status, f.env["load_before"])
			continue
		}
		s := sm.median
		runs := fmt.Sprint(sm.n)
		switch {
		case s.copies > 0:
			runs = fmt.Sprintf("%d × %d copies", sm.n, s.copies)
		case s.window:
			runs = fmt.Sprintf("%d, window %s s", sm.n, f0(s.wall))
		}
		if sm.failed > 0 {
			runs += fmt.Sprintf(" (%d failed)", sm.failed)
		}
		rate := thousands(sm.rate)
		if s.rateSelf {
			rate += "¹"
		}
		first := "–"
		if s.first >= 0 {
			first = f1(s.first)
		}
		records := ""
		if strings.HasPrefix(s.tool, "catchup-x") {
			records = fmt.Sprintf(" (%s records)", thousands(float64(s.records)))
		}
		kernel := "–"
		if !math.IsNaN(s.sysCPU) && s.userCPU+s.sysCPU > 0 {
			kernel = f0(100*s.sysCPU/(s.userCPU+s.sysCPU)) + "%"
		}
		fmt.Fprintf(w, "| %s%s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			name, records, runs, rate, rangeText(sm.n, sm.rateLo, sm.rateHi, thousands), f1(sm.rate*float64(s.valueBytes)/1e6),
			f1(sm.eff), rangeText(sm.n, sm.effLo, sm.effHi, f1), f2(s.cpu/(s.mb()/1000)), kernel, mib(s.rssKB), f1(s.wall), first,
			f1(s.brokerCPU), s.env["load_before"])
		// a baseline's notes are its tool's, said once
		if s.note != "" && !s.baseline {
			notes = append(notes, fmt.Sprintf("%s: %s", name, s.note))
		}
		if s.tool == "catchup-dynamodb" && s.storeReqs > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d DynamoDB requests for %s MB, %s per GB (catchup's `--json` report, store_requests)",
				name, s.storeReqs, f0(s.mb()), f0(float64(s.storeReqs)/(s.mb()/1000))))
		}
	}
	fmt.Fprintf(w, "\n¹ the tool's own rate. ")
	fmt.Fprintf(w, "runs: the steps measured (a fast copier's step is several copies of the backlog; a slow peer's a window of its steady state); ")
	fmt.Fprintf(w, "records/s and MB per CPU-s: the median over the runs, lowest–highest beside it; CPU-s a GB, kernel share, peak RSS, s a run and broker CPU-s are the median run's (by records/s); ")
	fmt.Fprintf(w, "kernel share: system over user+system time (perf stat); first record s: from the process start to the first record in the target, on the first copy (polled every 100 ms). ")
	if strings.HasSuffix(shape, "-rf3") {
		fmt.Fprintf(w, "Broker CPU-s here is the source broker, the three target brokers and their controller. ")
	}
	fmt.Fprintf(w, "On %s cores shared by the copier and the brokers, the brokers dominate: a copier that spends less CPU leaves more to them.\n\n", r.meta["cores"])
	for _, n := range notes {
		fmt.Fprintf(w, "- %s\n", n)
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
	}
	r.writeTargetCost(w, shape)
	r.writeRequests(w, shape)
	r.writeStored(w, shape)
	r.writeRatios(w, shape)
}

// writeStored says how many bytes of log the target kept a value byte
// copied, per copier: a copier that compresses less, or adds more to each
// record, leaves more on the target, and one that does not compress at
// all where another does is not doing the same work.
func (r *results) writeStored(w *bufio.Writer, shape string) {
	var parts []string
	for _, tool := range r.tools(shape) {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, s := range r.runs(shape, tool) {
			if !s.ok || s.targetLogBytes <= 0 || s.records <= 0 || s.valueBytes <= 0 {
				continue
			}
			x := float64(s.targetLogBytes) / float64(s.records/int64(max(s.copies, 1))*s.valueBytes) // the last copy's
			lo, hi = min(lo, x), max(hi, x)
		}
		switch {
		case math.IsInf(lo, 1):
		case f2(lo) == f2(hi):
			parts = append(parts, fmt.Sprintf("%s %s", r.label(tool), f2(lo)))
		default:
			parts = append(parts, fmt.Sprintf("%s %s–%s", r.label(tool), f2(lo), f2(hi)))
		}
	}
	if len(parts) == 0 {
		return
	}
	fmt.Fprintf(w, "The target's log held, in bytes a value byte copied (one replica, after each step's last copy): %s.\n\n", strings.Join(parts, "; "))
}

// writeTargetCost says what the target's brokers spent a GB in the fast
// copiers' steps, and how that goes with the steps' records/s: the brokers
// share the cores with the copier, so a step in which they spend more on the
// same bytes is slower whoever copies, and the throughput's range shows it.
func (r *results) writeTargetCost(w *bufio.Writer, shape string) {
	var rates, costs []float64
	var parts []string
	for _, tool := range r.tools(shape) {
		runs := r.runs(shape, tool)
		if len(runs) < 2 { // the rounds' copiers, not a one-off step
			continue
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, s := range runs {
			c := s.targetCPU / (s.mb() / 1000)
			if !s.ok || s.copies == 0 || s.rateSelf || math.IsNaN(c) || c <= 0 || s.rate <= 0 {
				continue
			}
			rates, costs = append(rates, s.rate), append(costs, c)
			lo, hi = min(lo, c), max(hi, c)
		}
		if !math.IsInf(lo, 1) {
			parts = append(parts, fmt.Sprintf("%s %s–%s", r.label(tool), f2(lo), f2(hi)))
		}
	}
	if len(rates) < 6 {
		return
	}
	fmt.Fprintf(w, "The target's brokers spent, in CPU-s a GB copied, lowest–highest over the steps: %s. ", strings.Join(parts, "; "))
	fmt.Fprintf(w, "Over these %d steps a step's records/s and its target brokers' CPU-s a GB correlate at r = %s", len(rates), f2(pearson(rates, costs)))
	fmt.Fprintf(w, " (-1: the steps that cost the target's brokers more a GB were the slower ones; 0: no relation). ")
	fmt.Fprintf(w, "Where each copier's own range is as wide as the gaps between them, the spread of records/s is the brokers' and not the copiers' (docs/performance.md).\n\n")
}

// writeRequests says how many requests a GB copied each fast copier's steps
// cost the brokers, as the brokers counted them: the copier's own CPU does
// not show what it asks of the brokers, which share the cores with it.
func (r *results) writeRequests(w *bufio.Writer, shape string) {
	cols := []struct {
		name string
		of   func(*step) float64
	}{
		{"produce requests to the target", func(s *step) float64 { return s.dstProduce }},
		{"the target's follower fetches", func(s *step) float64 { return s.dstFollower }},
		{"fetches from the source", func(s *step) float64 { return s.srcFetch }},
		{"requests to the source, all kinds", func(s *step) float64 { return s.srcRequests }},
	}
	type row struct {
		tool  string
		cells [][]float64 // per column, a GB, one value per step
	}
	var rows []row
	used := make([]bool, len(cols))
	for _, tool := range r.tools(shape) {
		runs := r.runs(shape, tool)
		if len(runs) < 2 { // the rounds' copiers, not a one-off step
			continue
		}
		rw := row{tool: tool, cells: make([][]float64, len(cols))}
		for _, s := range runs {
			gb := s.mb() / 1000
			if !s.ok || s.copies == 0 || gb <= 0 {
				continue
			}
			for i, c := range cols {
				if v := c.of(s); !math.IsNaN(v) && v >= 0 {
					rw.cells[i] = append(rw.cells[i], v/gb)
					used[i] = used[i] || v > 0
				}
			}
		}
		if len(rw.cells[0]) > 0 {
			rows = append(rows, rw)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "Requests a GB copied, as the brokers counted them (Kafka's `kafka.network:type=RequestMetrics,name=RequestsPerSec` counters, "+
		"read through the Prometheus JMX exporter right before and after each copy); the median over the steps, lowest–highest beside it where they differ:\n\n")
	fmt.Fprintf(w, "| copier |")
	for i, c := range cols {
		if used[i] {
			fmt.Fprintf(w, " %s |", c.name)
		}
	}
	fmt.Fprintf(w, "\n|---|")
	for i := range cols {
		if used[i] {
			fmt.Fprintf(w, "--:|")
		}
	}
	fmt.Fprintln(w)
	for _, rw := range rows {
		fmt.Fprintf(w, "| %s |", r.label(rw.tool))
		for i, v := range rw.cells {
			if !used[i] {
				continue
			}
			if len(v) == 0 {
				fmt.Fprintf(w, " – |")
				continue
			}
			lo, hi := thousands(slices.Min(v)), thousands(slices.Max(v))
			if lo == hi {
				fmt.Fprintf(w, " %s |", lo)
				continue
			}
			fmt.Fprintf(w, " %s (%s–%s) |", thousands(median(v)), lo, hi)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

// pearson is the correlation coefficient of x and y (NaN without spread).
func pearson(x, y []float64) float64 {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx += x[i] / n
		my += y[i] / n
	}
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

// tools returns the measured tools of shape (not the seeding and the
// warm-up), each once, in the order they first ran.
func (r *results) tools(shape string) []string {
	var out []string
	for _, s := range r.steps {
		if s.shape != shape || s.tool == "seed" || s.tool == "warmup" || s.tool == "calibrate" || s.tool == "profile-beside" || strings.HasPrefix(s.tool, "seed-x") {
			continue
		}
		if !slices.Contains(out, s.tool) {
			out = append(out, s.tool)
		}
	}
	return out
}

// ratio returns a / b, NaN if either is missing.
func ratio(a, b float64) float64 {
	if b == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return a / b
}

// okStep returns the median of the runs of tool in shape that succeeded
// (see medianRun), or nil when none did.
func (r *results) okStep(shape, tool string) *step {
	return medianRun(r.runs(shape, tool))
}

// runs returns every run of tool in shape, in the order they ran.
func (r *results) runs(shape, tool string) []*step {
	var out []*step
	for _, s := range r.steps {
		if s.shape == shape && s.tool == tool {
			out = append(out, s)
		}
	}
	return out
}

// medianRun returns the run with the median records/s among the runs that
// succeeded with a rate, nil if none did. With an even number of them it is
// the slower of the two middle ones: a run that happened, so that its CPU,
// RSS and broker figures belong to it.
func medianRun(runs []*step) *step {
	var ok []*step
	for _, s := range runs {
		if s.ok && s.rate > 0 {
			ok = append(ok, s)
		}
	}
	if len(ok) == 0 {
		return nil
	}
	slices.SortStableFunc(ok, func(a, b *step) int { return cmp.Compare(a.rate, b.rate) })
	return ok[(len(ok)-1)/2]
}

// rangeText is "lo–hi" of n runs, "one run" for one.
func rangeText(n int, lo, hi float64, f func(float64) string) string {
	if n <= 1 {
		return "one run"
	}
	return f(lo) + "–" + f(hi)
}

func cpuSourceText(src string) string {
	if src == "" {
		return "user+sys of the copier process (/usr/bin/time)"
	}
	return src
}

func minutes(seconds string) string {
	v, err := strconv.ParseFloat(seconds, 64)
	if err != nil {
		return "–"
	}
	return fmt.Sprintf("%.1f min", v/60)
}

// roundsText says BENCH_REPEAT ("N", or "N SHAPE=M ...") in words: "5
// interleaved rounds (3 for 1k-zstd, 3 for 1k-keyed)".
func roundsText(repeat string) string {
	n, others := "1", []string(nil)
	for _, w := range strings.Fields(repeat) {
		if shape, m, ok := strings.Cut(w, "="); ok {
			others = append(others, m+" for "+shape)
		} else {
			n = w
		}
	}
	s := n + " interleaved rounds"
	if len(others) > 0 {
		s += " (" + strings.Join(others, ", ") + ")"
	}
	return s
}

// peerShapesText says on which shapes every slow peer ran
// (BENCH_PEER_SHAPES), where some shape of the run was not one of them.
func peerShapesText(m map[string]string) string {
	every := strings.Fields(m["peer_shapes"])
	if _, ok := m["peer_shapes"]; !ok {
		return "" // a run from before BENCH_PEER_SHAPES: every peer on every shape
	}
	others := slices.DeleteFunc(strings.Fields(m["shapes"]), func(s string) bool { return slices.Contains(every, s) })
	if len(others) == 0 {
		return ""
	}
	return fmt.Sprintf("; every peer on %s, MirrorMaker 2 tuned alone on %s", cmp.Or(strings.Join(every, ", "), "no shape"), strings.Join(others, ", "))
}
