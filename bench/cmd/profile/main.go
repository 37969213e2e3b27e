// Command profile runs one pipeline exactly as `catchup run` does
// (pipeline.Open, then Engine.Run, every default from the configuration)
// with the Go CPU profiler on, so that the benchmark can say where a copy's
// CPU goes without changing the CLI:
//
//	profile -c pipelines.yaml [-pipeline NAME] -cpuprofile cpu.pprof [-memprofile heap.pprof]
//	go tool pprof -top profile cpu.pprof
//	go tool pprof -top -sample_index=inuse_space profile heap.pprof
//
// With -memprofile it also writes the heap profile taken when the Go heap
// in use was at its highest (sampled every 50 ms): what the peak RSS is
// made of.
//
// It prints one JSON object: records and bytes copied, wall_s and cpu_s
// (user+sys of this process) of the run, and rss_kb (VmHWM). It fails
// unless every partition was copied to its window end.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"

	cfg "github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/procstat"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

type result struct {
	Records int64   `json:"records"`
	Bytes   int64   `json:"bytes"`
	WallS   float64 `json:"wall_s"`
	CPUS    float64 `json:"cpu_s"`
	RSSKB   int64   `json:"rss_kb"`
}

func main() { os.Exit(mainErr()) }

func mainErr() int {
	conf := flag.String("c", "", "catchup configuration file (required)")
	name := flag.String("pipeline", "", "pipeline (default: the first)")
	out := flag.String("cpuprofile", "", "write the CPU profile here (required)")
	mem := flag.String("memprofile", "", "write the heap profile of the highest heap in use here")
	flag.Parse()
	if *conf == "" || *out == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: profile -c FILE [-pipeline NAME] -cpuprofile FILE [-memprofile FILE]")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *mem != "" {
		peak := watchHeap(ctx)
		defer func() {
			if err := os.WriteFile(*mem, peak(), 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "profile:", err)
			}
		}()
	}
	res, err := run(ctx, *conf, *name, *out)
	if err == nil {
		err = json.NewEncoder(os.Stdout).Encode(res)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "profile:", err)
		return 1
	}
	return 0
}

func run(ctx context.Context, conf, name, out string) (res *result, err error) {
	f, err := cfg.Load(conf)
	if err != nil {
		return nil, err
	}
	var p *cfg.Pipeline
	for i := range f.Pipelines {
		if name == "" || f.Pipelines[i].Name == name {
			p = &f.Pipelines[i]
			break
		}
	}
	if p == nil {
		return nil, fmt.Errorf("no pipeline %q", name)
	}
	w, err := os.Create(out)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}()
	m := procstat.StartSelf()
	if err := pprof.StartCPUProfile(w); err != nil {
		return nil, err
	}
	rep, err := copyOnce(ctx, f, p)
	pprof.StopCPUProfile()
	wall, cpu := m.Stop()
	if err != nil {
		return nil, err
	}
	copied, bytes, failed := rep.Totals()
	for _, r := range rep.Partitions {
		if r.Status != replicate.StatusDone {
			return nil, fmt.Errorf("partition %s: status %s, error %v", r.Partition, r.Status, r.Err)
		}
	}
	if failed != 0 {
		return nil, errors.New("partitions failed")
	}
	return &result{Records: copied, Bytes: bytes, WallS: wall, CPUS: cpu, RSSKB: procstat.PeakRSSKB("self")}, nil
}

func copyOnce(ctx context.Context, f *cfg.File, p *cfg.Pipeline) (*replicate.Report, error) {
	pl, err := pipeline.Open(ctx, f, p, pipeline.Options{})
	if err != nil {
		return nil, err
	}
	defer pl.Close()
	return pl.Engine.Run(ctx)
}

// watchHeap samples the Go heap in use every 50 ms until ctx ends or the
// returned function is called, and keeps the heap profile of the highest
// sample; the function returns it.
func watchHeap(ctx context.Context) func() []byte {
	var (
		mu   sync.Mutex // prof
		top  uint64
		prof bytes.Buffer
		done = make(chan struct{})
	)
	sample := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse <= top {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		top = ms.HeapInuse
		prof.Reset()
		_ = pprof.Lookup("heap").WriteTo(&prof, 0)
	}
	go func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-done:
				return
			case <-t.C:
				sample()
			}
		}
	}()
	return func() []byte {
		close(done)
		mu.Lock()
		defer mu.Unlock()
		return bytes.Clone(prof.Bytes())
	}
}
