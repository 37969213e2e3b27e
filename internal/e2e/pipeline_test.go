package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/checkpoint/filestore"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// pipelineName is the pipeline of every test: its checkpoint namespace.
const pipelineName = "e2e"

// configYAML returns a configuration file with one pipeline from e's
// source to e's target over exactly topics, its store in the test's
// directory. extra are more lines of the pipeline, such as
// "window: {max_records: 4}".
func (e *env) configYAML(topics []string, extra ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "store: file://%s\n", e.storeDir)
	fmt.Fprintf(&b, "pipelines:\n  - name: %s\n", pipelineName)
	fmt.Fprintf(&b, "    source: {name: %s, brokers: ['%s']}\n", srcName, strings.Join(e.src.addrs, "', '"))
	fmt.Fprintf(&b, "    target: {name: dst, brokers: ['%s']}\n", strings.Join(e.dst.addrs, "', '"))
	b.WriteString("    topics:\n      include:\n")
	for _, topic := range topics {
		fmt.Fprintf(&b, "        - '%s'\n", regexp.QuoteMeta(topic))
	}
	for _, line := range extra {
		fmt.Fprintf(&b, "    %s\n", line)
	}
	return b.String()
}

// open parses yaml with config.Parse and opens its pipeline with
// pipeline.Open, as the CLI does; the pipeline is closed when the test ends
// unless the caller closes it first.
func open(ctx context.Context, t *testing.T, yaml string, o pipeline.Options) *pipeline.Pipeline {
	t.Helper()
	f, err := config.Parse([]byte(yaml), "e2e.yaml")
	if err != nil {
		t.Fatalf("config.Parse:\n%s\n%v", yaml, err)
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	p, err := pipeline.Open(ctx, f, &f.Pipelines[0], o)
	if err != nil {
		t.Fatalf("pipeline.Open: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// run opens the pipeline of yaml as a new process would, runs it once and
// closes it.
func run(ctx context.Context, t *testing.T, yaml string, o pipeline.Options) (*replicate.Report, error) {
	t.Helper()
	p := open(ctx, t, yaml, o)
	defer func() {
		if err := p.Close(); err != nil {
			t.Errorf("close pipeline: %v", err)
		}
	}()
	return p.Engine.Run(ctx)
}

// mustRun is run for a run that must not fail as a whole.
func mustRun(ctx context.Context, t *testing.T, yaml string, o pipeline.Options) *replicate.Report {
	t.Helper()
	rep, err := run(ctx, t, yaml, o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return rep
}

// checkpoints loads the stored checkpoints of the pipeline, by partition.
// The pipeline must be closed (the file store locks it).
func (e *env) checkpoints(ctx context.Context, t *testing.T) map[catchup.Partition]checkpoint.Checkpoint {
	t.Helper()
	s, err := filestore.Open(e.storeDir, nil)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	defer s.Close()
	cps, err := s.Load(ctx, pipelineName)
	if err != nil {
		t.Fatalf("load checkpoints: %v", err)
	}
	out := make(map[catchup.Partition]checkpoint.Checkpoint, len(cps))
	for _, c := range cps {
		out[c.Partition] = c
	}
	return out
}

// window is what a test checks of one partition's result.
type window struct {
	From, To, Next, Copied int64
	Status                 replicate.Status
}

// windows projects a report for comparison, by partition.
func windows(rep *replicate.Report) map[catchup.Partition]window {
	out := make(map[catchup.Partition]window, len(rep.Partitions))
	for _, r := range rep.Partitions {
		out[r.Partition] = window{From: r.From, To: r.To, Next: r.Next, Copied: r.Copied, Status: r.Status}
	}
	return out
}

// wantWindows fails the test unless rep has exactly the windows of want and
// no partition error where the status is not failed.
func wantWindows(t *testing.T, what string, rep *replicate.Report, want map[catchup.Partition]window) {
	t.Helper()
	if diff := cmp.Diff(want, windows(rep)); diff != "" {
		t.Errorf("%s: report windows (-want +got):\n%s", what, diff)
	}
	for _, r := range rep.Partitions {
		if r.Err != nil && r.Status != replicate.StatusFailed {
			t.Errorf("%s: %s: status %s with error %v", what, r.Partition, r.Status, r.Err)
		}
		if r.Err != nil && want[r.Partition].Status != replicate.StatusFailed {
			t.Errorf("%s: %s: unexpected error: %v", what, r.Partition, r.Err)
		}
	}
}

// wantCheckpoints fails the test unless the stored checkpoints' Next are
// exactly want.
func (e *env) wantCheckpoints(ctx context.Context, t *testing.T, what string, want map[catchup.Partition]int64) map[catchup.Partition]checkpoint.Checkpoint {
	t.Helper()
	cps := e.checkpoints(ctx, t)
	got := map[catchup.Partition]int64{}
	for p, c := range cps {
		if !c.Exists {
			continue
		}
		got[p] = c.Next
		if c.Owner != "" {
			t.Errorf("%s: checkpoint of %s still leased by %q", what, p, c.Owner)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: checkpoint Next (-want +got):\n%s", what, diff)
	}
	return cps
}

// each returns a map with v for every partition of ps.
func each[V any](ps []catchup.Partition, v func(catchup.Partition) V) map[catchup.Partition]V {
	out := make(map[catchup.Partition]V, len(ps))
	for _, p := range ps {
		out[p] = v(p)
	}
	return out
}

// highWatermarks returns the high watermark of every partition of topics.
func (c *cluster) highWatermarks(ctx context.Context, t *testing.T, topics ...string) map[catchup.Partition]int64 {
	t.Helper()
	out := map[catchup.Partition]int64{}
	for p, o := range c.offsets(ctx, t, topics...) {
		out[p] = o.HighWatermark
	}
	return out
}

// sortedPartitions returns the keys of m, sorted.
func sortedPartitions[V any](m map[catchup.Partition]V) []catchup.Partition {
	return slices.SortedFunc(maps.Keys(m), catchup.Partition.Compare)
}
