// Command ceiling measures what catchup's own copy loop can do with one of
// its two ends taken away, so that each figure is an upper bound of a copy
// on the same brokers and cores. Every step runs replicate.Engine, the
// engine catchup runs, with the pipeline's settings (fetch size,
// parallelism, producer acks and batch limits, isolation, provenance) from
// the same configuration file:
//
//   - fetch: the engine reads the whole source backlog through
//     kafkago.Source (the same decoder, CRC checks, request sizes,
//     pipelining and recycling) into a sink target that acknowledges every
//     record at once. A copy fetches the same bytes the same way, and
//     produces besides.
//
//   - produce: the backlog is first read into memory (not timed); then the
//     engine copies it from an in-memory source through kafkago.Target (the
//     same encoder, provenance header, batching and acks). A copy produces
//     the same records the same way, and fetches besides.
//
//   - both: the two at once, in one process, each its own engine: the
//     backlog in memory (not timed), then fetch-only and produce-only
//     together, timed until both are done. It is the same work a copy does
//     on the same cores, without a copy's coupling (a record is produced
//     only after it was fetched), so where brokers and catchup share few
//     cores it, not min(fetch, produce), bounds the copy.
//
//     ceiling -c pipelines.yaml [-pipeline NAME] fetch|produce|both
//
// It prints one JSON object: records, bytes (as the engine counts them,
// catchup.Record.Size with the provenance header), wall_s and cpu_s of the
// timed part (user+sys of this process from /proc/self/stat), and rss_kb,
// the peak resident set (VmHWM), which for produce-only and both includes
// the backlog held in memory. both adds fetch_wall_s and produce_wall_s,
// when each side was done. Checkpoints go to an in-memory store, which
// costs less than any store a copy uses.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"

	cfg "github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/procstat"
)

type result struct {
	Mode    string  `json:"mode"`
	Records int64   `json:"records"`
	Bytes   int64   `json:"bytes"`
	WallS   float64 `json:"wall_s"`
	CPUS    float64 `json:"cpu_s"`
	RSSKB   int64   `json:"rss_kb"`
	// both: seconds from the start until that side was done
	FetchWallS   float64 `json:"fetch_wall_s,omitempty"`
	ProduceWallS float64 `json:"produce_wall_s,omitempty"`
}

func main() { os.Exit(mainErr()) }

func mainErr() int {
	conf := flag.String("c", "", "catchup configuration file (required)")
	name := flag.String("pipeline", "", "pipeline (default: the first)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: ceiling -c FILE [-pipeline NAME] fetch|produce|both")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *conf == "" || flag.NArg() != 1 || (flag.Arg(0) != "fetch" && flag.Arg(0) != "produce" && flag.Arg(0) != "both") {
		flag.Usage()
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := run(ctx, *conf, *name, flag.Arg(0))
	if err == nil {
		err = json.NewEncoder(os.Stdout).Encode(res)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ceiling:", err)
		return 1
	}
	return 0
}

func run(ctx context.Context, conf, name, mode string) (*result, error) {
	f, err := cfg.Load(conf)
	if err != nil {
		return nil, err
	}
	p, err := pick(f, name)
	if err != nil {
		return nil, err
	}
	src, err := pipeline.ConnectReader(p.Source, p.Isolation)
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	defer src.Close()
	ps, err := src.Partitions(ctx, p.Topics.Match)
	if err != nil {
		return nil, err
	}
	if len(ps) == 0 {
		return nil, errors.New("no source partition matches the pipeline's topics")
	}
	res := &result{Mode: mode}
	if mode == "fetch" {
		m := procstat.StartSelf()
		res.Records, res.Bytes, err = copyWith(ctx, p, "fetch", src, newSink(ps, p.MapTopic))
		res.WallS, res.CPUS = m.Stop()
		res.RSSKB = procstat.PeakRSSKB("self")
		return res, err
	}
	// produce and both: the backlog into memory first, untimed.
	marks, err := src.ListOffsets(ctx, ps)
	if err != nil {
		return nil, err
	}
	mem, err := load(ctx, src, marks, int32(p.FetchBytes), p.Parallelism)
	if err != nil {
		return nil, err
	}
	tgt, err := pipeline.ConnectWriter(p.Target, p.Producer)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	defer tgt.Close()
	if mode == "produce" {
		m := procstat.StartSelf()
		res.Records, res.Bytes, err = copyWith(ctx, p, "produce", mem, tgt)
		res.WallS, res.CPUS = m.Stop()
		res.RSSKB = procstat.PeakRSSKB("self")
		return res, err
	}
	// both: fetch-only and produce-only at once, each its own engine, so
	// that only running them together differs.
	var (
		wg                  sync.WaitGroup
		fetchErr, prodErr   error
		fetchWall, prodWall float64
		fr, fb, pr, pb      int64
	)
	m := procstat.StartSelf()
	wg.Go(func() {
		fr, fb, fetchErr = copyWith(ctx, p, "fetch", src, newSink(ps, p.MapTopic))
		fetchWall, _ = m.Stop()
	})
	wg.Go(func() {
		pr, pb, prodErr = copyWith(ctx, p, "produce", mem, tgt)
		prodWall, _ = m.Stop()
	})
	wg.Wait()
	res.WallS, res.CPUS = m.Stop()
	res.RSSKB = procstat.PeakRSSKB("self")
	res.FetchWallS, res.ProduceWallS = fetchWall, prodWall
	if err := errors.Join(fetchErr, prodErr); err != nil {
		return res, err
	}
	if fr != pr || fb != pb {
		return res, fmt.Errorf("fetched %d records (%d bytes) but produced %d (%d bytes)", fr, fb, pr, pb)
	}
	res.Records, res.Bytes = fr, fb
	return res, nil
}

func pick(f *cfg.File, name string) (*cfg.Pipeline, error) {
	if len(f.Pipelines) == 0 {
		return nil, errors.New("no pipeline in the configuration")
	}
	if name == "" {
		return &f.Pipelines[0], nil
	}
	for i := range f.Pipelines {
		if f.Pipelines[i].Name == name {
			return &f.Pipelines[i], nil
		}
	}
	return nil, fmt.Errorf("no pipeline %q", name)
}

// each calls f(0..n-1), at most parallelism at a time, and returns the first
// error.
func each(n, parallelism int, f func(i int) error) error {
	if parallelism <= 0 {
		parallelism = 1
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		next  atomic.Int64
	)
	for range min(n, parallelism) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}
