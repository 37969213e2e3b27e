// Command report turns the results folder of bench/run.sh into
// docs/benchmarks.md:
//
//	report -in bench/out/<run> -o docs/benchmarks.md
//
// It reads meta.env (machine, versions, settings, timings) and one folder
// per step under steps/ (step.env, the tools' own outputs, /usr/bin/time
// lines, the target poller's wait.json), and writes the tables, the ratios
// against the targets, the profile and the exact commands.
//
// A tool that ran more than once in a shape (BENCH_REPEAT) is shown, and
// compared, by its median run; a tool named TOOL-baseline is TOOL run with
// the binaries of the commit meta.env names as baseline.
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

func main() {
	in := flag.String("in", "", "results folder of bench/run.sh (required)")
	out := flag.String("o", "", "report file (default stdout)")
	scale := flag.String("scale", "", "docs/scale.md, whose tables (make bench-scale) the report summarises")
	flag.Parse()
	if *in == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: report -in DIR [-o FILE]")
		os.Exit(2)
	}
	r, err := load(*in)
	if err == nil {
		r.scalePath = *scale
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

// ---------------------------------------------------------------- reading

// step is one measured step of the run, its figures normalised.
type step struct {
	dir, shape, tool string
	kind             string // tool without "-baseline": what was measured
	baseline         bool   // run with the baseline commit's binaries
	env              map[string]string
	ok               bool
	status           string

	records    int64   // records moved (the backlog)
	valueBytes int64   // per record
	wall       float64 // seconds, process start to done (or to target full)
	rate       float64 // records/s; from the tool itself where it says so
	rateSelf   bool    // rate is the tool's own figure, not records/wall
	cpu        float64 // CPU seconds of the replicator process(es)
	rssKB      int64   // peak RSS, KiB; -1 unknown or not meaningful
	first      float64 // seconds to the first record in the target; -1 unknown
	// after start-up: from the first record in the target to the last
	steadyRate float64 // records/s; NaN unknown
	steadyCPU  float64 // CPU seconds; NaN unknown
	steadyMB   float64 // MB copied in that time
	brokerCPU  float64 // CPU seconds of both brokers during the step
	storeReqs  int64   // catchup with DynamoDB
	engineMS   int64   // catchup: the engine's own duration
	note       string
}

type results struct {
	dir       string
	scalePath string // docs/scale.md; "" leaves its summary out
	meta      map[string]string
	steps     []*step
}

func load(dir string) (*results, error) {
	meta, err := readEnv(filepath.Join(dir, "meta.env"))
	if err != nil {
		return nil, err
	}
	r := &results{dir: dir, meta: meta}
	dirs, err := filepath.Glob(filepath.Join(dir, "steps", "*"))
	if err != nil {
		return nil, err
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		s, err := readStep(d)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		r.steps = append(r.steps, s)
	}
	return r, nil
}

// dedupe collapses runs of identical lines into one with a count.
func dedupe(text string) string {
	lines := strings.Split(text, "\n")
	var out []string
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && lines[j] == lines[i] {
			j++
		}
		if j-i > 1 {
			out = append(out, fmt.Sprintf("%s  # %d times", lines[i], j-i))
		} else {
			out = append(out, lines[i])
		}
		i = j
	}
	return strings.Join(out, "\n")
}

func readEnv(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for line := range strings.SplitSeq(string(data), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			m[k] = v
		}
	}
	return m, nil
}

// timeLine is one `/usr/bin/time -f '%e %U %S %M'` output.
type timeLine struct {
	wall, cpu float64
	rssKB     int64
	ok        bool
}

func readTime(path string) timeLine {
	data, err := os.ReadFile(path)
	if err != nil {
		return timeLine{}
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	f := strings.Fields(lines[len(lines)-1]) // a failed command adds a line before
	if len(f) != 4 {
		return timeLine{}
	}
	wall, _ := strconv.ParseFloat(f[0], 64)
	user, _ := strconv.ParseFloat(f[1], 64)
	sys, _ := strconv.ParseFloat(f[2], 64)
	rss, _ := strconv.ParseInt(f[3], 10, 64)
	return timeLine{wall: wall, cpu: user + sys, rssKB: rss, ok: true}
}

func readJSON(path string, v any) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	return json.Unmarshal(data, v) == nil
}

type waitJSON struct {
	FirstS       float64 `json:"first_s"`
	FirstRecords int64   `json:"first_records"`
	FullS        float64 `json:"full_s"`
	Records      int64   `json:"records"`
	CPUS         float64 `json:"cpu_s"`
	FirstCPUS    float64 `json:"first_cpu_s"`
	RSSKB        int64   `json:"rss_kb"`
}

type selfJSON struct { // bench/cmd/ceiling and bench/cmd/profile
	Records int64   `json:"records"`
	Bytes   int64   `json:"bytes"`
	WallS   float64 `json:"wall_s"`
	CPUS    float64 `json:"cpu_s"`
	RSSKB   int64   `json:"rss_kb"`
	// ceiling both: when each side was done
	FetchWallS   float64 `json:"fetch_wall_s"`
	ProduceWallS float64 `json:"produce_wall_s"`
}

// readCatchup reads the report of the one pipeline in a `catchup run
// --json` document (docs/json.md).
func readCatchup(path string) (catchupJSON, bool) {
	var doc struct {
		Pipelines []catchupJSON `json:"pipelines"`
	}
	if !readJSON(path, &doc) || len(doc.Pipelines) != 1 {
		return catchupJSON{}, false
	}
	return doc.Pipelines[0], true
}

type catchupJSON struct {
	DurationMS    int64 `json:"duration_ms"`
	StoreRequests int64 `json:"store_requests"`
	Partitions    []struct {
		Copied int64  `json:"copied"`
		Status string `json:"status"`
	} `json:"partitions"`
}

var (
	perfProduceRE = regexp.MustCompile(`(\d+) records sent, ([\d.]+) records/sec`)
)

func num(m map[string]string, k string) float64 {
	v, err := strconv.ParseFloat(m[k], 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

func readStep(dir string) (*step, error) {
	env, err := readEnv(filepath.Join(dir, "step.env"))
	if err != nil {
		return nil, err
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	s := &step{dir: dir, shape: env["shape"], tool: env["tool"], env: env, status: env["status"],
		rssKB: -1, first: -1, steadyRate: math.NaN(), steadyCPU: math.NaN()}
	s.ok = s.status == "ok"
	s.kind, s.baseline = strings.CutSuffix(s.tool, "-baseline")
	s.records = int64(num(env, "records"))
	s.valueBytes = int64(num(env, "value_bytes"))
	s.brokerCPU = num(env, "src_cpu_after") - num(env, "src_cpu_before") + num(env, "dst_cpu_after") - num(env, "dst_cpu_before")
	p := func(name string) string { return filepath.Join(dir, name) }
	var w waitJSON
	if readJSON(p("wait.json"), &w) && w.FullS > 0 {
		s.first = w.FirstS
		if w.FullS > w.FirstS && w.FirstS >= 0 {
			n := float64(s.records - w.FirstRecords)
			s.steadyRate = n / (w.FullS - w.FirstS)
			s.steadyMB = n * float64(s.valueBytes) / 1e6
			if w.CPUS > 0 && w.FirstCPUS > 0 {
				s.steadyCPU = w.CPUS - w.FirstCPUS
			}
		}
	}
	switch {
	case s.tool == "seed" || strings.HasPrefix(s.tool, "seed-x"):
		t := readTime(p("seed.time"))
		s.wall, s.cpu, s.rssKB = t.wall, t.cpu, t.rssKB
		if m := lastMatch(p("seed.out"), perfProduceRE); m != nil {
			s.rate, s.rateSelf = atof(m[2]), true
		}
	case s.kind == "fetch-only" || s.kind == "produce-only" || s.kind == "fetch+produce":
		var j selfJSON
		if readJSON(p("ceiling.out"), &j) {
			s.wall, s.cpu, s.rssKB = j.WallS, j.CPUS, j.RSSKB
			s.rate = float64(j.Records) / j.WallS
			switch s.kind {
			case "produce-only":
				s.rssKB = -1
				s.note = "timed part only; the process holds the whole backlog in memory, so its RSS says nothing"
			case "fetch+produce":
				s.rssKB = -1
				s.note = fmt.Sprintf("fetch-only of the backlog and produce-only of an in-memory copy of it (loaded first, not timed) at the same time, "+
					"in one process, timed until both were done (fetch after %.1f s, produce after %.1f s); records/s is the backlog over that time. "+
					"What fetching and producing cost together on these shared cores, without a copy's coupling; RSS says nothing, as for produce-only",
					j.FetchWallS, j.ProduceWallS)
			default:
				s.note = "timed part only (no JVM, start-up is milliseconds)"
			}
		}
	case s.tool == "producer-perf":
		t := readTime(p("perf.time"))
		s.wall, s.cpu, s.rssKB = t.wall, t.cpu, t.rssKB
		if m := lastMatch(p("perf.out"), perfProduceRE); m != nil {
			s.rate, s.rateSelf = atof(m[2]), true
		}
		s.note = "rate as the tool reports it (JVM start excluded); CPU and RSS of the whole JVM"
	case s.tool == "consumer-perf":
		t := readTime(p("perf.time"))
		s.wall, s.cpu, s.rssKB = t.wall, t.cpu, t.rssKB
		if f := lastCSV(p("perf.out")); len(f) >= 6 {
			s.rate, s.rateSelf = atof(f[5]), true
		}
		s.note = "rate as the tool reports it (nMsg.sec: group join included, JVM start excluded)"
	case s.tool == "franzcopy":
		t := readTime(p("franzcopy.time"))
		s.wall, s.cpu, s.rssKB = t.wall, t.cpu, t.rssKB
		if s.wall > 0 {
			s.rate = float64(s.records) / s.wall
		}
		s.note = "bench/cmd/franzcopy at franz-go's defaults (idempotent, acks=all, 1 MB batches, 10 ms linger); whole process, as for catchup"
	case s.kind == "catchup" || s.tool == "catchup-dynamodb" || strings.HasPrefix(s.tool, "catchup-x"):
		t := readTime(p("catchup.time"))
		s.wall, s.cpu, s.rssKB = t.wall, t.cpu, t.rssKB
		if j, ok := readCatchup(p("catchup.out")); ok {
			s.storeReqs, s.engineMS = j.StoreRequests, j.DurationMS
		}
		if s.wall > 0 {
			s.rate = float64(s.records) / s.wall
		}
	case s.tool == "profile":
		var j selfJSON
		if readJSON(p("profile.out"), &j) {
			s.wall, s.cpu, s.rssKB = j.WallS, j.CPUS, j.RSSKB
			s.rate = float64(s.records) / j.WallS
		}
		s.note = "catchup's engine in bench/cmd/profile with the CPU profiler on"
	case strings.HasPrefix(s.tool, "mm"):
		if s.tool == "mm2-eos" {
			s.note = "exactly.once.source.support=enabled on top of the tuned settings; the time is when the end offsets (transaction markers included) reached the backlog, " +
				"a little before the last transaction was committed (in MirrorMaker's favour); the whole backlog was then counted by a read_committed consumer"
		}
		if w.FullS > 0 {
			s.wall, s.cpu, s.rssKB = w.FullS, w.CPUS, w.RSSKB
			s.rate = float64(s.records) / w.FullS
		}
	case s.tool == "kcat":
		c, pr := readTime(p("consumer.time")), readTime(p("producer.time"))
		if c.ok && pr.ok {
			s.wall = max(c.wall, pr.wall)
			s.cpu = c.cpu + pr.cpu
			s.rssKB = c.rssKB + pr.rssKB
			s.rate = float64(s.records) / s.wall
		}
		s.note = "only the values cross the pipe, each followed by the byte 0x1e (`-D '\\x1e'` on both ends): " +
			"keys, headers, timestamps (the target's records get the producer's time) and the source partition " +
			"(kcat -P spreads the records with librdkafka's partitioner) are not kept, a null value would arrive empty, " +
			"and a value holding the byte 0x1e would be split in two (ProducerPerformance writes A–Z only, so the counts match here); " +
			"both kcat processes: CPU summed, RSS the sum of their peaks"
		if strings.HasPrefix(s.shape, "1k-keyed") {
			s.note = "keys kept (`-K '\\x1f'` on both ends, a key holding 0x1f would be cut); the two headers, timestamps and the source partition are lost " +
				"(the same key may land in another partition than at the source); values as in the other shapes; both kcat processes: CPU summed, RSS the sum of their peaks"
		}
	}
	return s, nil
}

func atof(s string) float64 {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

func lastMatch(path string, re *regexp.Regexp) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	all := re.FindAllStringSubmatch(string(data), -1)
	if len(all) == 0 {
		return nil
	}
	return all[len(all)-1]
}

func lastCSV(path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		f := strings.Split(lines[i], ",")
		if len(f) >= 6 {
			if _, err := strconv.ParseFloat(strings.TrimSpace(f[5]), 64); err == nil {
				return f
			}
		}
	}
	return nil
}

// ---------------------------------------------------------------- figures

func (s *step) mb() float64 { return float64(s.records*s.valueBytes) / 1e6 }

func (s *step) mbps() float64 {
	return s.rate * float64(s.valueBytes) / 1e6
}

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
	"fetch-only":       "ceiling: fetch-only (the engine, kafkago.Source into a sink)",
	"produce-only":     "ceiling: produce-only (the engine, from memory into kafkago.Target)",
	"fetch+produce":    "ceiling: fetch+produce at once (shared cores)",
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
	"profile":          "catchup engine + CPU profiler",
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
	fmt.Fprintf(w, "catchup drains a backlog from one real Apache Kafka broker to another, next to what else could do it, ")
	fmt.Fprintf(w, "one tool after the other on the same data, each into a freshly deleted and recreated target topic of %s partitions. ", m["partitions"])
	fmt.Fprintf(w, "MB are 10^6 bytes of record values (keys are null, no headers, except in the keyed shape: keys of 16 bytes and two headers, written by `kafkactl seed`), as written by Kafka's ProducerPerformance; ")
	fmt.Fprintf(w, "records/s and MB/s are the backlog divided by the wall time from the start of the process to the end of the copy ")
	fmt.Fprintf(w, "(for the MirrorMakers, which never stop, until the target's end offsets reached the backlog, polled every 100 ms); ")
	fmt.Fprintf(w, "CPU-s are user+sys of the replicator process (from /usr/bin/time, or /proc/PID/stat when the target was full), ")
	fmt.Fprintf(w, "peak RSS is its VmHWM / max RSS. Broker CPU-s is what both brokers spent during the step. ")
	fmt.Fprintf(w, "Before the measurements of each record shape, a warm-up (not reported) reads the backlog and writes it to the target once, ")
	fmt.Fprintf(w, "so that the brokers' JIT-compiled fetch and produce paths are warm for everyone. ")
	if n := m["repeat"]; n != "" && n != "1" {
		fmt.Fprintf(w, "The ceiling steps, `catchup run` (file store) and every peer (franzcopy, the MirrorMakers, kcat) ran several times each (BENCH_REPEAT=%q: a number of runs, or per shape SHAPE=N; the runs column says how many), interleaved round by round so that a drift in the machine's load hits them alike; ", n)
		fmt.Fprintf(w, "their rows show the median run (by records/s; of an even number, the slower middle one), with the range in the runs column, and the ratios use the medians. ")
		fmt.Fprintf(w, "Every other figure is one run on a machine shared with other jobs: expect ±20%% from one run to the next (the load is in the last column).\n\n")
	} else {
		fmt.Fprintf(w, "Each figure is one run on a machine shared with other jobs: expect ±20%% from one run to the next (the load is in the last column).\n\n")
	}
	if b := m["baseline"]; b != "" {
		fmt.Fprintf(w, "Rows marked *baseline %s* ran the binaries (catchup, and the ceiling's bench/cmd/ceiling) built from commit %s (%q), ", b, b, m["baseline_subject"])
		fmt.Fprintf(w, "on the same data into a fresh target, each right after or (in even rounds) right before the same step of this commit: a change measured side by side in one run.\n\n")
	}

	if f := m["failed"]; f != "" {
		fmt.Fprintf(w, "**Failed steps in this run: %s.** Their rows are marked.\n\n", f)
	}

	r.writeCeilingCheck(w)
	r.writeMachine(w)
	r.writeCeilings(w)
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
	row("settings", fmt.Sprintf("BENCH_GB=%s BENCH_SMALL_GB=%s BENCH_SCALES=%q BENCH_REPEAT=%s BENCH_BASELINE=%q BENCH_SHAPES=%q BENCH_TOPOLOGIES=%q BENCH_QUICK=%s",
		m["bench_gb"], m["bench_small_gb"], m["bench_scales"], cmp.Or(m["repeat"], "1"), m["baseline"], m["shapes"], m["topologies"], cmp.Or(m["quick"], "0")))
	row("whole run", fmt.Sprintf("%s s (build and fetch %s s, brokers up %s s)", m["total_s"], m["build_fetch_s"], m["brokers_up_s"]))
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
		fmt.Fprintf(w, "Seeded with ProducerPerformance (acks=all) at %s records/s in %s s.\n\n", thousands(seed.rate), f0(seed.wall))
	}
	fmt.Fprintf(w, "| tool | records/s | runs (records/s) | MB/s | CPU-s | MB per CPU-s | peak RSS MiB | wall s | first record s | records/s after it | broker CPU-s | cores busy | load |\n")
	fmt.Fprintf(w, "|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	var notes []string
	for _, tool := range r.tools(shape) {
		runs := r.runs(shape, tool)
		name := r.label(tool)
		s := medianRun(runs)
		if s == nil {
			f := runs[len(runs)-1]
			for _, x := range runs {
				if !x.ok {
					f = x
					break
				}
			}
			fmt.Fprintf(w, "| %s | %s | %s | | | | | | | | | | %s |\n", name, f.status, spread(runs), f.env["load_before"])
			continue
		}
		rate := thousands(s.rate)
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
		busy := "–"
		if s.first >= 0 { // a replicator: the step is its run, so the brokers' CPU is the run's
			busy = "≈" + f1((s.cpu+s.brokerCPU)/s.wall)
		}
		fmt.Fprintf(w, "| %s%s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			name, records, rate, spread(runs), f1(s.mbps()), f1(s.cpu), f1(s.mbPerCPU()), mib(s.rssKB), f1(s.wall), first,
			thousands(s.steadyRate), f1(s.brokerCPU), busy, s.env["load_before"])
		// a baseline's notes are its tool's, said once
		if s.note != "" && !s.baseline {
			notes = append(notes, fmt.Sprintf("%s: %s", name, s.note))
		}
		if s.tool == "catchup-dynamodb" && s.storeReqs > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d DynamoDB requests for %s MB, %s per GB (catchup's `--json` report, store_requests)",
				name, s.storeReqs, f0(s.mb()), f0(float64(s.storeReqs)/(s.mb()/1000))))
		}
		if s.engineMS > 0 && strings.HasPrefix(s.tool, "catchup") {
			notes = append(notes, fmt.Sprintf("%s: the engine ran %.1f s of the %.1f s wall time (the rest is process start, connecting and planning)",
				name, float64(s.engineMS)/1000, s.wall))
		}
	}
	fmt.Fprintf(w, "\n¹ the tool's own rate. ")
	fmt.Fprintf(w, "runs: how many times the step ran; the row is the median run. ")
	fmt.Fprintf(w, "first record s: from the process start to the first record in the target (polled every 100 ms), the start-up cost; ")
	fmt.Fprintf(w, "records/s after it: the rest of the backlog over the rest of the time; ")
	fmt.Fprintf(w, "cores busy: the replicator's and the brokers' CPU-s over the wall time (the machine has %s). ", r.meta["cores"])
	if strings.HasSuffix(shape, "-rf3") {
		fmt.Fprintf(w, "Broker CPU-s here is the source broker, the three target brokers and their controller. ")
	}
	fmt.Fprintf(w, "On %s cores shared by the replicator and the brokers, the brokers dominate: compare broker CPU-s with the replicator's CPU-s in each row; "+
		"a replicator that spends less CPU leaves more to the brokers, which is why throughput and MB per CPU-s differ less than CPU does.\n\n", r.meta["cores"])
	for _, n := range notes {
		fmt.Fprintf(w, "- %s\n", n)
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
	}
	r.writeRatios(w, shape)
	r.writeBaseline(w, shape)
}

// tools returns the measured tools of shape (not the seeding and the
// warm-up), each once, in the order they first ran.
func (r *results) tools(shape string) []string {
	var out []string
	for _, s := range r.steps {
		if s.shape != shape || s.tool == "seed" || s.tool == "warmup" || strings.HasPrefix(s.tool, "seed-x") {
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

// spread describes the runs of one tool: "1" for a single run, else
// "median of N: min–max" in records/s, with the failed runs counted.
func spread(runs []*step) string {
	if len(runs) <= 1 {
		return "1"
	}
	n := 0
	for _, s := range runs {
		if s.ok && s.rate > 0 {
			n++
		}
	}
	if n == 0 {
		return fmt.Sprintf("%d, all failed", len(runs))
	}
	lo, hi := rangeOf(runs)
	out := fmt.Sprintf("median of %d: %s–%s", n, thousands(lo), thousands(hi))
	if n < len(runs) {
		out += fmt.Sprintf(" (%d of %d failed)", len(runs)-n, len(runs))
	}
	return out
}

// rangeOf returns the lowest and highest records/s of the runs that succeeded.
func rangeOf(runs []*step) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range runs {
		if s.ok && s.rate > 0 {
			lo, hi = min(lo, s.rate), max(hi, s.rate)
		}
	}
	return lo, hi
}

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

func (r *results) writeTargets(w *bufio.Writer) {
	fmt.Fprintf(w, "## The issue's targets\n\n")
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
			row("throughput ≥ 0.95 × the true shared ceiling (issue 18)", shape, f2(y)+" ×"+overCeiling(y), ceilingVerdict(y, verdict(y, 0.95, false, "")))
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

type windowResult struct {
	n                        int
	engineMedian, wallMedian float64 // ms
	coldEngine, coldWall     float64 // ms, the first run (empty store)
	engines, walls           []float64
}

func (r *results) window() *windowResult {
	s := r.find("window", "catchup-window")
	if s == nil || !s.ok {
		return nil
	}
	res := &windowResult{}
	for i := 0; ; i++ {
		t := readTime(filepath.Join(s.dir, fmt.Sprintf("run%d.time", i)))
		j, ok := readCatchup(filepath.Join(s.dir, fmt.Sprintf("run%d.out", i)))
		if !ok || !t.ok {
			break
		}
		if i == 0 {
			res.coldEngine, res.coldWall = float64(j.DurationMS), t.wall*1000
			continue
		}
		res.engines = append(res.engines, float64(j.DurationMS))
		res.walls = append(res.walls, t.wall*1000)
	}
	res.n = len(res.engines)
	if res.n == 0 {
		return nil
	}
	res.engineMedian, res.wallMedian = median(res.engines), median(res.walls)
	return res
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func (r *results) writeWindow(w *bufio.Writer) {
	win := r.window()
	if win == nil {
		return
	}
	fmt.Fprintf(w, "## A 1-record window\n\n")
	fmt.Fprintf(w, "One record (1 KiB) produced to a 1-partition topic, then `catchup run` (file store, defaults), %d times after a first run that copied the first record. ", win.n)
	fmt.Fprintf(w, "The engine's time is the report's `duration_ms` (list offsets, load checkpoint, lease, reconcile with the target, fetch, produce, commit, release); ")
	fmt.Fprintf(w, "the process time adds the process start, reading the configuration and connecting.\n\n")
	fmt.Fprintf(w, "| | engine ms | process wall ms |\n|---|--:|--:|\n")
	fmt.Fprintf(w, "| first run (no checkpoint yet) | %.0f | %.0f |\n", win.coldEngine, win.coldWall)
	fmt.Fprintf(w, "| median of the next %d | %.0f | %.0f |\n", win.n, win.engineMedian, win.wallMedian)
	fmt.Fprintf(w, "| each | %s | %s |\n\n", joinF(win.engines), joinF(win.walls))
}

func joinF(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = f0(x)
	}
	return strings.Join(s, ", ")
}

func (r *results) writeProfile(w *bufio.Writer) {
	for _, shape := range r.shapes() {
		s := r.find(shape, "profile")
		if s == nil || !s.ok {
			continue
		}
		top, err := os.ReadFile(filepath.Join(s.dir, "top.txt"))
		if err != nil {
			continue
		}
		fmt.Fprintf(w, "## Where catchup's CPU goes (%s)\n\n", shape)
		fmt.Fprintf(w, "The same copy as `catchup run` (pipeline.Open, Engine.Run, defaults), in `bench/cmd/profile` with Go's CPU profiler on: ")
		fmt.Fprintf(w, "%s records in %s s, %s CPU-s, peak RSS %s MiB. ", thousands(float64(s.records)), f1(s.wall), f1(s.cpu), mib(s.rssKB))
		fmt.Fprintf(w, "`go tool pprof -top bench/out/.../bin/profile cpu.pprof` (the profile is kept in the results folder):\n\n")
		if groups := groupProfile(filepath.Join(s.dir, "top-all.txt")); len(groups) > 0 {
			fmt.Fprintf(w, "| flat CPU by area | share |\n|---|--:|\n")
			for _, g := range groups {
				fmt.Fprintf(w, "| %s | %.1f%% |\n", g.name, g.pct)
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "```\n%s```\n\n", trimProfile(string(top)))
	}
}

// trimProfile drops pprof's header lines about the binary and build.
func trimProfile(s string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(s, "\n") {
		if strings.HasPrefix(line, "File:") || strings.HasPrefix(line, "Build ID:") || strings.HasPrefix(line, "Type:") || strings.HasPrefix(line, "Time:") {
			continue
		}
		if line != "" {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

type group struct {
	name string
	pct  float64
}

// areas classify a function by the prefix of its name, first match wins.
var areas = []struct{ name, prefix string }{
	{"system calls (network reads and writes)", "syscall."},
	{"system calls (network reads and writes)", "internal/runtime/syscall/"},
	{"system calls (network reads and writes)", "runtime/internal/syscall."},
	{"garbage collector", "runtime.gc"},
	{"garbage collector", "runtime.scanobject"},
	{"garbage collector", "runtime.greyobject"},
	{"garbage collector", "runtime.findObject"},
	{"garbage collector", "runtime.markBits"},
	{"garbage collector", "runtime.(*gcWork)"},
	{"garbage collector", "runtime.(*mspan)"},
	{"garbage collector", "runtime.wbBuf"},
	{"garbage collector", "runtime.bulkBarrier"},
	{"memory copy and clear", "runtime.memmove"},
	{"memory copy and clear", "runtime.memclr"},
	{"allocation", "runtime.mallocgc"},
	{"allocation", "runtime.(*mcache)"},
	{"allocation", "runtime.(*mheap)"},
	{"allocation", "runtime.nextFreeFast"},
	{"CRC-32C of record batches", "hash/crc32."},
	{"compression (klauspost/compress: zstd, huff0, ...)", "github.com/klauspost/compress"},
	{"kafka-go (protocol encoding and decoding)", "github.com/segmentio/kafka-go"},
	{"franz-go kmsg (fetch response decoding in kafkago)", "github.com/twmb/franz-go"},
	{"catchup (internal/...)", "github.com/kafka-catchup/catchup"},
	{"scheduler and other runtime", "runtime."},
	{"scheduler and other runtime", "internal/"},
	{"other Go standard library", ""},
}

func groupProfile(path string) []group {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	sums := map[string]float64{}
	for line := range strings.SplitSeq(string(data), "\n") {
		f := strings.Fields(line)
		// flat flat% sum% cum cum% name...
		if len(f) < 6 || !strings.HasSuffix(f[1], "%") || !strings.HasSuffix(f[4], "%") {
			continue
		}
		pct, err := strconv.ParseFloat(strings.TrimSuffix(f[1], "%"), 64)
		if err != nil {
			continue
		}
		name := strings.Join(f[5:], " ")
		for _, a := range areas {
			if strings.HasPrefix(name, a.prefix) {
				sums[a.name] += pct
				break
			}
		}
	}
	var out []group
	for n, p := range sums {
		if p >= 0.05 {
			out = append(out, group{n, p})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pct > out[j].pct })
	return out
}

func (r *results) writeTimeline(w *bufio.Writer) {
	fmt.Fprintf(w, "## Steps, in order\n\n")
	fmt.Fprintf(w, "| # | shape | step | seconds | load before | load after | status |\n|--:|---|---|--:|--:|--:|---|\n")
	for _, s := range r.steps {
		tool := s.tool
		if len(r.runs(s.shape, s.tool)) > 1 {
			tool += ", run " + s.env["round"]
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", strings.SplitN(filepath.Base(s.dir), "-", 2)[0], s.shape, tool,
			s.env["step_s"], s.env["load_before"], s.env["load_after"], s.status)
	}
	fmt.Fprintln(w)
}

// writeCommands shows the exact command lines of the first shape's steps,
// with the run's addresses and folders replaced by names.
func (r *results) writeCommands(w *bufio.Writer) {
	m := r.meta
	repl := []string{}
	add := func(k, v string) {
		if v != "" {
			repl = append(repl, v, k)
		}
	}
	add("$KAFKA_LIBS", m["kafka_libs"])
	add("$MM1_LIBS", m["mm1_libs"])
	add("$MM2_LIBS", m["mm2_libs"])
	add("$BIN", m["bin"])
	add("$RUN", m["run"])
	add("$OUT", m["out"])
	add("$REPO", m["repo"])
	add("$SRC", m["src"])
	add("$DST", m["dst"])
	fmt.Fprintf(w, "## Commands\n\n")
	fmt.Fprintf(w, "Run everything with `make bench` (sizes: `BENCH_GB`, `BENCH_SMALL_GB`, `BENCH_SCALES`; runs of the repeated steps: `BENCH_REPEAT`; ")
	fmt.Fprintf(w, "a commit to compare with: `BENCH_BASELINE`; see `bench/run.sh --help`). A repeated step's command is shown once. ")
	fmt.Fprintf(w, "The exact commands of one shape follow, as run; `$SRC`/`$DST` are the brokers' loopback addresses, `$STEP` the step's folder in the results, ")
	fmt.Fprintf(w, "`$KAFKA_LIBS`, `$MM1_LIBS`, `$MM2_LIBS` the fetched jars (test/kafka/fetch.sh %s and %s, bench/fetch-mirror.sh %s). ",
		m["kafka_version"], m["mm1_version"], m["mm2_version"])
	fmt.Fprintf(w, "Configuration templates: `bench/templates/` (catchup.yaml, mm2.properties, mm1-consumer.properties, mm1-producer.properties). ")
	fmt.Fprintf(w, "Before each copy the target topic is deleted and created again (`kafkactl recreate`).\n\n")
	shapes := r.shapes()
	if len(shapes) == 0 {
		return
	}
	fmt.Fprintf(w, "```sh\n")
	for _, s := range r.steps {
		if s.shape != shapes[0] && s.shape != "window" || r.runs(s.shape, s.tool)[0] != s {
			continue // another shape, or a repeat of a step already shown
		}
		data, err := os.ReadFile(filepath.Join(s.dir, "cmd.txt"))
		if err != nil {
			continue
		}
		stepRepl := append([]string{s.dir, "$STEP"}, repl...)
		text := strings.NewReplacer(stepRepl...).Replace(strings.TrimSpace(string(data)))
		text = dedupe(text)
		fmt.Fprintf(w, "# %s %s\n%s\n", s.shape, s.tool, text)
	}
	fmt.Fprintf(w, "```\n")
	// The scale tables are not this report's: `make bench-scale` writes them.
	fmt.Fprintf(w, "\n## Scale: 100 to 10,000 partitions\n\n")
	fmt.Fprintf(w, "See [scale.md](scale.md): `make bench-scale` writes its tables there (Kafka requests per API key, ")
	fmt.Fprintf(w, "DynamoDB requests and items read, peak RSS, goroutines, bytes written, at 100 to 10,000 partitions).\n")
}

// scaleRow is one row of a docs/scale.md table, with the heading it is under.
type scaleRow struct {
	heading string
	cells   []string
}

// scaleRows reads the tables of docs/scale.md (make bench-scale) and returns,
// for each size and step, the row of the newest table that has it: the
// sections are in the order they were measured, oldest first, and those
// under a "History" or "Before" heading are not the current code's.
func scaleRows(path string) (map[string]scaleRow, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rows := map[string]scaleRow{}
	heading, skip := "", false
	for line := range strings.SplitSeq(string(data), "\n") {
		if strings.HasPrefix(line, "#") {
			heading = strings.TrimSpace(strings.TrimLeft(line, "#"))
			skip = strings.HasPrefix(heading, "History") || strings.HasPrefix(heading, "Before")
			continue
		}
		if skip || !strings.HasPrefix(line, "| ") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 12 || !strings.Contains(cells[0], "/") || strings.HasPrefix(cells[0], "partitions") {
			continue
		}
		rows[cells[0]+" "+cells[1]] = scaleRow{heading, cells}
	}
	return rows, nil
}

func (r *results) writeScale(w *bufio.Writer) {
	if r.scalePath == "" {
		return
	}
	rows, err := scaleRows(r.scalePath)
	if err != nil || len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "## Scale: 100 to 10,000 partitions (from docs/scale.md)\n\n")
	fmt.Fprintf(w, "`make bench-scale` (not run by `make bench`: in-process kfake clusters of 3 brokers each and dynalite, the real binary; see [scale.md](scale.md) for every step and the history). ")
	fmt.Fprintf(w, "The newest measurement of each size and step, as that file has it; DynamoDB $/month at a 5-minute schedule with the prices stated there.\n\n")
	fmt.Fprintf(w, "| partitions/topics | step | Kafka requests (source) | Kafka requests (target) | DynamoDB requests | peak RSS MiB | DynamoDB $/month at 5 min | from the table |\n|---|---|---|---|---|--:|--:|---|\n")
	for _, size := range []string{"100/10", "1000/100", "10000/100"} {
		for _, st := range []string{"run (first)", "run (idle)", "run (1% active)", "run (all active)", "worker (64-partition shard, active)"} {
			row, ok := rows[size+" "+st]
			if !ok {
				continue
			}
			c := row.cells
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", c[0], c[1], c[2], c[3], c[4], c[6], c[11], row.heading)
		}
	}
	fmt.Fprintln(w)
}

// Prices, stated as assumptions (us-east-1, on-demand, USD). The MSK
// Replicator and DynamoDB figures are docs/scale.md's (issue 13, read from
// the AWS price pages in 2026-11); the others were taken from the AWS price
// pages as last known on 2026-12-02 and not re-checked from the bench
// machine, which has no web access. Check them before quoting.
const (
	priceMSKReplicatorHour = 0.30         // per replicator-hour (aws.amazon.com/msk/pricing)
	priceMSKReplicatorGB   = 0.08         // per GB replicated
	priceMSKConnectMCUHour = 0.11         // MSK Connect, per MCU-hour (1 vCPU, 4 GiB)
	priceEC2M5LargeHour    = 0.096        // m5.large, 2 vCPU, 8 GiB (aws.amazon.com/ec2/pricing/on-demand)
	priceLambdaGBSecond    = 0.0000166667 // x86 (aws.amazon.com/lambda/pricing)
	lambdaGBPerVCPU        = 1.769        // Lambda gives one vCPU at 1,769 MB
	hoursPerMonth          = 730.0
)

// writeCost compares a month of copying with the prices above, catchup's
// compute from this run's MB per CPU-s (1 KiB, single-broker target).
func (r *results) writeCost(w *bufio.Writer) {
	c := r.okStep("1k", "catchup")
	fmt.Fprintf(w, "## Cost per month: catchup, MSK Replicator, an always-on MirrorMaker 2\n\n")
	fmt.Fprintf(w, "Assumed prices (us-east-1, on-demand, USD; **assumptions, check before quoting**): MSK Replicator $%.2f per replicator-hour and $%.2f per GB replicated, ", priceMSKReplicatorHour, priceMSKReplicatorGB)
	fmt.Fprintf(w, "DynamoDB $0.625 per million write units (as docs/scale.md states them, from the AWS price pages read in 2026-11); ")
	fmt.Fprintf(w, "MSK Connect $%.2f per MCU-hour, EC2 m5.large $%.3f per hour, Lambda $%.10f per GB-s with one vCPU at %.0f MB (AWS price pages as last known on 2026-12-02, not re-checked from this machine). ", priceMSKConnectMCUHour, priceEC2M5LargeHour, priceLambdaGBSecond, lambdaGBPerVCPU*1000)
	fmt.Fprintf(w, "Data transfer between AZs or regions is the same for every option and left out, as are the Kafka clusters themselves. A month is %.0f hours; the volume 3 TB a month (100 GB a day).\n\n", hoursPerMonth)
	const gb = 3000.0
	fmt.Fprintf(w, "| option | fixed $/month | $ for 3 TB | total $/month | what it assumes |\n|---|--:|--:|--:|---|\n")
	fmt.Fprintf(w, "| MSK Replicator | %.0f | %.0f | %.0f | one replicator, running all the time |\n", priceMSKReplicatorHour*hoursPerMonth, priceMSKReplicatorGB*gb, priceMSKReplicatorHour*hoursPerMonth+priceMSKReplicatorGB*gb)
	fmt.Fprintf(w, "| MirrorMaker 2 on MSK Connect | %.0f | 0 | %.0f | 2 MCU always on (one worker of 2 MCU: an assumed size for 100 GB a day) |\n", 2*priceMSKConnectMCUHour*hoursPerMonth, 2*priceMSKConnectMCUHour*hoursPerMonth)
	fmt.Fprintf(w, "| MirrorMaker 2 on EC2 | %.0f | 0 | %.0f | one m5.large always on (no standby), operated by you |\n", priceEC2M5LargeHour*hoursPerMonth, priceEC2M5LargeHour*hoursPerMonth)
	if c != nil && !math.IsNaN(c.mbPerCPU()) {
		cpuS := gb * 1000 / c.mbPerCPU()
		// the copy's CPU time, plus 8,640 runs a month of an assumed 2 s
		// of wall time each (listing offsets, checkpoints, waiting on I/O)
		lambda := (cpuS + 8640*2) * lambdaGBPerVCPU * priceLambdaGBSecond
		fmt.Fprintf(w, "| catchup on Lambda every 5 min, 1,000 partitions, DynamoDB store | 10.80 | %.2f | %.0f | compute: 3 TB at this run's %s MB per CPU-s (1 KiB) = %s CPU-s on a 1-vCPU Lambda, plus 8,640 runs of an assumed 2 s; DynamoDB: the 1,000/100 all-active row of the scale table (2 writes per active partition per run) |\n",
			lambda, 10.80+lambda, f0(c.mbPerCPU()), thousands(cpuS))
		fmt.Fprintf(w, "| catchup on EC2, nightly window | %.0f | 0 | %.0f | the same m5.large for 2 h a day, or any host that already runs |\n\n", priceEC2M5LargeHour*60, priceEC2M5LargeHour*60)
	} else {
		fmt.Fprintf(w, "\n")
	}
	fmt.Fprintf(w, "catchup's cost follows the data it copies and the partitions it checkpoints, not the hours: an idle month costs its DynamoDB reads (0.00 in the scale table at 5 min). ")
	fmt.Fprintf(w, "MSK Replicator and MirrorMaker 2 run all the time and copy continuously; catchup copies in windows (or `run --every`), so the comparison holds where a lag of a window is acceptable.\n\n")
}

type latencyJSON struct {
	Produced int64   `json:"produced"`
	Seen     int64   `json:"seen"`
	Measured int     `json:"measured"`
	P50MS    float64 `json:"p50_ms"`
	P99MS    float64 `json:"p99_ms"`
	MaxMS    float64 `json:"max_ms"`
}

// writeLatency shows the latency steps: produce on the source to visible
// on the target, at a steady 1 MB/s, for the continuous copiers.
func (r *results) writeLatency(w *bufio.Writer) {
	head := false
	for _, s := range r.steps {
		if s.shape != "latency" {
			continue
		}
		if !head {
			fmt.Fprintf(w, "## Latency of a continuous copy at 1 MB/s\n\n")
			fmt.Fprintf(w, "The copier runs continuously on an empty topic (8 partitions, single-broker target), primed by short probes until their records arrive; then `kafkactl latency` produces 1,000 records of 1 KiB a second (1 MB/s) to the source ")
			fmt.Fprintf(w, "and reads the target: a record's latency is when it was read on the target minus its timestamp (its produce time, which both copiers keep). The first 5 s are left out. One run each.\n\n")
			fmt.Fprintf(w, "| copier | p50 ms | p99 ms | max ms | records produced / seen | MB/s produced | copier CPU-s | load |\n|---|--:|--:|--:|--:|--:|--:|--:|\n")
			head = true
		}
		name := map[string]string{"latency-catchup": "`catchup run --every 1s`, file store", "latency-mm2-tuned": "MirrorMaker 2 (dedicated), tuned"}[s.tool]
		var j latencyJSON
		if !s.ok || !readJSON(filepath.Join(s.dir, "latency.out"), &j) {
			fmt.Fprintf(w, "| %s | %s | | | | | | %s |\n", cmp.Or(name, s.tool), s.status, s.env["load_before"])
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s / %s | %s | %s | %s |\n", cmp.Or(name, s.tool), f0(j.P50MS), f0(j.P99MS), f0(j.MaxMS),
			thousands(float64(j.Produced)), thousands(float64(j.Seen)), f2(float64(j.Produced)*1024/1e6/num(s.env, "latency_s")), s.env["copier_cpu_s"], s.env["load_before"])
	}
	if head {
		fmt.Fprintf(w, "\n`catchup run --every 1s` copies a window, waits 1 s, and copies the next: its latency is about that second plus a run (list offsets, fetch, produce, commit); ")
		fmt.Fprintf(w, "MirrorMaker 2 fetches continuously and its tuned producer lingers up to 100 ms. Copier CPU-s is the whole process's, priming and start-up included.\n\n")
	}
}
