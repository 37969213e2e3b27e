package pipeline_test

// Benchmarks of a whole pipeline between two kfake clusters over loopback,
// next to their ceiling measured in the same run:
//
//	go test -run '^$' -bench . -benchtime 3x ./internal/pipeline/
//
// By default the clusters run inside the benchmark process, so that CPU,
// heap and profiles include kfake's (which costs about as much as the
// client). With CATCHUP_BENCH_KFAKE=process every cluster runs in a child
// process (this test binary, in TestBenchKfakeHelper), and the figures are
// catchup's own, as in KAFKA-GO-NOTES.md.
//
// Metrics: MB/s and records/s count keys and values of the source records
// (1 MB = 1e6 bytes; the provenance header is not counted); peak-heap-MiB is
// the largest heap (runtime/metrics /memory/classes/heap/objects:bytes,
// garbage not yet collected included) sampled every 2ms during the timed
// operation; MB/cpu-s divides the bytes by the CPU time (user+sys) of this
// process during it; kfake-cpu-ms/op is the clusters' CPU time, in process
// mode only.

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-catchup/catchup/internal/catchup"
	cfg "github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/procstat"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

const (
	benchTopic      = "bench"
	benchPartitions = 8
	benchKeyBytes   = 16
	// seedBatchBytes is the Java producer's default batch.size: the batches
	// a source topic typically holds, which the fetch decodes one by one.
	// They are not compressed, also as the Java producer's default (franz-go
	// would compress them with snappy).
	seedBatchBytes = 16 << 10
	benchTimeout   = 10 * time.Minute

	benchKfakeModeEnv   = "CATCHUP_BENCH_KFAKE"        // "process": clusters in child processes
	benchKfakeHelperEnv = "CATCHUP_BENCH_KFAKE_HELPER" // set in a child: "<partitions>:<topic>"
)

// BenchmarkCopy drains a backlog of 1 KiB records over 8 partitions.
func BenchmarkCopy(b *testing.B) { benchCopy(b, 1024, 32<<20) }

// BenchmarkCopySmallRecords drains a backlog of 100-byte records over 8
// partitions: the per-record costs.
func BenchmarkCopySmallRecords(b *testing.B) { benchCopy(b, 100, 8<<20) }

// benchCopy seeds a source backlog of about totalBytes of values of
// valueBytes each and measures, one after the other on the same data,
// produce-only and fetch-only (the ceiling) and the copy.
func benchCopy(b *testing.B, valueBytes, totalBytes int) {
	ctx, cancel := context.WithTimeout(b.Context(), benchTimeout)
	defer cancel()
	perPartition := totalBytes / valueBytes / benchPartitions
	recs := benchRecords(perPartition, valueBytes)
	var n, size int64
	for _, rs := range recs {
		for i := range rs {
			n++
			size += int64(rs[i].Size())
		}
	}
	src := benchStartCluster(ctx, b, benchPartitions, benchTopic)
	defer src.Close()
	benchSeed(ctx, b, src, recs)
	cfgFile := benchConfig(b, src, nil, b.TempDir())
	p := &cfgFile.Pipelines[0]
	b.Logf("backlog: %d records of %d-byte values, %.1f MB, %d partitions", n, valueBytes, float64(size)/1e6, benchPartitions)

	b.Run("produce-only", func(b *testing.B) {
		ctx := benchLabel(ctx, "produce-only")
		m := newBenchMeter()
		var dst *benchCluster
		b.Cleanup(func() { dst.Close() }) // the last one; each iteration closes the one before
		for b.Loop() {
			b.StopTimer()
			dst.Close()
			dst = benchStartCluster(ctx, b, benchPartitions, benchTopic)
			tgt, err := pipeline.ConnectWriter(benchClusterConfig("target", dst), p.Producer)
			if err != nil {
				b.Fatal(err)
			}
			m.start(dst)
			b.StartTimer()
			err = benchEachPartition(func(part int) error {
				tp := catchup.Partition{Topic: benchTopic, Partition: int32(part)}
				for rest := recs[part]; len(rest) > 0; { // one request per call
					acked, _, err := tgt.Produce(ctx, tp, rest, nil)
					if err != nil {
						return fmt.Errorf("produce %s: %w", tp, err)
					}
					rest = rest[acked:]
				}
				return nil
			})
			m.stop()
			b.StopTimer()
			tgt.Close()
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		m.report(b, n, size)
	})

	b.Run("fetch-only", func(b *testing.B) {
		ctx := benchLabel(ctx, "fetch-only")
		m := newBenchMeter()
		for b.Loop() {
			m.start(src)
			// A new Source in every iteration, as the copy has: connecting is timed in both.
			s, err := pipeline.ConnectReader(p.Source, p.Isolation)
			if err != nil {
				b.Fatal(err)
			}
			var mu sync.Mutex
			var got int64
			err = benchEachPartition(func(part int) error {
				tp := catchup.Partition{Topic: benchTopic, Partition: int32(part)}
				var k int64
				for off, end := int64(0), int64(len(recs[part])); off < end; {
					f, err := s.Fetch(ctx, tp, off, p.FetchBytes)
					if err != nil {
						return err
					}
					if f.Next <= off {
						return fmt.Errorf("fetch %s at %d: no progress", tp, off)
					}
					k += int64(len(f.Records))
					off = f.Next
				}
				mu.Lock()
				got += k
				mu.Unlock()
				return nil
			})
			m.stop()
			s.Close()
			if err != nil {
				b.Fatal(err)
			}
			if got != n {
				b.Fatalf("fetched %d records, want %d", got, n)
			}
		}
		m.report(b, n, size)
	})

	b.Run("copy", func(b *testing.B) {
		ctx := benchLabel(ctx, "copy")
		m := newBenchMeter()
		var dst *benchCluster
		b.Cleanup(func() { dst.Close() }) // the last one; each iteration closes the one before
		for b.Loop() {
			b.StopTimer()
			dst.Close()
			dst = benchStartCluster(ctx, b, benchPartitions, benchTopic)
			f := benchConfig(b, src, dst, b.TempDir())
			m.start(src, dst)
			b.StartTimer()
			pl, err := pipeline.Open(ctx, f, &f.Pipelines[0], pipeline.Options{})
			if err != nil {
				b.Fatal(err)
			}
			rep, err := pl.Engine.Run(ctx)
			m.stop()
			b.StopTimer()
			if cerr := pl.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				b.Fatal(err)
			}
			benchCheckReport(b, rep, n)
			b.StartTimer()
		}
		m.report(b, n, size)
	})
}

// BenchmarkCopyOneRecordWindow times a run whose window is one record of one
// partition, end to end: list partitions and offsets, load checkpoints,
// lease, reconcile with the target, fetch, produce, commit and release, with
// the file store. warm reuses one opened pipeline, as a warm Lambda does;
// cold opens (and closes) it in every run, connections included.
func BenchmarkCopyOneRecordWindow(b *testing.B) {
	ctx, cancel := context.WithTimeout(b.Context(), benchTimeout)
	defer cancel()
	src := benchStartCluster(ctx, b, 1, benchTopic)
	defer src.Close()
	dst := benchStartCluster(ctx, b, 1, benchTopic)
	defer dst.Close()
	f := benchConfig(b, src, dst, b.TempDir())
	prod, err := kgo.NewClient(kgo.SeedBrokers(src.addrs...))
	if err != nil {
		b.Fatal(err)
	}
	defer prod.Close()
	value := make([]byte, 1024)
	produceOne := func(b *testing.B) { // untimed
		b.StopTimer()
		defer b.StartTimer()
		if err := prod.ProduceSync(ctx, &kgo.Record{Topic: benchTopic, Value: value}).FirstErr(); err != nil {
			b.Fatal(err)
		}
	}
	run := func(b *testing.B, pl *pipeline.Pipeline) {
		rep, err := pl.Engine.Run(ctx)
		if err != nil {
			b.Fatal(err)
		}
		benchCheckReport(b, rep, 1)
	}

	b.Run("warm", func(b *testing.B) {
		pl, err := pipeline.Open(ctx, f, &f.Pipelines[0], pipeline.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer pl.Close()
		produceOne(b)
		run(b, pl) // connect, and checkpoint the first record
		for b.Loop() {
			produceOne(b)
			run(b, pl)
		}
	})

	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			produceOne(b)
			pl, err := pipeline.Open(ctx, f, &f.Pipelines[0], pipeline.Options{})
			if err != nil {
				b.Fatal(err)
			}
			run(b, pl)
			if err := pl.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchLabel labels the goroutine of a sub-benchmark, and those it starts,
// with bench=op in CPU profiles (kfake's goroutines in this process get
// bench=kfake), so that
//
//	go tool pprof -tags pipeline.test cpu.out
//	go tool pprof -tagfocus bench=copy -top pipeline.test cpu.out
//
// split the CPU between kfake and the client side (catchup and kafka-go) of
// each operation; seeding and the garbage collector's background workers
// stay unlabelled.
func benchLabel(ctx context.Context, op string) context.Context {
	ctx = pprof.WithLabels(ctx, pprof.Labels("bench", op))
	pprof.SetGoroutineLabels(ctx)
	return ctx
}

// benchCheckReport fails b unless every partition of rep is done and n records
// were copied in all.
func benchCheckReport(b *testing.B, rep *replicate.Report, n int64) {
	b.Helper()
	copied, _, failed := rep.Totals()
	for _, r := range rep.Partitions {
		if r.Status != replicate.StatusDone {
			b.Fatalf("partition %s: status %s, error %v", r.Partition, r.Status, r.Err)
		}
	}
	if copied != n || failed != 0 {
		b.Fatalf("copied %d records with %d partitions failed, want %d and 0", copied, failed, n)
	}
}

// benchRecords returns perPartition records for each partition: a 16-byte
// key, a value of valueBytes (slices of one random pool, so that the
// benchmark itself holds little memory), no headers.
func benchRecords(perPartition, valueBytes int) [][]catchup.Record {
	rng := rand.New(rand.NewPCG(1, 2))
	pool := make([]byte, 1<<20)
	for i := range pool {
		pool[i] = byte(rng.Uint32())
	}
	base := time.UnixMilli(1_760_000_000_000)
	recs := make([][]catchup.Record, benchPartitions)
	for p := range recs {
		recs[p] = make([]catchup.Record, perPartition)
		for i := range recs[p] {
			at := rng.IntN(len(pool) - valueBytes)
			recs[p][i] = catchup.Record{
				Offset:    int64(i),
				Key:       fmt.Appendf(make([]byte, 0, benchKeyBytes), "k-%02d-%011d", p, i),
				Value:     pool[at : at+valueBytes : at+valueBytes],
				Timestamp: base.Add(time.Duration(i) * time.Millisecond),
			}
		}
	}
	return recs
}

// benchSeed writes recs to the source with franz-go in batches of at most
// seedBatchBytes, and checks that every partition holds them all.
func benchSeed(ctx context.Context, b *testing.B, c *benchCluster, recs [][]catchup.Record) {
	b.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.addrs...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchMaxBytes(seedBatchBytes),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ProducerLinger(0))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	var (
		mu    sync.Mutex
		first error
	)
	for p, rs := range recs {
		for i := range rs {
			r := &rs[i]
			cl.Produce(ctx, &kgo.Record{Topic: benchTopic, Partition: int32(p), Key: r.Key, Value: r.Value, Timestamp: r.Timestamp},
				func(_ *kgo.Record, err error) {
					if err != nil {
						mu.Lock()
						first = cmp.Or(first, err)
						mu.Unlock()
					}
				})
		}
	}
	if err := cl.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	if first != nil {
		b.Fatalf("seed the source: %v", first)
	}
	s, err := pipeline.ConnectReader(benchClusterConfig("source", c), "read_committed")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ps := make([]catchup.Partition, len(recs))
	for i := range ps {
		ps[i] = catchup.Partition{Topic: benchTopic, Partition: int32(i)}
	}
	marks, err := s.ListOffsets(ctx, ps)
	if err != nil {
		b.Fatal(err)
	}
	for i, m := range marks {
		if m.HighWatermark != int64(len(recs[i])) {
			b.Fatalf("seeded %s: high watermark %d, want %d", m.Partition, m.HighWatermark, len(recs[i]))
		}
	}
}

// benchConfig returns a configuration file with one pipeline from src to dst
// with every default, and a file store in dir. A nil dst names an address
// nothing listens on, for fetch-only.
func benchConfig(b *testing.B, src, dst *benchCluster, dir string) *cfg.File {
	b.Helper()
	if dst == nil {
		dst = &benchCluster{addrs: []string{"127.0.0.1:1"}}
	}
	yaml := fmt.Sprintf(`store: file://%s
pipelines:
  - name: bench
    source: {name: src, brokers: [%s]}
    target: {name: dst, brokers: [%s]}
    topics: {include: [%s]}
`, dir, strings.Join(src.addrs, ", "), strings.Join(dst.addrs, ", "), benchTopic)
	f, err := cfg.Parse([]byte(yaml), "bench.yaml")
	if err != nil {
		b.Fatal(err)
	}
	return f
}

func benchClusterConfig(name string, c *benchCluster) cfg.Cluster {
	return cfg.Cluster{Name: name, Brokers: c.addrs}
}

// benchEachPartition calls f for every partition, all at once, and returns the
// first error.
func benchEachPartition(f func(part int) error) error {
	errs := make([]error, benchPartitions)
	var wg sync.WaitGroup
	for p := range benchPartitions {
		wg.Go(func() { errs[p] = f(p) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// benchCluster is a kfake cluster with one broker, in this process or in a child
// process.
type benchCluster struct {
	addrs []string
	pid   int // of the child process; 0 in this process
	close func()
	once  sync.Once
}

// Close stops the cluster; it may be called more than once, and on nil.
func (c *benchCluster) Close() {
	if c != nil {
		c.once.Do(c.close)
	}
}

// benchStartCluster starts a cluster with one topic of the given partitions,
// in a child process if CATCHUP_BENCH_KFAKE=process. The caller closes it:
// a b.Cleanup here would keep every cluster of a loop alive to its end.
func benchStartCluster(ctx context.Context, b *testing.B, partitions int32, topic string) *benchCluster {
	b.Helper()
	if os.Getenv(benchKfakeModeEnv) != "process" {
		// kfake's goroutines get their own profile label, not the caller's.
		var k *kfake.Cluster
		var err error
		pprof.Do(context.Background(), pprof.Labels("bench", "kfake"), func(context.Context) {
			k, err = kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topic))
		})
		pprof.SetGoroutineLabels(ctx)
		if err != nil {
			b.Fatal(err)
		}
		return &benchCluster{addrs: k.ListenAddrs(), close: k.Close}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBenchKfakeHelper$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d:%s", benchKfakeHelperEnv, partitions, topic))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	c := &benchCluster{pid: cmd.Process.Pid, close: func() {
		stdin.Close()
		_ = cmd.Wait()
	}}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		c.Close()
		b.Fatalf("start kfake in a child process: %v", err)
	}
	c.addrs = strings.Split(strings.TrimSpace(line), ",")
	return c
}

// TestBenchKfakeHelper is not a test: it is the child process that serves one
// kfake cluster to the benchmarks when CATCHUP_BENCH_KFAKE=process. It
// prints the cluster's addresses and serves until its standard input closes.
func TestBenchKfakeHelper(t *testing.T) {
	spec := os.Getenv(benchKfakeHelperEnv)
	if spec == "" {
		t.Skip("the benchmarks' kfake child process")
	}
	ps, topic, _ := strings.Cut(spec, ":")
	partitions, err := strconv.Atoi(ps)
	if err != nil {
		t.Fatalf("%s=%q: %v", benchKfakeHelperEnv, spec, err)
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(partitions), topic))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Println(strings.Join(c.ListenAddrs(), ","))
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until the parent closes it
}

// benchMeter measures the timed operations of a benchmark: peak heap, and CPU
// time of this process and of the clusters' child processes.
type benchMeter struct {
	peak       uint64
	cpu, kfake time.Duration
	kfakeOK    bool

	clusters   []*benchCluster
	cpu0, kf0  time.Duration
	stopSample chan struct{}
	sampled    chan uint64
}

func newBenchMeter() *benchMeter { return &benchMeter{kfakeOK: true} }

// start begins a measurement; the CPU time of the child processes of
// clusters counts as kfake's.
func (m *benchMeter) start(clusters ...*benchCluster) {
	runtime.GC()
	m.clusters = clusters
	m.cpu0, _ = procstat.CPU("self")
	m.kf0, _ = m.kfakeTime()
	m.stopSample, m.sampled = make(chan struct{}), make(chan uint64)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var peak uint64
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-t.C:
			case <-m.stopSample:
				m.sampled <- peak
				return
			}
		}
	}()
}

func (m *benchMeter) stop() {
	close(m.stopSample)
	m.peak = max(m.peak, <-m.sampled)
	cpu, _ := procstat.CPU("self")
	m.cpu += cpu - m.cpu0
	kf, ok := m.kfakeTime()
	m.kfake += kf - m.kf0
	m.kfakeOK = m.kfakeOK && ok
}

// kfakeTime returns the CPU time of the clusters' child processes; ok is
// false when a cluster runs in this process.
func (m *benchMeter) kfakeTime() (d time.Duration, ok bool) {
	for _, c := range m.clusters {
		if c.pid == 0 {
			return 0, false
		}
		t, ok := procstat.CPU(strconv.Itoa(c.pid))
		if !ok {
			return 0, false
		}
		d += t
	}
	return d, true
}

// report reports the metrics of b's iterations, each of which moved n
// records of size bytes.
func (m *benchMeter) report(b *testing.B, n, size int64) {
	iters := int64(b.N)
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(size*iters)/1e6/secs, "MB/s")
	b.ReportMetric(float64(n*iters)/secs, "records/s")
	b.ReportMetric(float64(m.peak)/(1<<20), "peak-heap-MiB")
	if m.cpu > 0 {
		b.ReportMetric(float64(size*iters)/1e6/m.cpu.Seconds(), "MB/cpu-s")
	}
	if m.kfakeOK {
		b.ReportMetric(float64(m.kfake.Milliseconds())/float64(iters), "kfake-cpu-ms/op")
	}
}
