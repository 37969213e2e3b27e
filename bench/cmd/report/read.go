package main

// Reading a run's results: one folder per step, its env, time and JSON outputs.

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

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
	copyRSSKB  []int64 // a fast copier's: each copy's peak RSS, KiB
	first      float64 // seconds to the first record in the target; -1 unknown
	// after start-up: from the first record in the target to the last
	steadyRate float64 // records/s; NaN unknown
	steadyCPU  float64 // CPU seconds; NaN unknown
	steadyMB   float64 // MB copied in that time
	brokerCPU  float64 // CPU seconds of both brokers during the step
	targetCPU  float64 // of brokerCPU, the target cluster's; NaN unknown
	// the bytes of the target topic's log (one replica) after the step's
	// last copy; 0 or less: not recorded
	targetLogBytes int64
	// the requests the brokers counted over the step's copies (their
	// RequestsPerSec counters read right before and after each copy);
	// NaN: not recorded
	dstProduce  float64 // produce requests to the target
	dstFollower float64 // the target's follower fetches
	srcFetch    float64 // fetches from the source
	srcRequests float64 // every request to the source
	storeReqs   int64   // catchup with DynamoDB
	engineMS    int64   // catchup: the engine's own duration
	copies      int     // copies of the backlog in the step (a fast copier's)
	cpuSource   string  // "perf" (perf stat) or "rusage" (/usr/bin/time)
	userCPU     float64 // of cpu, in user mode (perf stat); NaN unknown
	sysCPU      float64 // of cpu, in the kernel (perf stat); NaN unknown
	window      bool    // measured over a steady-state window (a slow peer)
	note        string
}

type results struct {
	dir       string
	scalePath string // bench/SCALE.md; "" leaves its summary out
	scaleLink string // scalePath relative to the report's folder
	meta      map[string]string
	steps     []*step
}

// stepNumber is the number a step's folder begins with; 0 for none.
func stepNumber(dir string) int {
	n, _ := strconv.Atoi(strings.SplitN(filepath.Base(dir), "-", 2)[0])
	return n
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
	// In the order they ran: run.sh numbers them 01, 02, ..., 99, 100.
	sort.SliceStable(dirs, func(i, j int) bool { return stepNumber(dirs[i]) < stepNumber(dirs[j]) })
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
	// the steady-state window of a slow peer
	WindowS       float64 `json:"window_s"`
	WindowRecords int64   `json:"window_records"`
	WindowCPUS    float64 `json:"window_cpu_s"`
}

type selfJSON struct { // bench/cmd/profile
	Records int64   `json:"records"`
	Bytes   int64   `json:"bytes"`
	WallS   float64 `json:"wall_s"`
	CPUS    float64 `json:"cpu_s"`
	RSSKB   int64   `json:"rss_kb"`
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
		rssKB: -1, first: -1, steadyRate: math.NaN(), steadyCPU: math.NaN(), userCPU: math.NaN(), sysCPU: math.NaN()}
	s.ok = s.status == "ok"
	s.kind, s.baseline = strings.CutSuffix(s.tool, "-baseline")
	s.records = int64(num(env, "records"))
	s.valueBytes = int64(num(env, "value_bytes"))
	s.targetCPU = num(env, "dst_cpu_after") - num(env, "dst_cpu_before")
	if b := num(env, "target_log_bytes"); !math.IsNaN(b) {
		s.targetLogBytes = int64(b)
	}
	s.brokerCPU = num(env, "src_cpu_after") - num(env, "src_cpu_before") + s.targetCPU
	s.dstProduce, s.dstFollower = num(env, "dst_produce_requests"), num(env, "dst_follower_fetches")
	s.srcFetch, s.srcRequests = num(env, "src_fetch_requests"), num(env, "src_all_requests")
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
		} else if s.wall > 0 { // kafkactl seed says no rate of its own
			s.rate = float64(s.records) / s.wall
		}
	case s.kind == "model":
		var j struct {
			Records int64 `json:"records"`
		}
		if readJSON(p("model-1.out"), &j) && j.Records != s.records {
			s.ok, s.status = false, fmt.Sprintf("copied %d records, want %d", j.Records, s.records)
		}
		s.readCopies(dir, "model")
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
		s.readCopies(dir, "franzcopy")
		s.note = "bench/cmd/franzcopy at franz-go's defaults (idempotent, acks=all, 1 MB batches, 10 ms linger); whole process, as for catchup"
	case s.kind == "catchup" || s.tool == "catchup-dynamodb" || strings.HasPrefix(s.tool, "catchup-x"):
		s.readCopies(dir, "catchup")
		if j, ok := readCatchup(p("catchup-1.out")); ok {
			s.storeReqs, s.engineMS = j.StoreRequests, j.DurationMS
		}
	case s.tool == "profile" && env["profiler"] == "perf":
		t := readTime(p("profile.time"))
		s.wall, s.cpu, s.rssKB = t.wall, t.cpu, t.rssKB
		if s.wall > 0 {
			s.rate = float64(s.records) / s.wall
		}
		s.note = "`catchup run` under `perf record -e cpu-clock` (CPU-s and RSS include perf's own)"
	case s.tool == "profile":
		var j selfJSON
		if readJSON(p("profile.out"), &j) {
			s.wall, s.cpu, s.rssKB = j.WallS, j.CPUS, j.RSSKB
			s.rate = float64(s.records) / j.WallS
		}
		s.note = "catchup's engine in bench/cmd/profile with the Go CPU profiler on (perf could not run here)"
	case strings.HasPrefix(s.tool, "mm"):
		if s.tool == "mm2-eos" {
			s.note = "exactly.once.source.support=enabled on top of the tuned settings; the time is when the end offsets (transaction markers included) reached the backlog, " +
				"a little before the last transaction was committed (in MirrorMaker's favour); the whole backlog was then counted by a read_committed consumer"
		}
		s.readWindow(w)
	case s.tool == "kcat":
		s.readWindow(w)
		s.note = "only the values cross the pipe, each followed by the byte 0x1e (`-D '\\x1e'` on both ends): " +
			"keys, headers, timestamps (the target's records get the producer's time) and the source partition " +
			"(kcat -P spreads the records with librdkafka's partitioner) are not kept, a null value would arrive empty, " +
			"and a value holding the byte 0x1e would be split in two (neither ProducerPerformance's letters nor the compressed shape's JSON orders hold it, so the counts match here); " +
			"both kcat processes: CPU summed, RSS the sum of their peaks"
		if strings.HasPrefix(s.shape, "1k-keyed") {
			s.note = "keys kept (`-K '\\x1f'` on both ends, a key holding 0x1f would be cut); the two headers, timestamps and the source partition are lost " +
				"(the same key may land in another partition than at the source); values as in the other shapes; both kcat processes: CPU summed, RSS the sum of their peaks"
		}
	}
	return s, nil
}

// readCopies reads the copies of a fast copier's step: NAME-1, NAME-2, ...
// each a /usr/bin/time line and, where perf ran, a perf stat file. records
// become every copy's, wall and CPU their sums, RSS the highest.
func (s *step) readCopies(dir, name string) {
	times, _ := filepath.Glob(filepath.Join(dir, name+"-*.time"))
	if len(times) == 0 {
		return
	}
	s.cpuSource = "perf"
	s.userCPU, s.sysCPU = 0, 0
	var rss int64
	for _, f := range times {
		t := readTime(f)
		if !t.ok {
			s.ok, s.status = false, cmp.Or(s.status, "failed")+" (no time of "+filepath.Base(f)+")"
			return
		}
		s.wall += t.wall
		rss = max(rss, t.rssKB)
		s.copyRSSKB = append(s.copyRSSKB, t.rssKB)
		ps, ok := readPerfStat(strings.TrimSuffix(f, ".time") + ".perf")
		if !ok {
			s.cpuSource = "rusage"
			s.cpu += t.cpu
			continue
		}
		s.cpu += ps.task
		s.userCPU += ps.user
		s.sysCPU += ps.sys
	}
	if s.cpuSource == "rusage" {
		s.userCPU, s.sysCPU = math.NaN(), math.NaN()
	}
	s.copies = len(times)
	s.records *= int64(len(times))
	s.rssKB = rss
	if s.wall > 0 {
		s.rate = float64(s.records) / s.wall
	}
}

// perfStat is what `perf stat -x, -e task-clock,user_time,system_time`
// counted, in seconds.
type perfStat struct{ task, user, sys float64 }

func readPerfStat(path string) (perfStat, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return perfStat{}, false
	}
	var ps perfStat
	found := false
	for line := range strings.SplitSeq(string(data), "\n") {
		f := strings.Split(line, ",")
		if len(f) < 3 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue // "<not counted>" or "<not supported>"
		}
		switch {
		case f[2] == "task-clock" && f[1] == "msec":
			ps.task, found = v/1e3, true
		case strings.HasPrefix(f[2], "user_time"):
			ps.user = v / unitsPerSecond(f[1])
		case strings.HasPrefix(f[2], "system_time"):
			ps.sys = v / unitsPerSecond(f[1])
		}
	}
	return ps, found
}

func unitsPerSecond(unit string) float64 {
	switch unit {
	case "msec":
		return 1e3
	case "usec":
		return 1e6
	}
	return 1e9 // ns
}

// readWindow reads a slow peer's steady-state window (kafkactl wait
// -window): its records over its length, and the CPU-s in it.
func (s *step) readWindow(w waitJSON) {
	s.cpuSource = "proc"
	if w.WindowS <= 0 || w.WindowRecords <= 0 {
		return
	}
	s.window = true
	s.records = w.WindowRecords
	s.wall, s.cpu, s.rssKB = w.WindowS, w.WindowCPUS, w.RSSKB
	s.rate = float64(w.WindowRecords) / w.WindowS
	s.steadyRate = math.NaN()
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
