package main

// The report's other sections: the one-record window, the profile, the
// timeline, the commands, scale, cost and latency.

import (
	"bufio"
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

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
		if s.env["profiler"] == "perf" {
			r.writePerfProfile(w, shape, s)
			r.writeBesideModel(w, shape, r.find(shape, "profile-beside"))
			continue
		}
		top, err := os.ReadFile(filepath.Join(s.dir, "top.txt"))
		if err != nil {
			continue
		}
		fmt.Fprintf(w, "## Where catchup's CPU goes (%s)\n\n", shape)
		fmt.Fprintf(w, "perf could not run here: the same copy as `catchup run` (pipeline.Open, Engine.Run, defaults), in `bench/cmd/profile` with Go's CPU profiler on (the kernel left out): ")
		fmt.Fprintf(w, "%s records in %s s, %s CPU-s, peak RSS %s MiB. ", thousands(float64(s.records)), f1(s.wall), f1(s.cpu), mib(s.rssKB))
		fmt.Fprintf(w, "`go tool pprof -top bench/out/.../bin/profile cpu.pprof` (the profile is kept in the results folder):\n\n")
		writeGroups(w, groupSamples(pprofSamples(filepath.Join(s.dir, "top-all.txt"))))
		fmt.Fprintf(w, "```\n%s```\n\n", trimProfile(string(top)))
	}
}

// writePerfProfile summarises `perf report --sort dso,sym` of `catchup
// run` under perf record: the share of each area, then the top symbols.
func (r *results) writePerfProfile(w *bufio.Writer, shape string, s *step) {
	samples := perfSamples(filepath.Join(s.dir, "perf-all.txt"))
	if len(samples) == 0 {
		return
	}
	fmt.Fprintf(w, "## Where catchup's CPU goes (%s)\n\n", shape)
	fmt.Fprintf(w, "`catchup run` at its defaults under `perf record -e cpu-clock` (user and kernel, the process's threads only; not the brokers'): ")
	n, cpu := "?", "?"
	if data, err := os.ReadFile(filepath.Join(s.dir, "perf-all.txt")); err == nil {
		if m := perfSamplesRE.FindSubmatch(data); m != nil {
			n = string(m[1])
		}
		if m := perfEventsRE.FindSubmatch(data); m != nil {
			cpu = f2(atof(string(m[1])) / 1e9) // cpu-clock counts nanoseconds
		}
	}
	fmt.Fprintf(w, "%s records in %s s; %s samples over %s CPU-s. `perf report --no-children --sort dso,sym`, grouped by area:\n\n",
		thousands(float64(s.records)), f1(s.wall), n, cpu)
	writeGroups(w, groupSamples(samples))
	var kernel, crc, move, own float64
	for _, x := range samples {
		switch {
		case x.kernel:
			kernel += x.pct
		case strings.Contains(strings.ToLower(x.name), "crc32"):
			crc += x.pct
		case strings.HasPrefix(x.name, "runtime.memmove"):
			move += x.pct
		case strings.HasPrefix(x.name, "github.com/kafka-catchup/catchup"):
			own += x.pct
		}
	}
	fmt.Fprintf(w, "In short: the kernel %.1f%%, CRC-32C %.1f%%, memmove %.1f%%, catchup's own code %.1f%%, the rest (Go runtime, kafka-go, franz-go's kmsg, compression) %.1f%%.\n\n",
		kernel, crc, move, own, 100-kernel-crc-move-own)
	fmt.Fprintf(w, "The top symbols:\n\n| share | where | symbol |\n|--:|---|---|\n")
	for i, x := range samples {
		if i == 15 {
			break
		}
		where := "user"
		if x.kernel {
			where = "kernel"
		}
		fmt.Fprintf(w, "| %.1f%% | %s | `%s` |\n", x.pct, where, x.name)
	}
	fmt.Fprintln(w)
}

func writeGroups(w *bufio.Writer, groups []group) {
	if len(groups) == 0 {
		return
	}
	fmt.Fprintf(w, "| CPU by area | share |\n|---|--:|\n")
	for _, g := range groups {
		fmt.Fprintf(w, "| %s | %.1f%% |\n", g.name, g.pct)
	}
	fmt.Fprintln(w)
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
	{"system calls, user side", "syscall."},
	{"system calls, user side", "internal/runtime/syscall/"},
	{"system calls, user side", "runtime/internal/syscall."},
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
	{"CRC-32C of record batches", "crc32"},
	{"compression (klauspost/compress: zstd, huff0, ...)", "github.com/klauspost/compress"},
	{"kafka-go (protocol encoding and decoding)", "github.com/segmentio/kafka-go"},
	{"franz-go kmsg (fetch response decoding in kafkago)", "github.com/twmb/franz-go"},
	{"catchup (internal/...)", "github.com/kafka-catchup/catchup"},
	{"package main (the model's copy loop; catchup's command)", "main."},
	{"scheduler and other runtime", "runtime."},
	{"scheduler and other runtime", "internal/"},
	{"other Go standard library", ""},
}

// sample is one symbol's share of a profile.
type sample struct {
	pct    float64
	name   string
	kernel bool
}

// kernelAreas classify a kernel symbol by a part of its name, first match wins.
var kernelAreas = []struct{ name, part string }{
	{"kernel: copying to and from sockets", "copy_user"},
	{"kernel: copying to and from sockets", "_copy_to_iter"},
	{"kernel: copying to and from sockets", "_copy_from_iter"},
	{"kernel: copying to and from sockets", "rep_movs"},
	{"kernel: copying to and from sockets", "copy_page"},
	{"kernel: copying to and from sockets", "skb_copy"},
	{"kernel: copying to and from sockets", "memcpy"},
	{"kernel: scheduling, futexes, epoll", "sched"},
	{"kernel: scheduling, futexes, epoll", "futex"},
	{"kernel: scheduling, futexes, epoll", "wake"},
	{"kernel: scheduling, futexes, epoll", "switch"},
	{"kernel: scheduling, futexes, epoll", "ep_"},
	{"kernel: scheduling, futexes, epoll", "epoll"},
	{"kernel: scheduling, futexes, epoll", "enqueue"},
	{"kernel: scheduling, futexes, epoll", "dequeue"},
	{"kernel: scheduling, futexes, epoll", "update_"},
	{"kernel: TCP/IP and loopback", "tcp"},
	{"kernel: TCP/IP and loopback", "ip_"},
	{"kernel: TCP/IP and loopback", "skb"},
	{"kernel: TCP/IP and loopback", "sock"},
	{"kernel: TCP/IP and loopback", "net"},
	{"kernel: TCP/IP and loopback", "dev_"},
	{"kernel: TCP/IP and loopback", "inet"},
	{"kernel: TCP/IP and loopback", "loopback"},
	{"kernel: page faults and memory", "page"},
	{"kernel: page faults and memory", "fault"},
	{"kernel: page faults and memory", "folio"},
	{"kernel: page faults and memory", "kmem"},
	{"kernel: page faults and memory", "alloc"},
	{"kernel: page faults and memory", "vma"},
	{"kernel: page faults and memory", "mm_"},
	{"kernel: system call entry and exit", "syscall"},
	{"kernel: system call entry and exit", "entry_"},
	{"kernel: system call entry and exit", "exit_to_user"},
	{"kernel: system call entry and exit", "rseq"},
	{"kernel: other (interrupt-deferred samples, locks, ...)", ""},
}

// perfSamples reads `perf report --stdio --no-children --sort dso,sym`:
// "  12.34%  catchup  [.] symbol" ([k] for the kernel), highest first.
func perfSamples(path string) []sample {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []sample
	for line := range strings.SplitSeq(string(data), "\n") {
		m := perfLineRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		pct, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			continue
		}
		out = append(out, sample{pct: pct, name: strings.TrimSpace(m[4]), kernel: m[3] == "k" || strings.HasPrefix(m[2], "[kernel")})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].pct > out[j].pct })
	return out
}

var (
	perfSamplesRE = regexp.MustCompile(`(?m)^# Samples: (\S+)`) // "1K" as perf writes it
	perfEventsRE  = regexp.MustCompile(`(?m)^# Event count \(approx\.\): (\d+)`)
)

var perfLineRE = regexp.MustCompile(`^\s*([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(.+)$`)

// pprofSamples reads `go tool pprof -top`: flat flat% sum% cum cum% name.
func pprofSamples(path string) []sample {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []sample
	for line := range strings.SplitSeq(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || !strings.HasSuffix(f[1], "%") || !strings.HasSuffix(f[4], "%") {
			continue
		}
		pct, err := strconv.ParseFloat(strings.TrimSuffix(f[1], "%"), 64)
		if err != nil {
			continue
		}
		out = append(out, sample{pct: pct, name: strings.Join(f[5:], " ")})
	}
	return out
}

// groupSamples sums the shares by area, highest first.
func groupSamples(samples []sample) []group {
	var out []group
	for n, p := range areaSums(samples) {
		if p >= 0.05 {
			out = append(out, group{n, p})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].pct > out[j].pct || out[i].pct == out[j].pct && out[i].name < out[j].name
	})
	return out
}

// areaSums sums the shares by area.
func areaSums(samples []sample) map[string]float64 {
	sums := map[string]float64{}
	for _, x := range samples {
		sums[areaOf(x)] += x.pct
	}
	return sums
}

// areaOf is the area a symbol is counted in.
func areaOf(x sample) string {
	if x.kernel {
		for _, a := range kernelAreas {
			if strings.Contains(x.name, a.part) {
				return a.name
			}
		}
	}
	for _, a := range areas {
		if strings.HasPrefix(x.name, a.prefix) {
			return a.name
		}
	}
	return ""
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
}

// scaleRow is one row of a bench/SCALE.md table, with the heading it is under.
type scaleRow struct {
	heading string
	cells   []string
}

// scaleRows reads the tables of bench/SCALE.md (make bench-scale) and returns,
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
	fmt.Fprintf(w, "## Scale: 100 to 10,000 partitions (from bench/SCALE.md)\n\n")
	fmt.Fprintf(w, "`make bench-scale` (not run by `make bench`: in-process kfake clusters of 3 brokers each and dynalite, the real binary; see [SCALE.md](%s) for every step and the history). ", r.scaleLink)
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
// Replicator and DynamoDB figures are the scale report's (read from the AWS
// price pages in 2026-11); the others were taken from the AWS price
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
	fmt.Fprintf(w, "DynamoDB $0.625 per million write units (as bench/SCALE.md states them, from the AWS price pages read in 2026-11); ")
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
