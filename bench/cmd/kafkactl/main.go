// Command kafkactl is the benchmark harness's small Kafka admin and stopwatch:
//
//	kafkactl recreate -brokers B -topic T -partitions N [-rf R]
//	    delete T if it exists, wait until it is gone, create it with N
//	    partitions (replication factor R, default 1), wait until every partition has a leader
//	kafkactl count -brokers B -topic T [-committed]
//	    print the number of records in T (sum of end minus log start offsets);
//	    with -committed, the records a read_committed consumer reads from the
//	    start (transaction markers and aborted records left out), read until
//	    no more arrive for 2 s
//	kafkactl seed -brokers B -topic T -want N [-value BYTES]
//	    append N records with keys ("key-<n>") and two headers (trace-id,
//	    origin) and values of BYTES (default 1024) random letters, spread
//	    round-robin over T's partitions, acks all (franz-go, its defaults)
//	kafkactl payloads -want N [-value BYTES]
//	    print N lines of BYTES (default 1024) each: JSON orders that compress
//	    as such data does, the values of the zstd shape (ProducerPerformance
//	    --payload-file); the same lines every time
//	kafkactl logbytes -brokers B -topic T
//	    print the bytes of T's log on the brokers, each partition counted
//	    once (its largest replica; DescribeLogDirs)
//	kafkactl latency -brokers SRC -target DST -topic T [-rate R] [-value BYTES] [-for D] [-warmup D]
//	    produce R records a second (default 1000) of BYTES (default 1024) to
//	    T on SRC for D (default 60s), round-robin over its partitions, and
//	    read T on DST (the records of earlier calls left out by their
//	    timestamps; the copy keeps them): each record's latency is
//	    the time it was read minus its timestamp (the produce time, which
//	    the copier keeps). Prints JSON: records produced and seen, and the
//	    p50, p99 and max latency in ms of the records produced after the
//	    -warmup (default 10s). Fails if a record was not seen 30 s after
//	    the end.
//	kafkactl produce -brokers B -topic T
//	    append one record (1 KiB value) to partition 0 of T, acks all
//	kafkactl wait -brokers B -topic T -want N [-pid PID[,PID]] [-since MS] [-timeout D] [-stall D] [-window-from M -window D]
//	    poll T's end offsets every 100ms until they sum to at least N, and
//	    print JSON: first_s (first record seen) and full_s (N reached), in
//	    seconds since -since (Unix ms; default: now), the records seen then,
//	    and, with -pid, those processes' CPU seconds (user+sys, summed) at
//	    both moments and their peak RSS (VmHWM, summed) when N was reached.
//	    With -window-from M and -window D, a steady-state window opens when
//	    the count reaches M and closes after D or at N, whichever is first
//	    (then full_s and records are its end): window_s, window_records and
//	    window_cpu_s are the window's length, records and CPU seconds.
//	    Fails if a PID exits first, or if the count does not grow for -stall
//	    (default 2m).
//
// It uses kafka-go's admin client and catchup's own kafkago adapter.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-catchup/catchup/internal/catchup"
	cfg "github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/kafkago"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/procstat"
)

func main() { os.Exit(mainErr()) }

func mainErr() int {
	if len(os.Args) < 2 {
		return usage()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	brokers := fs.String("brokers", "", "bootstrap broker host:port")
	topic := fs.String("topic", "", "topic")
	partitions := fs.Int("partitions", 8, "partitions (recreate)")
	want := fs.Int64("want", 0, "records to wait for (wait), to seed (seed), lines to print (payloads)")
	pid := fs.String("pid", "", "processes to measure, comma separated (wait)")
	windowFrom := fs.Int64("window-from", 0, "wait: open the window at this many records")
	window := fs.Duration("window", 0, "wait: the window's length (at most; it also ends at -want)")
	since := fs.Int64("since", 0, "start of the measurement, Unix ms (wait; default now)")
	timeout := fs.Duration("timeout", 2*time.Hour, "give up after this long")
	stall := fs.Duration("stall", 2*time.Minute, "wait: give up when the count has not grown for this long")
	rf := fs.Int("rf", 1, "replication factor (recreate)")
	committed := fs.Bool("committed", false, "count: read the records under read_committed")
	value := fs.Int("value", 1024, "value bytes (seed, latency, payloads)")
	target := fs.String("target", "", "target brokers (latency)")
	rate := fs.Int("rate", 1000, "records a second (latency)")
	dur := fs.Duration("for", time.Minute, "how long to produce (latency)")
	warm := fs.Duration("warmup", 10*time.Second, "left out of the percentiles (latency)")
	if err := fs.Parse(os.Args[2:]); err != nil {
		return 2
	}
	if os.Args[1] == "payloads" {
		if err := writePayloads(os.Stdout, int(*want), *value); err != nil {
			fmt.Fprintf(os.Stderr, "kafkactl payloads: %v\n", err)
			return 1
		}
		return 0
	}
	if *brokers == "" || *topic == "" {
		return usage()
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	var err error
	switch os.Args[1] {
	case "recreate":
		err = recreate(ctx, *brokers, *topic, *partitions, *rf)
	case "count":
		var n int64
		if *committed {
			n, err = countCommitted(ctx, *brokers, *topic)
		} else {
			n, err = count(ctx, *brokers, *topic)
		}
		if err == nil {
			fmt.Println(n)
		}
	case "logbytes":
		var n int64
		if n, err = logBytes(ctx, *brokers, *topic); err == nil {
			fmt.Println(n)
		}
	case "seed":
		err = seed(ctx, *brokers, *topic, *want, *value)
	case "latency":
		var r *latencyResult
		if r, err = latency(ctx, *brokers, *target, *topic, *rate, *value, *dur, *warm); err == nil {
			err = json.NewEncoder(os.Stdout).Encode(r)
		}
	case "produce":
		err = produceOne(ctx, *brokers, *topic)
	case "wait":
		start := time.Now()
		if *since > 0 {
			start = time.UnixMilli(*since)
		}
		var r *waitResult
		if r, err = wait(ctx, *brokers, *topic, *want, pids(*pid), start, *stall, *windowFrom, *window); err == nil {
			err = json.NewEncoder(os.Stdout).Encode(r)
		}
	default:
		return usage()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "kafkactl %s: %v\n", os.Args[1], err)
		return 1
	}
	return 0
}

func usage() int {
	fmt.Fprintln(os.Stderr, "usage: kafkactl recreate|count|seed|logbytes|latency|produce|wait -brokers B -topic T [-partitions N -rf R] [-committed] [-want N -value BYTES] [-want N -pid PID[,PID] -since MS -window-from M -window D]")
	fmt.Fprintln(os.Stderr, "       kafkactl payloads -want N [-value BYTES]")
	return 2
}

// recreatePoll: how often recreate looks at the brokers while it waits (the
// benchmark recreates the target before every copy).
const recreatePoll = 25 * time.Millisecond

func recreate(ctx context.Context, brokers, topic string, partitions, rf int) error {
	// kafka-go answers a Metadata request from its transport's cache, which
	// it refreshes only every MetadataTTL (6 s by default, randomised): with
	// that default, "wait until the topic is gone" waited for the cache,
	// not for the brokers. Refresh it as often as the loops below poll.
	cl := &kafka.Client{Addr: kafka.TCP(strings.Split(brokers, ",")[0]), Timeout: 30 * time.Second,
		Transport: &kafka.Transport{MetadataTTL: recreatePoll}}
	exists, err := topicPartitions(ctx, cl, topic)
	if err != nil {
		return err
	}
	if exists >= 0 {
		resp, err := cl.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{topic}})
		if err != nil {
			return fmt.Errorf("delete %s: %w", topic, err)
		}
		if err := resp.Errors[topic]; err != nil && !errors.Is(err, kafka.UnknownTopicOrPartition) {
			return fmt.Errorf("delete %s: %w", topic, err)
		}
		for {
			n, err := topicPartitions(ctx, cl, topic)
			if err != nil {
				return err
			}
			if n < 0 {
				break
			}
			if err := sleep(ctx, recreatePoll); err != nil {
				return fmt.Errorf("waiting for %s to be deleted: %w", topic, err)
			}
		}
	}
	// Right after a delete the broker may still be removing the old log
	// (TOPIC_ALREADY_EXISTS, "marked for deletion"): retry for a while.
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := cl.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{
			Topic: topic, NumPartitions: partitions, ReplicationFactor: rf,
		}}})
		if err == nil {
			err = resp.Errors[topic]
		}
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("create %s: %w", topic, err)
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return fmt.Errorf("create %s: %w", topic, err)
		}
	}
	for {
		n, err := topicPartitions(ctx, cl, topic)
		if err != nil {
			return err
		}
		if n == partitions {
			break
		}
		if err := sleep(ctx, recreatePoll); err != nil {
			return fmt.Errorf("waiting for %s to have %d partitions with leaders: %w", topic, partitions, err)
		}
	}
	// The metadata names a leader a moment before that broker serves the
	// partition (NOT_LEADER_OR_FOLLOWER): wait until it answers ListOffsets.
	for {
		_, err := count(ctx, brokers, topic)
		if err == nil {
			return nil
		}
		if err := sleep(ctx, recreatePoll); err != nil {
			return fmt.Errorf("waiting for %s to be served: %w", topic, err)
		}
	}
}

// topicPartitions returns the number of partitions of topic that have a
// leader, or -1 if the topic does not exist.
func topicPartitions(ctx context.Context, cl *kafka.Client, topic string) (int, error) {
	md, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return 0, fmt.Errorf("metadata: %w", err)
	}
	for _, t := range md.Topics {
		if t.Name != topic {
			continue
		}
		if t.Error != nil {
			if errors.Is(t.Error, kafka.UnknownTopicOrPartition) {
				return -1, nil
			}
			return 0, fmt.Errorf("metadata of %s: %w", topic, t.Error)
		}
		n := 0
		for _, p := range t.Partitions {
			if p.Error == nil && p.Leader.ID >= 0 && p.Leader.Host != "" {
				n++
			}
		}
		return n, nil
	}
	return -1, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

type counter struct {
	src *kafkago.Source
	ps  []catchup.Partition
}

func newCounter(ctx context.Context, brokers, topic string) (*counter, error) {
	src, err := pipeline.ConnectReader(cfg.Cluster{Name: "bench", Brokers: strings.Split(brokers, ",")}, "read_uncommitted")
	if err != nil {
		return nil, err
	}
	ps, err := src.Partitions(ctx, func(t string) bool { return t == topic })
	if err != nil {
		src.Close()
		return nil, err
	}
	if len(ps) == 0 {
		src.Close()
		return nil, fmt.Errorf("no topic %s", topic)
	}
	return &counter{src: src, ps: ps}, nil
}

func (c *counter) count(ctx context.Context) (int64, error) {
	marks, err := c.src.ListOffsets(ctx, c.ps)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, m := range marks {
		n += m.HighWatermark - m.LogStart
	}
	return n, nil
}

func count(ctx context.Context, brokers, topic string) (int64, error) {
	c, err := newCounter(ctx, brokers, topic)
	if err != nil {
		return 0, err
	}
	defer c.src.Close()
	return c.count(ctx)
}

type waitResult struct {
	FirstS       float64 `json:"first_s"`
	FirstRecords int64   `json:"first_records"` // records seen at first_s
	FullS        float64 `json:"full_s"`
	Records      int64   `json:"records"`
	CPUS         float64 `json:"cpu_s,omitempty"`
	FirstCPUS    float64 `json:"first_cpu_s,omitempty"` // the PIDs' CPU seconds at first_s
	RSSKB        int64   `json:"rss_kb,omitempty"`
	// the steady-state window (-window-from, -window)
	WindowS       float64 `json:"window_s,omitempty"`
	WindowRecords int64   `json:"window_records,omitempty"`
	WindowCPUS    float64 `json:"window_cpu_s,omitempty"`
}

// pids splits a comma-separated list of process ids.
func pids(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// cpuOf is the CPU seconds the processes spent so far, summed; false if
// one of them is gone.
func cpuOf(ps []string) (float64, bool) {
	var sum float64
	for _, p := range ps {
		cpu, ok := procstat.CPU(p)
		if !ok || !procstat.Alive(p) {
			return 0, false
		}
		sum += cpu.Seconds()
	}
	return sum, true
}

func wait(ctx context.Context, brokers, topic string, want int64, ps []string, start time.Time, stall time.Duration,
	windowFrom int64, window time.Duration) (*waitResult, error) {
	c, err := newCounter(ctx, brokers, topic)
	if err != nil {
		return nil, err
	}
	defer c.src.Close()
	r := &waitResult{FirstS: -1}
	var failing time.Time // since when every poll failed
	last, grown := int64(-1), time.Now()
	var opened time.Time // the window's start
	var openN int64
	var openCPU float64
	var lastAt time.Time // the last poll that saw the processes alive, and what it saw
	var lastN, lastRSS int64
	var lastCPU float64
	for {
		n, err := c.count(ctx)
		if err != nil {
			// A broker busy with a leader change or a slow request is no
			// reason to give up the measurement; 30 s of errors are.
			if failing.IsZero() {
				failing = time.Now()
			}
			if time.Since(failing) > 30*time.Second {
				return nil, err
			}
			if err := sleep(ctx, 100*time.Millisecond); err != nil {
				return nil, err
			}
			continue
		}
		failing = time.Time{}
		if n != last {
			last, grown = n, time.Now()
		} else if time.Since(grown) > stall {
			return nil, fmt.Errorf("%d of %d records in %s, and no more for %s", n, want, topic, stall)
		}
		now := time.Since(start).Seconds()
		cpu, alive := cpuOf(ps)
		if len(ps) > 0 && !alive {
			if !opened.IsZero() && !lastAt.IsZero() && lastAt.After(opened) {
				// gone within the window (kcat ends at the end of the
				// backlog): the window ends at the last poll that saw them
				r.WindowS, r.WindowRecords, r.WindowCPUS = lastAt.Sub(opened).Seconds(), lastN-openN, lastCPU-openCPU
				r.FullS, r.Records, r.CPUS, r.RSSKB = lastAt.Sub(start).Seconds(), lastN, lastCPU, lastRSS
				return r, nil
			}
			return nil, fmt.Errorf("process %s exited with %d of %d records in %s", strings.Join(ps, ","), n, want, topic)
		}
		lastAt, lastN, lastCPU, lastRSS = time.Now(), n, cpu, int64(0)
		for _, p := range ps {
			lastRSS += procstat.PeakRSSKB(p)
		}
		if n > 0 && r.FirstS < 0 {
			r.FirstS, r.FirstRecords, r.FirstCPUS = now, n, cpu
		}
		if window > 0 && opened.IsZero() && n >= windowFrom {
			opened, openN, openCPU = time.Now(), n, cpu
		}
		full := n >= want
		if window > 0 && !opened.IsZero() && (full || time.Since(opened) >= window) {
			r.WindowS, r.WindowRecords, r.WindowCPUS = time.Since(opened).Seconds(), n-openN, cpu-openCPU
			full = true
		}
		if full {
			r.FullS, r.Records, r.CPUS, r.RSSKB = now, n, cpu, lastRSS
			return r, nil
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return nil, fmt.Errorf("%d of %d records in %s: %w", n, want, topic, err)
		}
	}
}

func produceOne(ctx context.Context, brokers, topic string) error {
	producer := cfg.Producer{Acks: "all"}
	producer.SetDefaults()
	tgt, err := pipeline.ConnectWriter(cfg.Cluster{Name: "bench", Brokers: strings.Split(brokers, ",")}, producer)
	if err != nil {
		return err
	}
	defer tgt.Close()
	value := make([]byte, 1024)
	for i := range value {
		value[i] = 'A' + byte(i%26)
	}
	rec := catchup.Record{Key: []byte("window"), Value: value, Timestamp: time.Now()}
	acked, _, err := tgt.Produce(ctx, catchup.Partition{Topic: topic, Partition: 0}, []catchup.Record{rec}, nil)
	if err == nil && acked != 1 {
		err = errors.New("the record was not acknowledged")
	}
	return err
}

// countCommitted reads topic from the start under read_committed and
// returns the records read once none arrived for 2 s.
func countCommitted(ctx context.Context, brokers, topic string) (int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	var n int64
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		fs := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		got := 0
		fs.EachRecord(func(*kgo.Record) { got++ })
		var ferr error
		fs.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				ferr = fmt.Errorf("fetch %s/%d: %w", t, p, err)
			}
		})
		if ferr != nil {
			return n, ferr
		}
		if got == 0 {
			return n, nil
		}
		n += int64(got)
	}
}

// seed appends n keyed records with headers to topic, round-robin over its
// partitions, in uncompressed batches as the other shapes' (franz-go would
// compress them with snappy by default: the values are windows of one
// buffer and shrink ninefold, and a copier that passes compressed batches
// through would then look nine times as fast per value byte).
func seed(ctx context.Context, brokers, topic string, n int64, size int) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.MaxBufferedRecords(100000),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		return err
	}
	defer cl.Close()
	letters := make([]byte, size+4096)
	for i := range letters {
		letters[i] = 'A' + byte(rand.IntN(26))
	}
	var (
		mu   sync.Mutex
		perr error
	)
	done := func(_ *kgo.Record, err error) {
		if err != nil {
			mu.Lock()
			perr = cmp.Or(perr, err)
			mu.Unlock()
		}
	}
	for i := range n {
		off := rand.IntN(4096)
		cl.Produce(ctx, &kgo.Record{
			Key:   fmt.Appendf(nil, "key-%012d", i),
			Value: letters[off : off+size],
			Headers: []kgo.RecordHeader{
				{Key: "trace-id", Value: fmt.Appendf(nil, "%016x", rand.Uint64())},
				{Key: "origin", Value: []byte("bench")},
			},
		}, done)
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	if perr != nil {
		return fmt.Errorf("seed %s: %w", topic, perr)
	}
	return nil
}
