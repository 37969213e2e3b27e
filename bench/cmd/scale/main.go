// Command scale measures what catchup costs as a pipeline grows to 10,000
// partitions: it starts two in-process kfake clusters of three
// brokers each, dynalite behind a proxy that counts DynamoDB requests per
// operation, and runs the real catchup binary (run, plan, status) as a child
// process per step, so that each step's peak RSS is the child's own.
//
// Per scenario (partitions × topics) the steps are: a first run over empty
// topics (it creates the checkpoints), an idle run, a run with 1 % of the
// partitions holding one new record, a run with every partition holding one
// new record, then plan and status, the dispatcher (idle and 1 % active),
// one worker invocation over a 64-partition shard through the replicate
// handler, and the same runs with the file store (its bytes written). Kafka
// requests are counted per API key and cluster with kfake's ControlKey,
// DynamoDB requests per operation and items read; counts are the primary
// figures, times are secondary on a shared machine. Goroutines are the
// sampled peak of the in-process children (dispatcher, worker); threads
// that of every child.
//
// Usage: go run ./bench/cmd/scale -catchup bin/catchup [-quick] [-out bench/SCALE.md]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/fanout"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/worker"
)

// scenario is one pipeline size.
type scenario struct{ partitions, topics int }

// step is one measured child process.
type step struct {
	scenario
	name       string
	kafka      map[string]map[string]int // cluster -> API key name -> requests
	dynamo     map[string]int            // operation -> requests
	rssKB      int64                     // the child's own peak (VmHWM, sampled)
	maxrssKB   int64                     // rusage maxrss: at least this process's RSS at the fork (see result)
	wall       time.Duration
	outBytes   int64 // block output of the child (fsynced file-store bytes)
	itemsRead  int   // DynamoDB items returned (Query, Scan, GetItem, BatchGetItem)
	goroutines int   // sampled peak, in-process children only; -1 unknown
	threads    int   // sampled peak of the child's OS threads
	err        string
}

func main() {
	var (
		bin   = flag.String("catchup", "bin/catchup", "the catchup binary to measure")
		quick = flag.Bool("quick", false, "only 100/10 and 1,000/100 partitions/topics")
		out   = flag.String("out", "", "replace this label's table in this markdown file (bench/SCALE.md)")
		label = flag.String("label", "", "a label for the table (e.g. before or after)")
		only  = flag.String("only", "", "comma-separated steps to run, each the start of a step's name, e.g. worker (default all; the first run always runs)")
		sizes = flag.String("scenarios", "", "comma-separated PARTITIONS/TOPICS to run instead of the default list, e.g. 10000/100")
	)
	dispatchChild := flag.String("dispatch-child", "", "internal: run the dispatcher once over this configuration and exit")
	workerChild := flag.String("worker-child", "", "internal: run one replicate invocation of this configuration, with -worker-event, and exit")
	workerEvent := flag.String("worker-event", "", "internal: the file holding the worker child's event")
	dispatcher := flag.String("dispatcher", "", "the binary that runs the dispatcher step (default this one; a build of another revision for a before figure)")
	baseline := flag.String("dispatcher-baseline", "", "also run the idle dispatch step with this binary (a build of another revision)")
	flag.Parse()
	log.SetFlags(0)
	if *dispatchChild != "" || *workerChild != "" {
		peak := sampleGoroutines()
		var err error
		if *dispatchChild != "" {
			err = dispatchOnce(context.Background(), *dispatchChild)
		} else {
			err = workOnce(context.Background(), *workerChild, *workerEvent)
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("goroutines %d\n", peak())
		return
	}
	if *dispatcher == "" {
		self, err := os.Executable()
		if err != nil {
			log.Fatal(err)
		}
		*dispatcher = self
	}
	scenarios := []scenario{{100, 10}, {100, 100}, {1000, 10}, {1000, 100}, {10000, 10}, {10000, 100}}
	if *quick {
		scenarios = []scenario{{100, 10}, {1000, 100}}
	}
	if *sizes != "" {
		scenarios = nil
		for _, f := range strings.Split(*sizes, ",") {
			var sc scenario
			if _, err := fmt.Sscanf(f, "%d/%d", &sc.partitions, &sc.topics); err != nil || sc.topics <= 0 || sc.partitions%sc.topics != 0 {
				log.Fatalf("-scenarios %q: want PARTITIONS/TOPICS with partitions a multiple of topics", f)
			}
			scenarios = append(scenarios, sc)
		}
	}
	ctx := context.Background()
	endpoint, stop, err := dynamotest.StartDynalite()
	if err != nil {
		log.Fatalf("dynalite: %v", err)
	}
	defer stop()
	proxy, err := newCountingProxy(endpoint)
	if err != nil {
		stop()
		log.Fatal(err) //nolint:gocritic // dynalite is stopped on the line above
	}
	var steps []step
	for _, sc := range scenarios {
		got, err := measure(ctx, *bin, *dispatcher, *baseline, proxy, sc, *only)
		if err != nil {
			log.Fatalf("%d partitions over %d topics: %v", sc.partitions, sc.topics, err)
		}
		steps = append(steps, got...)
	}
	table := render(steps, *label)
	fmt.Print(table)
	if *out != "" {
		if err := writeSection(*out, *label, table); err != nil {
			log.Fatal(err)
		}
	}
}

// measure runs the steps of one scenario against fresh clusters and a
// fresh table.
func measure(ctx context.Context, bin, dispatcher, baseline string, proxy *countingProxy, sc scenario, only string) ([]step, error) {
	per := sc.partitions / sc.topics
	var topics []string
	for i := range sc.topics {
		topics = append(topics, fmt.Sprintf("t%03d", i))
	}
	src, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(int32(per), topics...))
	if err != nil {
		return nil, err
	}
	defer src.Close()
	dst, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(int32(per), topics...))
	if err != nil {
		return nil, err
	}
	defer dst.Close()
	counters := map[string]*keyCounter{"source": countKeys(src), "target": countKeys(dst)}

	dir, err := os.MkdirTemp("", "catchup-scale-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	table := fmt.Sprintf("catchup-scale-%d-%d", sc.partitions, sc.topics)
	cfg := filepath.Join(dir, "pipelines.yaml")
	yaml := fmt.Sprintf(`store: dynamodb://%s
pipelines:
  - name: scale
    source: {name: src, brokers: ['%s']}
    target: {name: dst, brokers: ['%s']}
    topics: {include: ['t[0-9]+']}
`, table, strings.Join(src.ListenAddrs(), "', '"), strings.Join(dst.ListenAddrs(), "', '"))
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		return nil, err
	}
	// The same pipeline with the file store, in its own directory: its runs
	// copy the topics again (the target gets a second copy; nothing reads
	// it) and show what the file store writes.
	fileCfg := filepath.Join(dir, "file.yaml")
	fileYAML := strings.Replace(yaml, "store: dynamodb://"+table, "store: file://"+filepath.Join(dir, "store"), 1)
	if err := os.WriteFile(fileCfg, []byte(fileYAML), 0o600); err != nil {
		return nil, err
	}
	env := append(os.Environ(), "AWS_ENDPOINT_URL_DYNAMODB="+proxy.url, "AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=bench", "AWS_SECRET_ACCESS_KEY=bench")
	if _, err := child(ctx, bin, env, "init-store", "-c", cfg); err != nil {
		return nil, fmt.Errorf("init-store: %w", err)
	}

	producer, err := kgo.NewClient(kgo.SeedBrokers(src.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(0))
	if err != nil {
		return nil, err
	}
	defer producer.Close()
	produce := func(every int) error {
		var recs []*kgo.Record
		for i := 0; i < sc.partitions; i += every {
			recs = append(recs, &kgo.Record{Topic: topics[i/per], Partition: int32(i % per), Value: []byte("v")})
		}
		return producer.ProduceSync(ctx, recs...).FirstErr()
	}
	shardEvent := filepath.Join(dir, "shard.json")
	ev := worker.Event{Pipeline: "scale"}
	for _, p := range shardOf(topics, per) {
		ev.Partitions = append(ev.Partitions, worker.Partition{Topic: p.Topic, Partition: p.Partition})
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(shardEvent, payload, 0o600); err != nil {
		return nil, err
	}
	// produceShard adds a record to each partition of the worker's shard.
	produceShard := func() error {
		var recs []*kgo.Record
		for _, p := range shardOf(topics, per) {
			recs = append(recs, &kgo.Record{Topic: p.Topic, Partition: p.Partition, Value: []byte("v")})
		}
		return producer.ProduceSync(ctx, recs...).FirstErr()
	}

	plan := []struct {
		name   string
		before func() error
		args   []string
	}{
		{"run (first)", nil, []string{"run"}},
		{"run (idle)", nil, []string{"run"}},
		{"run (1% active)", func() error { return produce(100) }, []string{"run"}},
		{"run (all active)", func() error { return produce(1) }, []string{"run"}},
		{"plan (idle)", nil, []string{"plan"}},
		{"status", nil, []string{"status"}},
		{"dispatch (idle)", nil, nil},
		{"dispatch (idle) baseline", nil, nil},
		{"dispatch (1% active)", func() error { return produce(100) }, nil},
		{"worker (64-partition shard, active)", produceShard, []string{"worker"}},
		{"file store: run (first)", nil, []string{"run"}},
		{"file store: run (idle)", nil, []string{"run"}},
		{"file store: run (1% active)", func() error { return produce(100) }, []string{"run"}},
	}
	var steps []step
	for _, p := range plan {
		if p.name == "dispatch (idle) baseline" && baseline == "" {
			continue
		}
		if strings.HasPrefix(p.name, "file store") && sc.partitions > fileStoreMax {
			continue
		}
		if only != "" && !slices.ContainsFunc(strings.Split(only, ","), func(o string) bool { return strings.HasPrefix(p.name, o) }) && p.name != "run (first)" {
			continue
		}
		if p.before != nil {
			if err := p.before(); err != nil {
				return nil, fmt.Errorf("%s: produce: %w", p.name, err)
			}
		}
		for _, c := range counters {
			c.reset()
		}
		proxy.reset()
		st := step{scenario: sc, name: p.name, kafka: map[string]map[string]int{}, goroutines: -1}
		start := time.Now()
		var res result
		switch {
		case p.name == "dispatch (idle) baseline":
			res, err = child(ctx, baseline, env, "-dispatch-child", cfg)
		case p.args == nil:
			res, err = child(ctx, dispatcher, env, "-dispatch-child", cfg)
		case p.args[0] == "worker":
			res, err = child(ctx, dispatcher, env, "-worker-child", cfg, "-worker-event", shardEvent)
		case strings.HasPrefix(p.name, "file store"):
			res, err = child(ctx, bin, env, append(p.args, "-c", fileCfg)...)
		default:
			res, err = child(ctx, bin, env, append(p.args, "-c", cfg)...)
		}
		st.wall = time.Since(start)
		if err != nil {
			st.err = err.Error()
		}
		st.rssKB = res.hwmKB
		if res.ru != nil {
			st.outBytes = res.ru.Oublock * 512
			st.maxrssKB = res.ru.Maxrss
		}
		st.threads = res.threads
		if _, after, ok := strings.Cut(res.stdout, "goroutines "); ok {
			_, _ = fmt.Sscanf(after, "%d", &st.goroutines)
		}
		for name, c := range counters {
			st.kafka[name] = c.snapshot()
		}
		st.dynamo, st.itemsRead = proxy.snapshot()
		log.Printf("%d/%d %s: %s rss=%d MiB (rusage %d) goroutines=%d threads=%d out=%d KiB kafka=%v dynamo=%v items=%d %s", sc.partitions, sc.topics, p.name,
			st.wall.Round(time.Millisecond), st.rssKB/1024, st.maxrssKB/1024, st.goroutines, st.threads, st.outBytes/1024, st.kafka, st.dynamo, st.itemsRead, st.err)
		steps = append(steps, st)
	}
	return steps, nil
}

// result is what a child left: its resource usage, the peaks of its OS
// threads and of its resident memory (VmHWM), sampled from /proc every
// 10ms, and its standard output. The rusage maxrss of a child is not its
// own peak: Go starts a child with vfork semantics (CLONE_VM), and Linux
// counts the parent's resident memory at the exec into the child's maxrss,
// so with this process holding two clusters of 10,000 partitions every
// child seemed at least as large. VmHWM, read after the exec, is the
// child's own.
type result struct {
	ru      *syscall.Rusage
	threads int
	hwmKB   int64
	stdout  string
}

// fileStoreMax is the largest pipeline the file-store steps run on: the
// file store rewrites its whole file on every write, so a first run over
// 10,000 partitions (30,000 writes of a file of about 3 MB) would write
// about 90 GB to the shared disk.
const fileStoreMax = 1000

// child runs the catchup binary (or this one as a child) and returns its
// resource usage.
func child(ctx context.Context, bin string, env []string, args ...string) (result, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	var res result
	if err := cmd.Start(); err != nil {
		return res, err
	}
	done := make(chan struct{})
	sampled := make(chan procStatus)
	go func() {
		var peak procStatus
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			st := status(cmd.Process.Pid)
			peak.threads, peak.hwmKB = max(peak.threads, st.threads), max(peak.hwmKB, st.hwmKB)
			select {
			case <-done:
				sampled <- peak
				return
			case <-tick.C:
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	peak := <-sampled
	res.threads, res.hwmKB, res.stdout = peak.threads, peak.hwmKB, stdout.String()
	if cmd.ProcessState != nil {
		res.ru, _ = cmd.ProcessState.SysUsage().(*syscall.Rusage)
	}
	if err != nil {
		tail := stderr.String()
		if len(tail) > 400 {
			tail = tail[len(tail)-400:]
		}
		return res, fmt.Errorf("catchup %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(tail))
	}
	return res, nil
}

// procStatus is what status reads of /proc/pid/status.
type procStatus struct {
	threads int
	hwmKB   int64 // peak resident set (VmHWM)
}

// status reads the Threads and VmHWM lines of /proc/pid/status; zero if
// unreadable (the child has exited).
func status(pid int) procStatus {
	var st procStatus
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return st
	}
	if _, after, ok := bytes.Cut(b, []byte("\nThreads:")); ok {
		_, _ = fmt.Sscanf(string(after), "%d", &st.threads)
	}
	if _, after, ok := bytes.Cut(b, []byte("\nVmHWM:")); ok {
		_, _ = fmt.Sscanf(string(after), "%d", &st.hwmKB)
	}
	return st
}

// sampleGoroutines samples runtime.NumGoroutine every millisecond and
// returns a function that gives the peak so far.
func sampleGoroutines() func() int {
	var peak atomic.Int64
	go func() {
		for {
			n := int64(runtime.NumGoroutine())
			if n > peak.Load() {
				peak.Store(n)
			}
			time.Sleep(time.Millisecond)
		}
	}()
	return func() int { return int(peak.Load()) }
}

// shardOf is the worker step's shard: the first 64 partitions of the
// pipeline, in topic order.
func shardOf(topics []string, per int) []catchup.Partition {
	var out []catchup.Partition
	for _, t := range topics {
		for p := range per {
			if len(out) == 64 {
				return out
			}
			out = append(out, catchup.Partition{Topic: t, Partition: int32(p)})
		}
	}
	return out
}

// openDynamo loads the configuration at path and opens its DynamoDB store,
// as both Lambda functions do.
func openDynamo(ctx context.Context, path string) (*config.File, *dynamostore.Store, error) {
	f, err := config.Load(path)
	if err != nil {
		return nil, nil, err
	}
	loc, err := f.StoreLocation()
	if err != nil {
		return nil, nil, err
	}
	client, err := pipeline.DynamoDB(ctx)
	if err != nil {
		return nil, nil, err
	}
	return f, dynamostore.New(client, loc.Path), nil
}

// workOnce runs one replicate invocation, as the replicate function does,
// with the configuration at path and the event in the file at eventPath.
func workOnce(ctx context.Context, path, eventPath string) error {
	f, store, err := openDynamo(ctx, path)
	if err != nil {
		return err
	}
	h, err := worker.New(worker.Options{File: f, Store: store, Owner: "bench-worker", Margin: worker.DefaultMargin})
	if err != nil {
		return err
	}
	payload, err := os.ReadFile(eventPath)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	sum, err := h.Handle(ctx, payload)
	if err != nil {
		return err
	}
	if sum.Error != "" {
		return errors.New(sum.Error)
	}
	fmt.Printf("copied %d\n", sum.Copied)
	return nil
}

// dispatchOnce runs the dispatcher over the configuration at path once, as
// the dispatch function does, with an invoker that only counts.
func dispatchOnce(ctx context.Context, path string) error {
	f, store, err := openDynamo(ctx, path)
	if err != nil {
		return err
	}
	var invoked countInvoker
	d, err := fanout.New(fanout.Options{File: f, Store: store, Invoker: &invoked, Limits: fanout.DefaultLimits(), Concurrency: fanout.DefaultInvokeConcurrency})
	if err != nil {
		return err
	}
	sum, err := d.Handle(ctx, nil)
	if err != nil {
		return err
	}
	fmt.Printf("shards %d invoked %d\n", sum.Shards, invoked.n.Load())
	return nil
}
