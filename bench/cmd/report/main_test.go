package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMedianRun(t *testing.T) {
	run := func(rate float64, ok bool) *step { return &step{rate: rate, ok: ok} }
	tests := []struct {
		name string
		runs []*step
		want float64 // rate of the run picked; 0: none
	}{
		{"none", nil, 0},
		{"one", []*step{run(5, true)}, 5},
		{"odd: the middle one", []*step{run(3, true), run(1, true), run(2, true)}, 2},
		{"even: the slower middle one", []*step{run(4, true), run(1, true), run(3, true), run(2, true)}, 2},
		{"failed runs do not count", []*step{run(9, false), run(1, true), run(3, true)}, 1},
		{"a run without a rate does not count", []*step{run(0, true), run(7, true)}, 7},
		{"all failed", []*step{run(1, false), run(2, false)}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := medianRun(tt.runs)
			switch {
			case tt.want == 0 && got != nil:
				t.Errorf("medianRun(%s) = run at %v records/s, want none", tt.name, got.rate)
			case tt.want != 0 && (got == nil || got.rate != tt.want):
				t.Errorf("medianRun(%s) = %v, want the run at %v records/s", tt.name, got, tt.want)
			}
		})
	}
}

// TestRangeRatio: a ratio is decided only when every run of one tool beat
// every run of the other.
func TestRangeRatio(t *testing.T) {
	tests := []struct {
		name        string
		a, aLo, aHi float64
		b, bLo, bHi float64
		want        string
		decided     bool
	}{
		{"apart, above", 120, 115, 125, 100, 95, 105, "1.20 (1.10–1.32) **decided**", true},
		{"apart, below", 80, 78, 82, 100, 95, 105, "0.80 (0.74–0.86) **decided**", true},
		{"overlapping", 110, 95, 125, 100, 90, 110, "1.10 (0.86–1.39) not resolved: the runs overlap", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := rangeRatio(tt.a, tt.aLo, tt.aHi, tt.b, tt.bLo, tt.bHi)
			if got := q.String(); got != tt.want || q.decided() != tt.decided {
				t.Errorf("rangeRatio(%v [%v–%v], %v [%v–%v]) = %q, decided %v; want %q, decided %v",
					tt.a, tt.aLo, tt.aHi, tt.b, tt.bLo, tt.bHi, got, q.decided(), tt.want, tt.decided)
			}
		})
	}
}

// fastRun writes one step of a fast copier as bench/run.sh does: COPIES
// copies of 1000 records of 100 bytes, each WALL seconds, with perf stat's
// task-clock of CPU milliseconds (no .perf file when cpuMS is 0: rusage).
// env lines ("key=value") follow the step's own, and override them as
// run.sh's later lines do.
func fastRun(write func(path, text string), n int, shape, tool string, round, copies int, wall float64, cpuMS float64, env ...string) {
	d := fmt.Sprintf("steps/%02d-%s-%s/", n, shape, tool)
	write(d+"step.env", fmt.Sprintf("shape=%s\ntool=%s\nround=%d\nvalue_bytes=100\nrecords=1000\nstatus=ok\n"+
		"src_cpu_before=0\nsrc_cpu_after=1\ndst_cpu_before=0\ndst_cpu_after=1\n", shape, tool, round)+strings.Join(append(env, ""), "\n"))
	name := strings.TrimSuffix(tool, "-baseline")
	for i := 1; i <= copies; i++ {
		write(fmt.Sprintf("%s%s-%d.time", d, name, i), fmt.Sprintf("%.2f 0.40 0.40 %d\n", wall, 100*1024))
		if cpuMS > 0 {
			write(fmt.Sprintf("%s%s-%d.perf", d, name, i), fmt.Sprintf("# started on Thu Dec  3\n\n%.2f,msec,task-clock,1,100.00,0.4,CPUs utilized\n"+
				"%d,ns,user_time,1,100.00,,\n%d,ns,system_time,1,100.00,,\n", cpuMS, int64(cpuMS*0.75e6), int64(cpuMS*0.25e6)))
		}
	}
}

func report(t *testing.T, dir string) string {
	t.Helper()
	r, err := load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	w := bufio.NewWriter(&b)
	r.write(w)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestReportRoundsAndBaseline writes a results folder as bench/run.sh
// would (three rounds of catchup and of the baseline, each step two copies
// of 1000 records, CPU from perf stat) and checks that the report shows
// the medians, their ranges, the copies, perf's CPU rather than rusage's,
// and a ratio decided only when the runs are apart.
func TestReportRoundsAndBaseline(t *testing.T) {
	dir := t.TempDir()
	write := writer(t, dir)
	write("meta.env", "partitions=8\nrepeat=3\nbaseline=abc1234\nbaseline_commit=abc1234ffff\nbaseline_subject=before\ncores=2\n")
	n := 0
	// seconds a copy: this commit 10, 8, 20 (2000 records a step: median
	// 100 records/s, 50–125); baseline 25, 20, 40 (median 40, 25–50); CPU
	// 200 ms a copy, so 2000 records of 100 bytes = 0.2 MB in 0.4 CPU-s =
	// 0.5 MB per CPU-s for both
	for i, walls := range [][2]float64{{10, 25}, {8, 20}, {20, 40}} {
		for j, tool := range []string{"catchup", "catchup-baseline"} {
			n++
			fastRun(write, n, "100b", tool, i+1, 2, walls[j], 200)
		}
	}
	got := report(t, dir)
	for _, want := range []string{
		"| **catchup run**, file store | 3 × 2 copies | 100 | 50–125 | 0.0 | 0.5 | 0.5–0.5 | 2000.00 | 25% |",
		"| catchup run, file store — baseline abc1234 | 3 × 2 copies | 40 | 25–50 |",
		"| catchup run, file store — baseline abc1234 | 2.50 (1.00–5.00) not resolved: the runs overlap | 1.00 (1.00–1.00) not resolved: the runs overlap |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q; got:\n%s", want, got)
		}
	}
}

// TestReportFlagsACopierAboveTheModel: a copier whose runs reach the
// model's is flagged where the ratio is and at the top of the report, and
// one below it is not.
func TestReportFlagsACopierAboveTheModel(t *testing.T) {
	tests := []struct {
		name      string
		modelWall float64 // seconds a copy of the model's; catchup's take 10, 11, 12
		flagged   bool
	}{
		{"the copy below the model", 5, false},
		{"the copy above the model", 20, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			write := writer(t, dir)
			write("meta.env", "partitions=8\nrepeat=3\ncores=2\n")
			for i, wall := range []float64{10, 11, 12} {
				fastRun(write, 2*i+1, "1k", "model", i+1, 1, tt.modelWall+float64(i)/10, 100)
				fastRun(write, 2*i+2, "1k", "catchup", i+1, 1, wall, 100)
			}
			got := report(t, dir)
			marks := map[string]bool{
				"the flag at the ratio":  strings.Contains(got, "**⚠ NOT BELOW THE MODEL: the model is no limit here**"),
				"the warning at the top": strings.Contains(got, "> **⚠ A COPIER'S RUNS REACH THE MODEL"),
			}
			for what, found := range marks {
				if found != tt.flagged {
					t.Errorf("%s: found %v, want %v; report:\n%s", what, found, tt.flagged, got)
				}
			}
		})
	}
}

// TestReportWindowAndRusage: a slow peer is read over its window (records
// and CPU-s of the window, not of the backlog), and a fast copier without
// perf stat's file falls back to /usr/bin/time's user+sys.
func TestReportWindowAndRusage(t *testing.T) {
	dir := t.TempDir()
	write := writer(t, dir)
	write("meta.env", "partitions=8\nrepeat=1\ncores=2\n")
	fastRun(write, 1, "1k", "catchup", 1, 1, 10, 0)
	write("steps/02-1k-mm1/step.env", "shape=1k\ntool=mm1\nround=1\nvalue_bytes=1000\nrecords=1000000\nstatus=ok\n")
	write("steps/02-1k-mm1/wait.json", `{"first_s":5,"first_records":10,"full_s":30,"records":600000,"cpu_s":40,"first_cpu_s":10,"rss_kb":409600,`+
		`"window_s":20,"window_records":400000,"window_cpu_s":10}`)
	got := report(t, dir)
	for _, want := range []string{
		// 1000 records in 10 s; 0.1 MB over 0.8 CPU-s (rusage) = 0.125: "0"
		"| **catchup run**, file store | 1 × 1 copies | 100 | one run | 0.0 | 0.1 | one run | 8000.00 | – |",
		// 400,000 records in 20 s = 20,000/s, 20 MB/s, 400 MB over 10 CPU-s
		"| MirrorMaker 1 | 1, window 20 s | 20,000 | one run | 20.0 | 40.0 | one run | 25.00 | – | 400 | 20.0 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q; got:\n%s", want, got)
		}
	}
}

// writer returns a function that writes a file of a results folder dir.
func writer(t *testing.T, dir string) func(path, text string) {
	return func(path, text string) {
		t.Helper()
		p := filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRoundsText: BENCH_REPEAT with per-shape rounds reads as words, not as
// the variable's syntax.
func TestRoundsText(t *testing.T) {
	for in, want := range map[string]string{
		"5":                      "5 interleaved rounds",
		"5 1k-zstd=3 1k-keyed=3": "5 interleaved rounds (3 for 1k-zstd, 3 for 1k-keyed)",
	} {
		if got := roundsText(in); got != want {
			t.Errorf("roundsText(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPeerShapesText names the shapes that ran MirrorMaker 2 tuned alone,
// and says nothing when every shape ran every peer.
func TestPeerShapesText(t *testing.T) {
	for _, c := range []struct {
		shapes, peers string
		set           bool
		want          string
	}{
		{"1k 100b 1k-zstd", "1k", true, "; every peer on 1k, MirrorMaker 2 tuned alone on 100b, 1k-zstd"},
		{"100b", "1k", true, "; every peer on 1k, MirrorMaker 2 tuned alone on 100b"},
		{"1k", "1k", true, ""},
		{"1k 100b", "", true, "; every peer on no shape, MirrorMaker 2 tuned alone on 1k, 100b"},
		{"1k 100b", "", false, ""},
	} {
		m := map[string]string{"shapes": c.shapes}
		if c.set {
			m["peer_shapes"] = c.peers
		}
		if got := peerShapesText(m); got != c.want {
			t.Errorf("shapes %q, peer shapes %q: %q, want %q", c.shapes, c.peers, got, c.want)
		}
	}
}

// TestScaleLink: the scale report's link resolves from the folder the report
// is written to, so that docs/benchmarks.md reaches bench/SCALE.md.
func TestScaleLink(t *testing.T) {
	tests := []struct{ out, scale, want string }{
		{"docs/benchmarks.md", "bench/SCALE.md", "../bench/SCALE.md"},
		{"bench/REPORT.md", "bench/SCALE.md", "SCALE.md"},
		{"", "bench/SCALE.md", "bench/SCALE.md"},
		{"docs/benchmarks.md", "", ""},
	}
	for _, tt := range tests {
		if got := scaleLink(tt.out, tt.scale); got != tt.want {
			t.Errorf("scaleLink(%q, %q) = %q, want %q", tt.out, tt.scale, got, tt.want)
		}
	}
	// run.sh passes absolute paths
	dir := t.TempDir()
	out, scale := filepath.Join(dir, "docs", "benchmarks.md"), filepath.Join(dir, "bench", "SCALE.md")
	if got := scaleLink(out, scale); got != "../bench/SCALE.md" {
		t.Errorf("scaleLink(%q, %q) = %q, want ../bench/SCALE.md", out, scale, got)
	}
}

// TestReportTargetCost: the fast copiers' steps are set beside what the
// target's brokers spent a GB in each, with the correlation of the two; a
// one-off step is left out of both.
func TestReportTargetCost(t *testing.T) {
	dir := t.TempDir()
	write := writer(t, dir)
	write("meta.env", "partitions=8\nrepeat=3\ncores=2\n")
	// one copy of 1000 records of 100 bytes (0.0001 GB) a step: records/s
	// 1000/wall; the target's CPU-s a GB (1000 - records/s) / 100, a line
	steps := []struct {
		tool string
		wall float64
	}{{"catchup", 10}, {"franzcopy", 5}, {"catchup", 4}, {"franzcopy", 2.5}, {"catchup", 2}, {"franzcopy", 1.25}, {"catchup-dynamodb", 50}}
	for i, st := range steps {
		dst := (1000 - 1000/st.wall) / 1e6
		fastRun(write, i+1, "100b", st.tool, i/2+1, 1, st.wall, 100, "dst_cpu_before=2", fmt.Sprintf("dst_cpu_after=%g", 2+dst))
	}
	got := report(t, dir)
	want := "The target's brokers spent, in CPU-s a GB copied, lowest–highest over the steps: **catchup run**, file store 5.00–9.00; " +
		"franz-go copier (bench/cmd/franzcopy) 2.00–8.00. Over these 6 steps a step's records/s and its target brokers' CPU-s a GB correlate at r = -1.00 "
	if !strings.Contains(got, want) {
		t.Errorf("report lacks %q; got:\n%s", want, got)
	}
}

func TestPearson(t *testing.T) {
	tests := []struct {
		x, y []float64
		want string
	}{
		{[]float64{1, 2, 3}, []float64{2, 4, 6}, "1.00"},
		{[]float64{1, 2, 3}, []float64{3, 2, 1}, "-1.00"},
		{[]float64{1, 2, 3, 4}, []float64{1, 3, 3, 1}, "0.00"},
		{[]float64{1, 2, 3}, []float64{5, 5, 5}, "NaN"},
	}
	for _, tt := range tests {
		if got := fmt.Sprintf("%.2f", pearson(tt.x, tt.y)); got != tt.want {
			t.Errorf("pearson(%v, %v) = %s, want %s", tt.x, tt.y, got, tt.want)
		}
	}
}

// TestReportStored: the bytes of the target's log a value byte, per copier,
// lowest–highest over its steps (one figure when they agree), and the seed
// named by what run.sh says seeded it, with a rate of its own or from its
// time.
func TestReportStored(t *testing.T) {
	dir := t.TempDir()
	write := writer(t, dir)
	write("meta.env", "partitions=8\nrepeat=2\ncores=2\n")
	write("steps/01-1k-zstd-seed/step.env", "shape=1k-zstd\ntool=seed\nround=0\nvalue_bytes=100\nrecords=1000\nstatus=ok\n"+
		"seeder=kafkactl seed (franz-go)\nvalues=JSON orders\n")
	write("steps/01-1k-zstd-seed/seed.time", "4.00 1 1 1000\n")
	// 1000 records of 100 bytes a copy: 100,000 value bytes
	for i, st := range []struct {
		tool string
		log  int
	}{{"catchup", 25000}, {"franzcopy", 100000}, {"catchup", 26000}, {"franzcopy", 100000}} {
		// franzcopy's steps two copies each
		fastRun(write, i+2, "1k-zstd", st.tool, i/2+1, 1+i%2, 1, 100, fmt.Sprintf("target_log_bytes=%d", st.log))
	}
	got := report(t, dir)
	for _, want := range []string{
		"The target's log held, in bytes a value byte copied (one replica, after each step's last copy): " +
			"**catchup run**, file store 0.25–0.26; franz-go copier (bench/cmd/franzcopy) 1.00.",
		"Seeded with kafkactl seed (franz-go) at 250 records/s in 4 s; values: JSON orders.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q; got:\n%s", want, got)
		}
	}
}

// TestReportCopiesRSS: the peak RSS target shows, beside the median run's
// peak, the spread of every copy's peak and how many were above 128 MiB.
func TestReportCopiesRSS(t *testing.T) {
	dir := t.TempDir()
	write := writer(t, dir)
	write("meta.env", "partitions=8\nrepeat=2\ncores=2\n")
	// two runs of two copies; the second copy of the second run at 128.4
	// MiB, above the line although it rounds to it
	for i, kib := range [][]int{{100 << 10, 110 << 10}, {120 << 10, 131482}} {
		fastRun(write, i+1, "1k-zstd", "catchup", i+1, 2, float64(1+i), 100)
		for c, k := range kib {
			write(fmt.Sprintf("steps/%02d-1k-zstd-catchup/catchup-%d.time", i+1, c+1), fmt.Sprintf("%d.00 0.40 0.40 %d\n", 1+i, k))
		}
	}
	got := report(t, dir)
	if want := "(its 4 copies: 100–128.4 MiB, 1 above 128)"; !strings.Contains(got, want) {
		t.Errorf("report lacks %q; got:\n%s", want, got)
	}
}

// TestReportRequests: the brokers' request counts a GB per fast copier,
// median and range over its steps; a column that is zero throughout (no
// followers on a single broker) and a one-off step are left out, as is a
// copier whose steps recorded no counts.
func TestReportRequests(t *testing.T) {
	dir := t.TempDir()
	write := writer(t, dir)
	write("meta.env", "partitions=8\nrepeat=3\ncores=2\n")
	// 1000 records of 100 bytes a copy: 0.0001 GB
	for i, st := range []struct {
		tool            string
		copies, produce int
	}{{"catchup", 1, 15}, {"franzcopy", 2, 12}, {"catchup", 1, 16}, {"franzcopy", 2, 14}, {"catchup", 1, 14}, {"catchup-dynamodb", 1, 99}} {
		fastRun(write, i+1, "100b", st.tool, i/2+1, st.copies, 1, 100,
			fmt.Sprintf("dst_produce_requests=%d", st.produce), "dst_follower_fetches=0",
			fmt.Sprintf("src_fetch_requests=%d", 10*st.copies), fmt.Sprintf("src_all_requests=%d", 30*st.copies))
	}
	for i := range 2 { // no counters recorded
		fastRun(write, 10+i, "100b", "model", i+1, 1, 1, 100)
	}
	got := report(t, dir)
	want := "| copier | produce requests to the target | fetches from the source | requests to the source, all kinds |\n" +
		"|---|--:|--:|--:|\n" +
		"| **catchup run**, file store | 150,000 (140,000–160,000) | 100,000 | 300,000 |\n" +
		"| franz-go copier (bench/cmd/franzcopy) | 65,000 (60,000–70,000) | 100,000 | 300,000 |\n\n"
	if !strings.Contains(got, want) {
		t.Errorf("report lacks\n%s\ngot:\n%s", want, got)
	}
}

// TestReportBesideModel: the profiles of catchup and the model in two
// rounds become CPU-s a GB by area, medians with their spread, and the
// difference, with the symbols catchup spends more on than the model.
func TestReportBesideModel(t *testing.T) {
	dir := t.TempDir()
	write := writer(t, dir)
	write("meta.env", "partitions=8\nrepeat=1\ncores=2\n")
	// 1,000,000 records of 1000 bytes: 1 GB. perf's event count is in ns.
	perf := func(ns int64, lines ...string) string {
		return fmt.Sprintf("# Samples: 4K of event 'cpu-clock'\n# Event count (approx.): %d\n#\n%s\n", ns, strings.Join(lines, "\n"))
	}
	d := "steps/01-1k-profile/"
	write(d+"step.env", "shape=1k\ntool=profile\nround=1\nvalue_bytes=1000\nrecords=1000000\nstatus=ok\nprofiler=perf\n")
	write(d+"profile.time", "2.00 0.60 0.20 65536\n")
	write(d+"perf-all.txt", perf(800e6, "    50.00%  catchup  [.] hash/crc32.castagnoliSSE42Triple.abi0", "    50.00%  [kernel.kallsyms]  [k] _copy_to_iter"))
	b := "steps/02-1k-profile-beside/"
	write(b+"step.env", "shape=1k\ntool=profile-beside\nround=1\nvalue_bytes=1000\nrecords=1000000\nstatus=ok\nprofile_rounds=2\n")
	// catchup: 0.8 and 1.0 CPU-s a GB, half CRC, a quarter its own decoder,
	// a quarter page clearing; the model: 0.6 both times, all CRC.
	for i, ns := range []int64{800e6, 1000e6} {
		write(fmt.Sprintf("%sperf-catchup-%d.txt", b, i+1), perf(ns,
			"    50.00%  catchup  [.] hash/crc32.castagnoliSSE42Triple.abi0",
			"    25.00%  catchup  [.] github.com/kafka-catchup/catchup/internal/kafkago/wire.(*recordDecoder).appendRecords",
			"    25.00%  [kernel.kallsyms]  [k] clear_page_erms"))
		write(fmt.Sprintf("%sperf-model-%d.txt", b, i+1), perf(600e6, "   100.00%  model  [.] hash/crc32.castagnoliSSE42Triple.abi0"))
	}
	got := report(t, dir)
	for _, want := range []string{
		"## catchup next to the model (1k)",
		"| catchup (internal/...) | 0.23 (0.20–0.25) | 0.00 | +0.225 |",
		"| kernel: page faults and memory | 0.23 (0.20–0.25) | 0.00 | +0.225 |",
		"| CRC-32C of record batches | 0.45 (0.40–0.50) | 0.60 | -0.150 |",
		"| **all** | 0.90 (0.80–1.00) | 0.60 | +0.300 |",
		"| +0.225 | `clear_page_erms` |",
		"| +0.225 | `github.com/kafka-catchup/catchup/internal/kafkago/wire.(*recordDecoder).appendRecords` |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q; got:\n%s", want, got)
		}
	}
	if strings.Contains(got, "\n| profile-beside |") {
		t.Errorf("the beside-model step shows as a copier in the shape's table:\n%s", got)
	}
}

// TestReportStepsInOrder: steps past the 99th (run.sh numbers them 01 to
// 99, then 100) come after the others, in the tables and the step list,
// not between the 10th and the 11th as their names sort.
func TestReportStepsInOrder(t *testing.T) {
	dir := t.TempDir()
	write := writer(t, dir)
	write("meta.env", "partitions=8\nrepeat=1\ncores=2\n")
	for _, n := range []int{9, 10, 11, 99} {
		fastRun(write, n, "1k", "catchup", 1, 1, 10, 100)
	}
	fastRun(write, 100, "100b", "catchup", 1, 1, 10, 100)
	got := report(t, dir)
	first, second := strings.Index(got, "## 1 KiB values"), strings.Index(got, "## 100-byte values")
	if first < 0 || second < 0 || second < first {
		t.Errorf("the 100th step's shape comes at %d, before the first shape's at %d:\n%s", second, first, got)
	}
	if i, j := strings.Index(got, "| 99 | 1k |"), strings.Index(got, "| 100 | 100b |"); i < 0 || j < i {
		t.Errorf("step 100 is listed before step 99:\n%s", got)
	}
}
