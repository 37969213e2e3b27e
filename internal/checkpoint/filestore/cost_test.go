package filestore_test

import (
	"errors"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/checkpoint/filestore"
)

// seedPipeline writes the snapshot of pipeline "pl" with n partitions over
// n/100 topics (at least one), each with a checkpoint, as a run of the
// whole pipeline leaves it, and returns the partitions.
func seedPipeline(tb testing.TB, dir string, n int) []catchup.Partition {
	tb.Helper()
	perTopic := min(n, 100)
	ps := make([]catchup.Partition, n)
	var b bytes.Buffer
	b.WriteString(`{"version": 1, "pipeline": "pl", "checkpoints": [`)
	for i := range n {
		ps[i] = catchup.Partition{Topic: fmt.Sprintf("topic-%03d", i/perTopic), Partition: int32(i % perTopic)}
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `
    {"topic": %q, "partition": %d, "exists": true, "next": 123456, "target_end": 123456, "records": 123456,
     "bytes": 12345600, "commits": 12, "epoch": 12, "updated": "2026-03-01T11:00:00Z"}`, ps[i].Topic, ps[i].Partition)
	}
	b.WriteString("\n]}\n")
	if err := os.WriteFile(filepath.Join(dir, "pl.json"), b.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
	return ps
}

// run is what a run that copies a window of each of active does to the
// store: Load, then per partition a lease, a commit, and a last commit that
// releases the lease (3 writes).
func run(tb testing.TB, s checkpoint.Store, active []catchup.Partition) {
	tb.Helper()
	ctx := tb.Context()
	if _, err := s.Load(ctx, "pl"); err != nil {
		tb.Fatal(err)
	}
	for _, p := range active {
		l, cp, err := s.Acquire(ctx, "pl", p, "run", time.Minute)
		if err != nil {
			tb.Fatal(err)
		}
		for i, release := range []bool{false, true} {
			next := cp.Next + int64(i+1)*10
			if err := s.Commit(ctx, l, checkpoint.Commit{Next: next, TargetEnd: next, Records: 10, Bytes: 1000, Release: release}); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// every returns one partition in k of ps.
func every(ps []catchup.Partition, k int) []catchup.Partition {
	var out []catchup.Partition
	for i := 0; i < len(ps); i += k {
		out = append(out, ps[i])
	}
	return out
}

// TestWriteCostOfFewPartitions pins the bytes a run that touches 1 % of a
// pipeline writes: a journal line per change, whatever the pipeline's
// size, where rewriting the whole file made it grow with the pipeline.
// Consecutive runs on one directory include the compactions the journal
// triggers, which are amortised over the changes that grew it, and Close's
// compaction of a pipeline of up to 16 KiB.
func TestWriteCostOfFewPartitions(t *testing.T) {
	const (
		runs          = 2
		perChangeMost = 1024 // bytes a change may write, amortised: a line of ~300 and its share of compactions
	)
	for _, n := range []int{100, 1000, 10000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			dir := t.TempDir()
			active := every(seedPipeline(t, dir, n), 100)
			var written int64
			for range runs {
				s, err := filestore.Open(dir, nil)
				if err != nil {
					t.Fatal(err)
				}
				run(t, s, active)
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				written += s.BytesWritten()
			}
			changes := int64(runs * 3 * len(active))
			t.Logf("%d partitions, %d active: %d bytes per run, %d per change", n, len(active), written/runs, written/changes)
			if written > changes*perChangeMost+runs*16<<10 {
				t.Errorf("%d runs of %d active partitions in a pipeline of %d wrote %d bytes, %d per change; want at most %d per change and 16 KiB per run",
					runs, len(active), n, written, written/changes, perChangeMost)
			}
		})
	}
}

// BenchmarkRunWriteBytes reports the bytes one run of 1 % active partitions
// writes through write(2) (wchar of /proc/self/io, all the process's
// writes), at 100, 1,000 and 10,000 partitions:
//
//	go test -run '^$' -bench RunWriteBytes -benchtime 3x ./internal/checkpoint/filestore/
func BenchmarkRunWriteBytes(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			dir := b.TempDir()
			active := every(seedPipeline(b, dir, n), 100)
			var written int64
			for b.Loop() {
				s, err := filestore.Open(dir, nil)
				if err != nil {
					b.Fatal(err)
				}
				before := wchar(b)
				run(b, s, active)
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				written += wchar(b) - before
			}
			b.ReportMetric(float64(written)/float64(b.N), "bytes/run")
			b.ReportMetric(float64(written)/float64(b.N)/float64(3*len(active)), "bytes/change")
		})
	}
}

// wchar returns the bytes the process has passed to write(2) and its kin.
func wchar(b *testing.B) int64 {
	b.Helper()
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		b.Skipf("no write counter here: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("wchar: ")); ok {
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatal("no wchar in /proc/self/io")
	return 0
}

// loadAll returns Load of "pl" from a new Store on dir, closed after.
func loadAll(t *testing.T, dir string) []checkpoint.Checkpoint {
	t.Helper()
	s := open(t, dir, nil)
	cps, err := s.Load(t.Context(), "pl")
	if err != nil {
		t.Fatalf("Load after reopen: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return cps
}

// TestJournalCompaction checks that the journal is folded into the snapshot
// once it outgrows it, and that the state survives it.
func TestJournalCompaction(t *testing.T) {
	dir := t.TempDir()
	active := every(seedPipeline(t, dir, 300), 10) // a snapshot of ~80 KB, 20 KB of journal a run
	s := open(t, dir, nil)
	compacted, last := 0, int64(0)
	for i := range 12 {
		run(t, s, active)
		j, err := os.Stat(filepath.Join(dir, "pl.journal"))
		if err != nil {
			t.Fatal(err)
		}
		snapshot := int64(len(readFile(t, filepath.Join(dir, "pl.json"))))
		if j.Size() > snapshot+1024 {
			t.Fatalf("run %d: journal of %d bytes, snapshot %d: not compacted", i, j.Size(), snapshot)
		}
		if j.Size() < last {
			compacted++
		}
		last = j.Size()
	}
	want, err := s.Load(t.Context(), "pl")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if compacted == 0 {
		t.Errorf("12 runs of 90 changes over a snapshot of 300 partitions never compacted the journal")
	}
	if d := cmp.Diff(want, loadAll(t, dir), cmpopts.EquateEmpty()); d != "" {
		t.Errorf("Load after compactions and reopen mismatch (-want +got):\n%s", d)
	}
}

// TestJournalCrash checks the two states a crash can leave: a torn last
// line (a change whose write never returned), which is dropped and cut off,
// and a journal left behind by a compaction whose snapshot was written,
// which replays to the same state.
func TestJournalCrash(t *testing.T) {
	t.Run("TornLine", func(t *testing.T) {
		dir := t.TempDir()
		ps := seedPipeline(t, dir, 100) // too large for Close to compact
		s := open(t, dir, nil)
		run(t, s, ps[:1])
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		want := loadAll(t, dir)
		journal := filepath.Join(dir, "pl.journal")
		f, err := os.OpenFile(journal, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(`{"topic":"topic-000","partition":1,"exists":true,"next":99`); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if d := cmp.Diff(want, loadAll(t, dir), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("Load with a torn last line mismatch (-want +got):\n%s", d)
		}
		s = open(t, dir, nil)
		run(t, s, ps[1:2])
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if got := loadAll(t, dir); got[1].Next != 123456+20 || got[0].Next != 123456+20 {
			t.Errorf("after a torn line and a new run: %s at %d and %s at %d, want both at %d", got[0].Partition, got[0].Next, got[1].Partition, got[1].Next, 123456+20)
		}
	})
	t.Run("CompactedJournalLeft", func(t *testing.T) {
		dir := t.TempDir()
		ps := seedPipeline(t, dir, 10) // small: Close compacts
		s := open(t, dir, nil)
		run(t, s, ps[:3])
		run(t, s, ps[1:2])
		journal := filepath.Join(dir, "pl.journal")
		lines := readFile(t, journal)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(journal); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("journal of a small pipeline after Close: %v, want it folded into the snapshot", err)
		}
		want := loadAll(t, dir)
		if err := os.WriteFile(journal, []byte(lines), 0o644); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, loadAll(t, dir), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("Load of a snapshot with its journal left behind mismatch (-want +got):\n%s", d)
		}
	})
}

func TestCorruptJournal(t *testing.T) {
	const head = `{"version":1,"pipeline":"pl","journal":true}` + "\n"
	const line = `{"topic":"t","partition":0,"exists":true,"next":5,"target_end":5,"records":0,"bytes":0,"commits":1,"epoch":1}` + "\n"
	for _, tc := range []struct {
		name, content, want string
	}{
		{"NoHeader", line, "line 1: json: unknown field \"topic\""},
		{"NotAHeader", `{"version":1,"pipeline":"pl"}` + "\n" + line, "line 1 is not a catchup journal header"},
		{"FutureVersion", `{"version":2,"pipeline":"pl","journal":true}` + "\n", "format version 2, this catchup reads version 1"},
		{"OtherPipeline", `{"version":1,"pipeline":"other","journal":true}` + "\n", `holds pipeline "other", want "pl"`},
		{"BadLine", head + "{\"topic\":\"t\",\"nxt\":5}\n" + line, `line 2: json: unknown field "nxt"`},
		{"NoTopic", head + "{\"partition\":0}\n", "line 2 has no topic"},
		{"NegativeNext", head + line + "{\"topic\":\"t\",\"partition\":0,\"exists\":true,\"next\":-1}\n", "line 3: t/0: next -1 is negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "pl.journal")
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			s := open(t, dir, nil)
			_, err := s.Load(t.Context(), "pl")
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load with journal %q = %v, want an error naming %s and saying %q", tc.content, err, path, tc.want)
			}
			if got, err := os.ReadFile(path); err != nil || string(got) != tc.content {
				t.Errorf("corrupt journal now holds %q (%v), want it untouched", got, err)
			}
		})
	}
}
