package main

// The profile of catchup next to the model's: the CPU each spends a GB,
// area by area, from perf record of both in interleaved rounds. What
// catchup spends beyond the model is what a copier that re-encodes could
// still save; the rest the model spends too.

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
)

// perfRun is one copy under perf record: CPU-s a GB by area and by symbol.
type perfRun struct {
	cpu    float64 // CPU-s a GB, all of it
	areas  map[string]float64
	symbol map[string]float64
}

// readPerfRun reads perf-TOOL-I.txt for a copy of gb GB; ok false if the
// file is missing or holds no samples.
func readPerfRun(path string, gb float64) (perfRun, bool) {
	data, err := os.ReadFile(path)
	if err != nil || gb <= 0 {
		return perfRun{}, false
	}
	m := perfEventsRE.FindSubmatch(data)
	samples := perfSamples(path)
	if m == nil || len(samples) == 0 {
		return perfRun{}, false
	}
	cpu := atof(string(m[1])) / 1e9 / gb // cpu-clock counts nanoseconds
	run := perfRun{cpu: cpu, areas: map[string]float64{}, symbol: map[string]float64{}}
	for _, x := range samples {
		v := x.pct / 100 * cpu
		run.areas[areaOf(x)] += v
		run.symbol[x.name] += v
	}
	return run, true
}

// spread is a median with the lowest and highest beside it.
type spread struct{ med, lo, hi float64 }

func spreadOf(v []float64) spread {
	if len(v) == 0 {
		return spread{}
	}
	return spread{median(v), slices.Min(v), slices.Max(v)}
}

func (s spread) String() string {
	if s.lo == s.hi {
		return f2(s.med)
	}
	return fmt.Sprintf("%s (%s–%s)", f2(s.med), f2(s.lo), f2(s.hi))
}

// besideModel is catchup's and the model's runs under perf record, read.
type besideModel struct {
	catchup, model []perfRun
}

func (r *results) besideModel(s *step) *besideModel {
	if s == nil || !s.ok {
		return nil
	}
	rounds := int(atof(s.env["profile_rounds"]))
	gb := s.mb() / 1000
	var b besideModel
	for i := 1; i <= rounds; i++ {
		if c, ok := readPerfRun(filepath.Join(s.dir, fmt.Sprintf("perf-catchup-%d.txt", i)), gb); ok {
			b.catchup = append(b.catchup, c)
		}
		if m, ok := readPerfRun(filepath.Join(s.dir, fmt.Sprintf("perf-model-%d.txt", i)), gb); ok {
			b.model = append(b.model, m)
		}
	}
	if len(b.catchup) == 0 || len(b.model) == 0 {
		return nil
	}
	return &b
}

// of collects one figure of each run.
func of(runs []perfRun, f func(perfRun) float64) []float64 {
	v := make([]float64, len(runs))
	for i, x := range runs {
		v[i] = f(x)
	}
	return v
}

// writeBesideModel: the areas where catchup spends more a GB than the
// model, and the symbols that catchup spends most on beyond it.
func (r *results) writeBesideModel(w *bufio.Writer, shape string, s *step) {
	b := r.besideModel(s)
	if b == nil {
		return
	}
	fmt.Fprintf(w, "## catchup next to the model (%s)\n\n", shape)
	fmt.Fprintf(w, "`catchup run` and the model copier, each under `perf record -e cpu-clock` for %d copies of the backlog in interleaved rounds (the order swapped each round), "+
		"their CPU-s a GB by area: the median, lowest–highest beside it. The model does only what a copier that re-encodes must (\"The model copier\" above); "+
		"what catchup spends beyond it is what such a copier could still save, and the rest the model spends too. "+
		"The model passes a compressed source batch through as it is (re-stamped) where catchup decompresses it and compresses its records again with their provenance headers: "+
		"on compressed batches, the codec's work is in the difference. perf's own cost is in both.\n\n", len(b.catchup))
	names := map[string]bool{}
	for _, x := range append(slices.Clone(b.catchup), b.model...) {
		for n := range x.areas {
			names[n] = true
		}
	}
	type row struct {
		name       string
		c, m, diff spread
	}
	var rows []row
	for n := range names {
		c := spreadOf(of(b.catchup, func(x perfRun) float64 { return x.areas[n] }))
		m := spreadOf(of(b.model, func(x perfRun) float64 { return x.areas[n] }))
		if c.med < 0.005 && m.med < 0.005 {
			continue
		}
		rows = append(rows, row{n, c, m, spread{med: c.med - m.med}})
	}
	sort.Slice(rows, func(i, j int) bool {
		return rows[i].diff.med > rows[j].diff.med || rows[i].diff.med == rows[j].diff.med && rows[i].name < rows[j].name
	})
	c := spreadOf(of(b.catchup, func(x perfRun) float64 { return x.cpu }))
	m := spreadOf(of(b.model, func(x perfRun) float64 { return x.cpu }))
	fmt.Fprintf(w, "| CPU-s a GB, by area | catchup | model | catchup − model |\n|---|--:|--:|--:|\n")
	for _, x := range rows {
		fmt.Fprintf(w, "| %s | %s | %s | %+.3f |\n", x.name, x.c, x.m, x.diff.med)
	}
	fmt.Fprintf(w, "| **all** | %s | %s | %+.3f |\n\n", c, m, c.med-m.med)

	// The symbols catchup spends most on beyond the model: the model's
	// own code has other names, so this shows catchup's per-record work
	// next to the shared parts (CRC-32C, copies, the kernel) it does more of.
	syms := map[string]bool{}
	for _, x := range b.catchup {
		for n := range x.symbol {
			syms[n] = true
		}
	}
	type sym struct {
		name string
		diff float64
	}
	var top []sym
	for n := range syms {
		d := median(of(b.catchup, func(x perfRun) float64 { return x.symbol[n] })) - median(of(b.model, func(x perfRun) float64 { return x.symbol[n] }))
		if d >= 0.002 {
			top = append(top, sym{n, d})
		}
	}
	sort.Slice(top, func(i, j int) bool {
		return top[i].diff > top[j].diff || top[i].diff == top[j].diff && top[i].name < top[j].name
	})
	fmt.Fprintf(w, "The symbols catchup spends most on beyond the model, CPU-s a GB (medians):\n\n| catchup − model | symbol |\n|--:|---|\n")
	for i, x := range top {
		if i == 15 {
			break
		}
		fmt.Fprintf(w, "| %+.3f | `%s` |\n", x.diff, x.name)
	}
	fmt.Fprintln(w)
}
