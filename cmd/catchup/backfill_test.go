package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint/filestore"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/verify"
)

// Helpers of the backfill and translate tests: two kfake clusters, a file
// store and a configuration, and the CLI run in process.

const xTimeout = 60 * time.Second

// xEnv is a source and a target cluster and a configuration file with one
// pipeline, "x", from the source (named "x-src") to the target ("x-dst").
type xEnv struct {
	src, dst *kfake.Cluster
	dir, cfg string
}

// newXEnv starts the clusters with the topics (name → partitions) on both,
// and writes a configuration whose pipeline selects include and adds extra
// (indented YAML lines of the pipeline).
func newXEnv(t *testing.T, topics map[string]int32, include, extra string) *xEnv {
	t.Helper()
	e := &xEnv{dir: t.TempDir()}
	start := func() *kfake.Cluster {
		c, err := kfake.NewCluster(kfake.NumBrokers(1))
		if err != nil {
			t.Fatalf("start kfake: %v", err)
		}
		t.Cleanup(c.Close)
		for name, n := range topics {
			if err := c.CreateTopic(name, n, nil); err != nil {
				t.Fatal(err)
			}
		}
		return c
	}
	e.src, e.dst = start(), start()
	e.cfg = filepath.Join(e.dir, "pipelines.yaml")
	yaml := fmt.Sprintf(`store: file://%s
pipelines:
  - name: x
    source: {name: x-src, brokers: [%s]}
    target: {name: x-dst, brokers: [%s]}
    topics: {include: [%s]}
    commit_interval: 20ms
    fetch_bytes: 1024
    producer: {batch_records: 5}
%s`, filepath.Join(e.dir, "store"), e.src.ListenAddrs()[0], e.dst.ListenAddrs()[0], include, extra)
	if err := os.WriteFile(e.cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return e
}

// xCLI runs the command line args on ctx and returns the exit code and stdout
// and stderr.
func xCLI(ctx context.Context, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(ctx, args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// mustX runs args and fails the test unless the exit code is want.
func mustX(t *testing.T, want int, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), xTimeout)
	defer cancel()
	code, stdout, stderr := xCLI(ctx, args...)
	if code != want {
		t.Fatalf("catchup %s: exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, stdout, stderr)
	}
	return stdout
}

// produce writes recs to the cluster, ten records per batch.
func produce(t *testing.T, c *kfake.Cluster, recs []*kgo.Record) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(0), kgo.DisableIdempotentWrite())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for i := 0; i < len(recs); i += 10 {
		if err := cl.ProduceSync(t.Context(), recs[i:min(i+10, len(recs))]...).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
}

// readPartition returns every record of p on the cluster, in offset order.
func readPartition(t *testing.T, c *kfake.Cluster, p catchup.Partition) []catchup.Record {
	t.Helper()
	s, err := pipeline.ConnectReader(config.Cluster{Name: "read", Brokers: c.ListenAddrs()}, "read_uncommitted")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	marks, err := s.ListOffsets(t.Context(), []catchup.Partition{p})
	if err != nil {
		t.Fatal(err)
	}
	var out []catchup.Record
	for off := marks[0].LogStart; off < marks[0].HighWatermark; {
		f, err := s.Fetch(t.Context(), p, off, 1<<20)
		if err != nil || f.Next <= off {
			t.Fatalf("read %s at %d: %v (next %d)", p, off, err, f.Next)
		}
		out = append(out, f.Records...)
		off = f.Next
	}
	return out
}

// sourceOffset returns the provenance source offset of a target record
// copied by pipeline x from p, failing the test if it has none.
func sourceOffset(t *testing.T, r *catchup.Record, p catchup.Partition) int64 {
	t.Helper()
	off, ok := catchup.SourceOffset(r, "x-src", p)
	if !ok {
		t.Fatalf("target record at %d of %s has no provenance from x-src %s: %v", r.Offset, p.Topic, p, r.Headers)
	}
	return off
}

func TestBackfillCopiesExactlyTheTimeRangeAndResumes(t *testing.T) {
	const parts, perPart = 3, 100
	e := newXEnv(t, map[string]int32{"events": parts, "other": 1}, `events, other`, "")
	base := time.Now().Add(-2 * time.Hour).Truncate(time.Second)
	var recs []*kgo.Record
	for i := range perPart {
		for p := range int32(parts) {
			recs = append(recs, &kgo.Record{Topic: "events", Partition: p, Key: []byte(fmt.Sprintf("k%d", i)),
				Value: []byte(strings.Repeat("v", 20+i%7)), Timestamp: base.Add(time.Duration(i) * time.Second)})
		}
		recs = append(recs, &kgo.Record{Topic: "other", Value: []byte("o"), Timestamp: base.Add(time.Duration(i) * time.Second)})
	}
	produce(t, e.src, recs)
	from, to := base.Add(30*time.Second), base.Add(70*time.Second) // records 30 to 69 of each partition
	args := []string{"backfill", "-c", e.cfg, "--pipeline", "x", "--from", from.Format(time.RFC3339), "--to", to.Format(time.RFC3339),
		"--topics", "ev.*", "--owner", "bf"}
	job := jobName(from, to)

	// Interrupted: the context ends after the target took 6 produce requests.
	ctx, cancel := context.WithTimeout(t.Context(), xTimeout)
	defer cancel()
	var produces atomic.Int32
	e.dst.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		if produces.Add(1) == 6 {
			cancel()
			e.dst.DropControl()
		}
		return nil, nil, false
	})
	code, stdout, stderr := xCLI(ctx, args...)
	if code != exitFailure || !strings.Contains(stdout, "interrupted") {
		t.Fatalf("interrupted backfill: exit code %d, want %d and a note\nstdout:\n%s\nstderr:\n%s", code, exitFailure, stdout, stderr)
	}
	copied := 0
	for p := range int32(parts) {
		copied += len(readPartition(t, e.dst, catchup.Partition{Topic: "events", Partition: p}))
	}
	if copied == 0 || copied >= parts*40 {
		t.Fatalf("the interrupted backfill copied %d records; want some of %d", copied, parts*40)
	}

	// Resumed: the same command finishes the job.
	stdout = mustX(t, exitOK, args...)
	if !strings.Contains(stdout, "backfill "+job) || !strings.Contains(stdout, "x.job."+job) {
		t.Errorf("backfill output does not name the job %s and its checkpoints:\n%s", job, stdout)
	}

	// Exactly the range, each record once, nothing else.
	for p := range int32(parts) {
		sp := catchup.Partition{Topic: "events", Partition: p}
		got := readPartition(t, e.dst, sp)
		var offs []int64
		for i := range got {
			r := &got[i]
			off := sourceOffset(t, r, sp)
			if r.Timestamp.Before(from) || !r.Timestamp.Before(to) {
				t.Errorf("%s: the copy of source offset %d has timestamp %v, outside [%v, %v)", sp, off, r.Timestamp, from, to)
			}
			offs = append(offs, off)
		}
		want := make([]int64, 0, 40)
		for o := int64(30); o < 70; o++ {
			want = append(want, o)
		}
		if !slices.Equal(offs, want) {
			t.Errorf("%s: target holds copies of source offsets %v; want 30 to 69 once each, in order", sp, offs)
		}
	}
	if got := readPartition(t, e.dst, catchup.Partition{Topic: "other"}); len(got) != 0 {
		t.Errorf("--topics ev.* copied %d records of topic other", len(got))
	}

	// verify agrees over the resolved range.
	src, err := pipeline.ConnectReader(config.Cluster{Name: "x-src", Brokers: e.src.ListenAddrs()}, "read_committed")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := pipeline.ConnectReader(config.Cluster{Name: "x-dst", Brokers: e.dst.ListenAddrs()}, "read_uncommitted")
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	var ps []catchup.Partition
	for p := range int32(parts) {
		ps = append(ps, catchup.Partition{Topic: "events", Partition: p})
	}
	lo, err := src.OffsetsForTime(t.Context(), ps, from)
	if err != nil {
		t.Fatal(err)
	}
	hi, err := src.OffsetsForTime(t.Context(), ps, to)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		res, err := verify.Partition(t.Context(), src, dst, p, p, lo[p], hi[p], verify.Options{Cluster: "x-src"})
		if err != nil {
			t.Fatal(err)
		}
		if !res.OK() || res.Matched != 40 || res.From != 30 || res.To != 70 {
			t.Errorf("verify %s: %+v; want 40 of [30, 70) matched", p, res)
		}
	}

	// Complete: running it again copies nothing, and the pipeline's own
	// checkpoints were never touched.
	bf := decodeOne[backfillJSON](t, mustX(t, exitOK, append(args, "--json")...), "backfill")
	if bf.Job != job || bf.Checkpoints != "x.job."+job {
		t.Errorf("backfill --json: job %q, checkpoints %q; want %q, %q", bf.Job, bf.Checkpoints, job, "x.job."+job)
	}
	rep := bf.reportJSONT
	if rep.Pipeline != "x.job."+job || len(rep.Partitions) != parts {
		t.Errorf("report of pipeline %s with %d partitions; want x.job.%s with %d", rep.Pipeline, len(rep.Partitions), job, parts)
	}
	for _, r := range rep.Partitions {
		if r.Copied != 0 || r.Status != "done" || r.Next != 70 {
			t.Errorf("a complete job again: %s/%d copied %d, status %s, next %d; want 0, done, 70", r.Topic, r.Partition, r.Copied, r.Status, r.Next)
		}
	}
	store, err := filestore.Open(filepath.Join(e.dir, "store"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if cps, err := store.Load(t.Context(), "x"); err != nil || len(cps) != 0 {
		t.Errorf("pipeline x's own checkpoints: %v, %v; want none", cps, err)
	}
}

func TestBackfillRangeIsBetweenTheTwoOffsetsWithOutOfOrderTimestamps(t *testing.T) {
	e := newXEnv(t, map[string]int32{"late": 1}, `late`, "")
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	at := func(s int) time.Time { return base.Add(time.Duration(s) * time.Second) }
	// Timestamps (seconds) by offset: the range [30s, 60s) resolves to
	// offsets [1, 4): the first at or after 30s, the first at or after 60s.
	secs := []int{10, 40, 20, 50, 80, 35, 90, 45}
	var recs []*kgo.Record
	for _, s := range secs {
		recs = append(recs, &kgo.Record{Topic: "late", Value: []byte(fmt.Sprint(s)), Timestamp: at(s)})
	}
	produce(t, e.src, recs)
	mustX(t, exitOK, "backfill", "-c", e.cfg, "--from", at(30).Format(time.RFC3339), "--to", at(60).Format(time.RFC3339), "--job", "late-range")
	var got []string
	for _, r := range readPartition(t, e.dst, catchup.Partition{Topic: "late"}) {
		got = append(got, string(r.Value))
	}
	// 20s is copied (between the two offsets); 35s and 45s are not (after).
	if want := []string{"40", "20", "50"}; !slices.Equal(got, want) {
		t.Errorf("backfill of [30s, 60s) copied the records of %v seconds; want %v", got, want)
	}
}

func TestBackfillUsage(t *testing.T) {
	e := newXEnv(t, map[string]int32{"events": 1}, `events`, "")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--to", "2026-11-02"}, "--from and --to"},
		{[]string{"--from", "yesterday", "--to", "2026-11-02"}, `--from "yesterday"`},
		{[]string{"--from", "2026-11-02", "--to", "2026-11-01"}, "is not after"},
		{[]string{"--from", "2026-11-01", "--to", "2026-11-02", "--job", "a/b"}, `--job "a/b"`},
		{[]string{"--from", "2026-11-01", "--to", "2026-11-02", "--topics", "(?!x)"}, "lookahead"},
		{[]string{"--from", "2026-11-01", "--to", "2026-11-02", "--topics", "nothing"}, "no topic of the source matches"},
	} {
		args := append([]string{"backfill", "-c", e.cfg}, tt.args...)
		code, _, stderr := xCLI(t.Context(), args...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("catchup %v: exit code %d, stderr %q; want %d and %q", args, code, stderr, exitUsage, tt.want)
		}
	}
}

func TestJobName(t *testing.T) {
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.FixedZone("CET", 3600))
	to := time.Date(2026, 11, 2, 12, 30, 0, 250e6, time.UTC)
	if got, want := jobName(from, to), "20261031T230000Z-20261102T123000.250Z"; got != want {
		t.Errorf("jobName = %q, want %q", got, want)
	}
	if !isJobName(jobName(from, to)) {
		t.Errorf("jobName gives a name isJobName refuses")
	}
}

func TestBackfillRefusesARangeThePipelineHasNotPassed(t *testing.T) {
	e := newXEnv(t, map[string]int32{"events": 1}, `events`, "")
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	var recs []*kgo.Record
	for i := range 100 {
		recs = append(recs, &kgo.Record{Topic: "events", Value: []byte(fmt.Sprint(i)), Timestamp: base.Add(time.Duration(i) * time.Second)})
	}
	produce(t, e.src, recs)
	setPipeline := func(next int64) {
		store, err := filestore.Open(filepath.Join(e.dir, "store"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		if err := store.Reset(t.Context(), "x", catchup.Partition{Topic: "events"}, next); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"backfill", "-c", e.cfg, "--from", base.Add(30 * time.Second).Format(time.RFC3339), "--to", base.Add(70 * time.Second).Format(time.RFC3339)}

	setPipeline(20) // the pipeline is still before the range
	code, _, stderr := xCLI(t.Context(), args...)
	if code != exitUsage || !strings.Contains(stderr, "pipeline x has not copied up to the end of this range yet (events/0 at 20, range end 70)") {
		t.Errorf("backfill ahead of the pipeline: exit code %d, stderr %q; want %d and the partition named", code, stderr, exitUsage)
	}
	if got := readPartition(t, e.dst, catchup.Partition{Topic: "events"}); len(got) != 0 {
		t.Errorf("the refused backfill copied %d records", len(got))
	}

	setPipeline(70) // the pipeline has passed it
	mustX(t, exitOK, args...)
	if got := readPartition(t, e.dst, catchup.Partition{Topic: "events"}); len(got) != 40 {
		t.Errorf("backfill behind the pipeline copied %d records, want 40", len(got))
	}
}
