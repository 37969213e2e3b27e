// Command ceiling measures what catchup's own Kafka adapters can do with the
// copy taken out: fetch-only reads the whole source backlog with
// kafkago.Source.Fetch and throws it away; produce-only first reads the
// backlog into memory (not timed), then writes it to the target with
// kafkago.Target.Produce (timed). Both use the pipeline's settings (fetch
// size, parallelism, producer acks, batch limits, isolation) from the same
// configuration file catchup runs with, so that min(fetch-only,
// produce-only) is the ceiling a copy can reach.
//
// both does the two at once, in one process: it reads the backlog into
// memory (not timed), then fetches the whole backlog again and produces the
// in-memory copy at the same time, timed until both are done. Where the
// brokers and this process share few cores, that, not min(), is what
// fetching and producing the backlog can cost together, without a copy's
// coupling (a record is produced only after it was fetched).
//
//	ceiling -c pipelines.yaml [-pipeline NAME] fetch|produce|both
//
// It prints one JSON object: records, bytes (keys and values, as catchup
// counts them), wall_s and cpu_s of the timed part (user+sys of this
// process from /proc/self/stat), and rss_kb, the peak resident set
// (VmHWM), which for produce-only and both includes the backlog held in
// memory. both adds fetch_wall_s and produce_wall_s, when each side was done;
// its records and bytes are the backlog's, moved once each way.
// Partitions are copied Parallelism at a time, each in the chunks one fetch
// returns, as the engine does; no provenance header is added.
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

	"github.com/kafka-catchup/catchup/internal/catchup"
	cfg "github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/kafkago"
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
	src, err := kafkago.NewSource(p.Source, p.Isolation, nil)
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
	marks, err := src.ListOffsets(ctx, ps)
	if err != nil {
		return nil, err
	}
	res := &result{Mode: mode}
	if mode == "fetch" {
		m := procstat.StartSelf()
		res.Records, res.Bytes, err = fetchAll(ctx, src, marks, int32(p.FetchBytes), p.Parallelism, nil)
		res.WallS, res.CPUS = m.Stop()
		res.RSSKB = procstat.PeakRSSKB("self")
		return res, err
	}
	// produce and both: the backlog into memory first, untimed.
	chunks := make([][][]catchup.Record, len(marks))
	if _, _, err := fetchAll(ctx, src, marks, int32(p.FetchBytes), p.Parallelism, chunks); err != nil {
		return nil, err
	}
	tgt, err := kafkago.NewTarget(p.Target, p.Producer, nil)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	defer tgt.Close()
	if mode == "produce" {
		m := procstat.StartSelf()
		res.Records, res.Bytes, err = produceAll(ctx, tgt, p, marks, chunks)
		res.WallS, res.CPUS = m.Stop()
		res.RSSKB = procstat.PeakRSSKB("self")
		return res, err
	}
	// both: each side Parallelism partitions at a time, as in fetch-only
	// and produce-only, so that only running them together differs.
	var (
		wg                  sync.WaitGroup
		fetchErr, prodErr   error
		fetchWall, prodWall float64
		fr, fb, pr, pb      int64
	)
	m := procstat.StartSelf()
	wg.Go(func() {
		fr, fb, fetchErr = fetchAll(ctx, src, marks, int32(p.FetchBytes), p.Parallelism, nil)
		fetchWall, _ = m.Stop()
	})
	wg.Go(func() {
		pr, pb, prodErr = produceAll(ctx, tgt, p, marks, chunks)
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

// produceAll writes chunks[i] to the target partition of marks[i],
// parallelism partitions at a time, and returns the records and bytes
// acknowledged.
func produceAll(ctx context.Context, tgt *kafkago.Target, p *cfg.Pipeline, marks []catchup.Offsets, chunks [][][]catchup.Record) (records, bytes int64, err error) {
	var nr, nb atomic.Int64
	err = each(len(marks), p.Parallelism, func(i int) error {
		tp := catchup.Partition{Topic: p.MapTopic(marks[i].Topic), Partition: marks[i].Partition.Partition}
		for _, recs := range chunks[i] {
			var b int64
			for j := range recs {
				b += int64(recs[j].Size())
			}
			// Produce may acknowledge a prefix (one request's worth) per call.
			for rest := recs; len(rest) > 0; {
				acked, _, err := tgt.Produce(ctx, tp, rest, nil)
				if err != nil {
					return err
				}
				if acked <= 0 {
					return fmt.Errorf("produce %s: no record of %d acknowledged", tp, len(rest))
				}
				rest = rest[acked:]
			}
			nr.Add(int64(len(recs)))
			nb.Add(b)
		}
		return nil
	})
	return nr.Load(), nb.Load(), err
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

// fetchAll reads every partition of marks from its log start to its end
// (last stable offset), parallelism partitions at a time, and returns the
// records and bytes read. With keep non-nil, keep[i] receives the chunks of
// partition i.
func fetchAll(ctx context.Context, src *kafkago.Source, marks []catchup.Offsets, fetchBytes int32, parallelism int, keep [][][]catchup.Record) (records, bytes int64, err error) {
	var nr, nb atomic.Int64
	err = each(len(marks), parallelism, func(i int) error {
		m := marks[i]
		end := m.LastStable
		if end <= 0 {
			end = m.HighWatermark
		}
		for off := m.LogStart; off < end; {
			f, err := src.Fetch(ctx, m.Partition, off, fetchBytes)
			if err != nil {
				return err
			}
			if f.Next <= off {
				return fmt.Errorf("fetch %s at %d: no progress", m.Partition, off)
			}
			recs := f.Records
			for len(recs) > 0 && recs[len(recs)-1].Offset >= end {
				recs = recs[:len(recs)-1]
			}
			var b int64
			for j := range recs {
				b += int64(recs[j].Size())
			}
			nr.Add(int64(len(recs)))
			nb.Add(b)
			if keep != nil && len(recs) > 0 {
				keep[i] = append(keep[i], recs)
			} else if f.Release != nil {
				// Thrown away: the Source reuses the memory, as it does
				// for catchup once a batch is produced.
				f.Release()
			}
			off = f.Next
		}
		return nil
	})
	return nr.Load(), nb.Load(), err
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
