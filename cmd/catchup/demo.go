package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/replicate"
	"github.com/kafka-catchup/catchup/internal/verify"
)

// demoTopics are the topics the demo seeds, with their partition counts.
var demoTopics = []struct {
	name       string
	partitions int32
}{{"orders", 4}, {"payments", 3}, {"audit", 2}}

func (a *app) demoCmd() *cobra.Command {
	var perPartition int
	var keep bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Copy between two in-process Kafka clusters in windows, kill a run, resume, verify",
		Long: `demo starts two in-process Kafka clusters (kfake) on loopback and a file store in
a temporary folder, seeds several topics with records that have keys, null
values, headers and timestamps, copies them in a first bounded window, starts
a second run as a separate process and kills it with SIGKILL in the middle of
its window, resumes, and verifies that the target equals the source record
for record.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.demo(cmd.Context(), perPartition, keep)
		},
	}
	cmd.Flags().IntVar(&perPartition, "records", 1500, "records per source partition")
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the temporary folder (config, store)")
	return cmd
}

func (a *app) demo(ctx context.Context, perPartition int, keep bool) error {
	say := func(format string, args ...any) { fmt.Fprintf(a.out, format+"\n", args...) }
	dir, err := os.MkdirTemp("", "catchup-demo-")
	if err != nil {
		return err
	}
	if keep {
		defer say("kept %s", dir)
	} else {
		defer os.RemoveAll(dir)
	}

	// SleepOutOfOrder: kfake's in-order queue of slept requests can hand one
	// request to two waiters (demoKill sleeps every produce); with it, each
	// connection's requests are still handled in order (kfake submits the
	// next only once the previous response is written).
	opts := []kfake.Opt{kfake.SleepOutOfOrder()}
	for _, t := range demoTopics {
		opts = append(opts, kfake.SeedTopics(t.partitions, t.name))
	}
	src, err := kfake.NewCluster(append(opts, kfake.NumBrokers(1))...)
	if err != nil {
		return fmt.Errorf("start source cluster: %w", err)
	}
	defer src.Close()
	dst, err := kfake.NewCluster(append(opts, kfake.NumBrokers(1))...)
	if err != nil {
		return fmt.Errorf("start target cluster: %w", err)
	}
	defer dst.Close()
	say("1. started two in-process Kafka clusters: source %s, target %s", src.ListenAddrs()[0], dst.ListenAddrs()[0])

	n, err := seedDemo(ctx, src.ListenAddrs(), perPartition)
	if err != nil {
		return fmt.Errorf("seed the source: %w", err)
	}
	say("2. seeded the source: %d records in %d topics (keys, null keys and values, empty values, headers, old timestamps)", n, len(demoTopics))

	windowed := filepath.Join(dir, "window.yaml")
	full := filepath.Join(dir, "pipelines.yaml")
	store := filepath.Join(dir, "store")
	window := perPartition / 4
	for path, limit := range map[string]string{windowed: fmt.Sprintf("\n    window:\n      max_records: %d", window), full: ""} {
		yaml := fmt.Sprintf(`store: file://%s
pipelines:
  - name: demo
    source: {name: demo-source, brokers: [%s]}
    target: {name: demo-target, brokers: [%s]}
    topics: {include: [".*"]}
    commit_interval: 200ms
    producer: {batch_records: 50}%s
`, store, src.ListenAddrs()[0], dst.ListenAddrs()[0], limit)
		if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
			return err
		}
	}

	say("3. run 1: copy one window of at most %d offsets per partition", window)
	if err := a.demoRun(ctx, windowed, replicate.StatusPartial); err != nil {
		return err
	}

	say("4. run 2: a separate catchup process copies the rest; it is killed with SIGKILL mid-window")
	copied, err := a.demoKill(ctx, full, dst, n)
	if err != nil {
		return err
	}
	say("   killed it with %d of %d records in the target; its last checkpoints are behind what it wrote", copied, n)

	say("5. run 3: resume; reconciliation reads the target's tail and skips what the killed run wrote")
	if err := a.demoRun(ctx, full, replicate.StatusDone); err != nil {
		return err
	}

	say("6. verify: compare every source record with the target through the provenance headers")
	f, err := config.Load(full)
	if err != nil {
		return err
	}
	ok, err := a.demoVerify(ctx, f)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("demo: the target is not an exact copy of the source")
	}
	say("done: the target is an exact copy of the source (%d records), copied in three runs, one of them killed", n)
	return nil
}

// seedDemo produces perPartition records to every partition of the source.
func seedDemo(ctx context.Context, brokers []string, perPartition int) (int, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(0), kgo.DisableIdempotentWrite())
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n := 0
	for _, t := range demoTopics {
		for p := range t.partitions {
			recs := make([]*kgo.Record, 0, perPartition)
			for i := range perPartition {
				r := &kgo.Record{Topic: t.name, Partition: p,
					Key:       []byte(fmt.Sprintf("%s-%d-%d", t.name, p, i)),
					Value:     []byte(strings.Repeat(fmt.Sprintf("%s %d/%d;", t.name, p, i), 8)),
					Timestamp: base.Add(time.Duration(i) * time.Second),
					Headers:   []kgo.RecordHeader{{Key: "source-app", Value: []byte("demo")}, {Key: "seq", Value: []byte(fmt.Sprint(i))}},
				}
				switch i % 10 {
				case 3:
					r.Key = nil
				case 5:
					r.Value = nil // a tombstone stays a tombstone
				case 7:
					r.Value = []byte{} // an empty value stays empty
				}
				recs = append(recs, r)
			}
			if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				return n, err
			}
			n += len(recs)
		}
	}
	return n, nil
}

// demoRun runs the pipeline of the configuration at path in process; every
// partition must end with status want (partial for a window that
// max_records cuts short, done for the rest of the backlog).
func (a *app) demoRun(ctx context.Context, path string, want replicate.Status) error {
	f, err := config.Load(path)
	if err != nil {
		return err
	}
	log := slog.New(slog.DiscardHandler) // the report says it all
	if a.verbose {
		log = a.logger()
	}
	p, err := pipeline.Open(ctx, f, &f.Pipelines[0], pipeline.Options{Owner: a.owner, Log: log})
	if err != nil {
		return err
	}
	defer p.Close()
	rep, err := p.Engine.Run(ctx)
	if err != nil {
		return err
	}
	var skipped int64
	for _, r := range rep.Partitions {
		skipped += r.Skipped
	}
	printReport(newIndent(a.out), rep)
	if skipped > 0 {
		fmt.Fprintf(a.out, "   reconciliation found %d records the killed run had written after its last checkpoint, and did not copy them again\n", skipped)
	}
	for _, r := range rep.Partitions {
		if r.Status != want {
			return fmt.Errorf("demo: %s/%d ended %s, want %s", r.Topic, r.Partition.Partition, r.Status, want)
		}
	}
	return nil
}

// demoKill starts `catchup run` as a child process with the target slowed
// down, and kills it with SIGKILL once it has copied part of the backlog.
// It returns how many records the target holds then.
func (a *app) demoKill(ctx context.Context, path string, dst *kfake.Cluster, total int) (int64, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	// Slow every produce request down a little, so that the kill lands mid-window.
	var slow atomic.Bool
	slow.Store(true)
	defer slow.Store(false)
	dst.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		if !slow.Load() {
			dst.DropControl()
			return nil, nil, false
		}
		dst.SleepControl(func() { time.Sleep(15 * time.Millisecond) })
		return nil, nil, false
	})

	f, err := config.Load(path)
	if err != nil {
		return 0, err
	}
	target, err := pipeline.ConnectWriter(f.Pipelines[0].Target, f.Pipelines[0].Producer)
	if err != nil {
		return 0, err
	}
	defer target.Close()
	count := func() (int64, error) {
		var parts []catchup.Partition
		for _, t := range demoTopics {
			for p := range t.partitions {
				parts = append(parts, catchup.Partition{Topic: t.name, Partition: p})
			}
		}
		ends, err := target.EndOffsets(ctx, parts)
		var n int64
		for _, e := range ends {
			n += e
		}
		return n, err
	}
	before, err := count()
	if err != nil {
		return 0, err
	}
	child := exec.CommandContext(ctx, exe, "run", "-c", path)
	child.Stdout, child.Stderr = io.Discard, io.Discard
	if err := child.Start(); err != nil {
		return 0, fmt.Errorf("start catchup run: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	goal := before + (int64(total)-before)/3
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			return 0, fmt.Errorf("demo: the child run ended before it could be killed (%v); run the demo again", err)
		case <-tick.C:
		}
		n, err := count()
		if err != nil {
			return 0, err
		}
		if n >= goal {
			_ = child.Process.Signal(syscall.SIGKILL)
			<-exited //nolint:errcheck // killed: the exit status only says so
			// A produce request the child had already sent is still being
			// slowed down by the target: let it land before counting what
			// the child wrote. (The resumed run would wait for it too:
			// takeover_settle.)
			slow.Store(false)
			return settledCount(ctx, count)
		}
	}
}

// settledCount calls count until two calls 50ms apart agree (within 5s).
func settledCount(ctx context.Context, count func() (int64, error)) (int64, error) {
	n, err := count()
	for deadline := time.Now().Add(5 * time.Second); err == nil && time.Now().Before(deadline); {
		select {
		case <-ctx.Done():
			return n, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		var again int64
		if again, err = count(); err == nil && again == n {
			return n, nil
		}
		n = again
	}
	return n, err
}

// demoVerify verifies every partition of the pipeline in f.
func (a *app) demoVerify(ctx context.Context, f *config.File) (bool, error) {
	pc := &f.Pipelines[0]
	src, err := pipeline.ConnectReader(pc.Source, "read_uncommitted")
	if err != nil {
		return false, err
	}
	defer src.Close()
	dst, err := pipeline.ConnectReader(pc.Target, "read_uncommitted")
	if err != nil {
		return false, err
	}
	defer dst.Close()
	parts, err := src.Partitions(ctx, pc.Topics.Match)
	if err != nil {
		return false, err
	}
	marks, err := src.ListOffsets(ctx, parts)
	if err != nil {
		return false, err
	}
	var res []verify.Result
	for _, m := range marks {
		r, err := verify.Partition(ctx, src, dst, m.Partition, m.Partition, m.LogStart, m.HighWatermark, verify.Options{Cluster: pc.Source.Name})
		if err != nil {
			return false, err
		}
		res = append(res, r)
	}
	sub := &app{out: newIndent(a.out)}
	return printVerify(sub, pc.Name, res), nil
}

// indent writes what it is given with every line indented by three spaces.
type indent struct {
	w   io.Writer
	mid *bool // inside a line: no indent before the next byte
}

func newIndent(w io.Writer) indent { return indent{w: w, mid: new(bool)} }

func (in indent) Write(p []byte) (int, error) {
	var b strings.Builder
	for _, c := range string(p) {
		if !*in.mid {
			b.WriteString("   ")
			*in.mid = true
		}
		b.WriteRune(c)
		if c == '\n' {
			*in.mid = false
		}
	}
	if _, err := io.WriteString(in.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}
