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

// TestReportRepeatsAndBaseline writes a results folder as bench/run.sh
// would (three catchup runs, three of the baseline, 1000 records each) and
// checks that the report shows the medians, their range and the ratios.
func TestReportRepeatsAndBaseline(t *testing.T) {
	dir := t.TempDir()
	write := writer(t, dir)
	write("meta.env", "partitions=8\nrepeat=3\nbaseline=abc1234\nbaseline_commit=abc1234ffff\nbaseline_subject=before\ncores=2\n")
	n := 0
	// wall seconds: this commit 10, 8, 20 (median 10 s: 100 records/s);
	// baseline 25, 20, 40 (median 25 s: 40 records/s)
	for i, walls := range [][2]float64{{10, 25}, {8, 20}, {20, 40}} {
		for j, tool := range []string{"catchup", "catchup-baseline"} {
			n++
			d := fmt.Sprintf("steps/%02d-100b-%s/", n, tool)
			write(d+"step.env", fmt.Sprintf("shape=100b\ntool=%s\nround=%d\nvalue_bytes=100\nrecords=1000\nstatus=ok\n"+
				"src_cpu_before=0\nsrc_cpu_after=1\ndst_cpu_before=0\ndst_cpu_after=1\n", tool, i+1))
			write(d+"catchup.time", fmt.Sprintf("%.2f 0.50 0.50 %d\n", walls[j], 100*1024))
		}
	}
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
	got := b.String()
	for _, want := range []string{
		"| **catchup run**, file store | 100 | median of 3: 50–125 |",
		"| catchup run, file store — baseline abc1234 | 40 | median of 3: 25–50 |",
		"| catchup run, file store | 2.50 | 1.00 | 1.00 | 1.00 | overlap: within this run's noise |",
		"| 100b | catchup, run 2 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q; got:\n%s", want, got)
		}
	}
}

// TestReportRefusesRatiosAboveOne checks that a copy faster than a ceiling
// is flagged where the ratio is and at the top of the report, and that a
// copy below every ceiling is not.
func TestReportRefusesRatiosAboveOne(t *testing.T) {
	tests := []struct {
		name      string
		fetchWall float64 // seconds for fetch-only's 1000 records; catchup takes 10
		flagged   bool
	}{
		{"the copy below the ceiling", 5, false},
		{"the copy above the ceiling", 20, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			write := writer(t, dir)
			write("meta.env", "partitions=8\nrepeat=1\ncores=2\n")
			env := "shape=100b\ntool=%s\nround=1\nvalue_bytes=100\nrecords=1000\nstatus=ok\n"
			write("steps/01-100b-fetch-only/step.env", fmt.Sprintf(env, "fetch-only"))
			write("steps/01-100b-fetch-only/ceiling.out", fmt.Sprintf(`{"records":1000,"bytes":100000,"wall_s":%g,"cpu_s":1}`, tt.fetchWall))
			write("steps/02-100b-catchup/step.env", fmt.Sprintf(env, "catchup"))
			write("steps/02-100b-catchup/catchup.time", fmt.Sprintf("10.00 0.50 0.50 %d\n", 100*1024))
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
			got := b.String()
			marks := map[string]bool{
				"**⚠ ABOVE 1: NOT A BOUND**": strings.Contains(got, "| 2.00 **⚠ ABOVE 1: NOT A BOUND**"),
				"the warning at the top":     strings.Contains(got, "> **⚠ CEILING RATIOS ABOVE 1"),
				"the target refused":         strings.Contains(got, "| 100b | 2.00 × **⚠ ABOVE 1: NOT A BOUND** | **refused**"),
			}
			for what, found := range marks {
				if found != tt.flagged {
					t.Errorf("%s: found %v, want %v; report:\n%s", what, found, tt.flagged, got)
				}
			}
		})
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
