package filestore_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/checkpoint/checkpointtest"
	"github.com/kafka-catchup/catchup/internal/checkpoint/filestore"
)

func TestStore(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T, now func() time.Time) checkpoint.Store {
		dir := t.TempDir()
		s := open(t, dir, now)
		// Runs after the suite closed s: every file left is valid and final.
		t.Cleanup(func() { checkDir(t, dir, now) })
		return s
	})
}

// checkDir fails if dir holds temporary files, or a pipeline file that a new
// Store cannot read.
func checkDir(t *testing.T, dir string, now func() time.Time) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := open(t, dir, now)
	defer s.Close()
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		switch {
		case ok:
			if _, err := s.Load(context.Background(), name); err != nil { // t.Context is done in cleanups
				t.Errorf("reopen and Load(%s): %v", name, err)
			}
		case strings.HasSuffix(e.Name(), ".lock"), strings.HasSuffix(e.Name(), ".journal"):
		default:
			t.Errorf("%s left behind in %s", e.Name(), dir)
		}
	}
}

func TestLockInProcess(t *testing.T) {
	dir := t.TempDir()
	s1, s2 := open(t, dir, nil), open(t, dir, nil)
	if _, err := s1.Load(t.Context(), "orders"); err != nil {
		t.Fatalf("Load by the first store: %v", err)
	}
	_, err := s2.Load(t.Context(), "orders")
	wantLocked(t, err, filepath.Join(dir, "orders.lock"), os.Getpid())
	if _, err := s2.Load(t.Context(), "payments"); err != nil {
		t.Errorf("Load of another pipeline by the second store: %v", err)
	}
	if err := s1.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := s2.Load(t.Context(), "orders"); err != nil {
		t.Errorf("Load by the second store after the first closed: %v", err)
	}
}

// TestLockAcrossProcesses runs TestHelperProcess in a child process that
// holds a pipeline, and checks that this process cannot use it meanwhile.
func TestLockAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "CATCHUP_FILESTORE_HELPER_DIR="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if line != "locked\n" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("helper process said %q (%v), want \"locked\"; stderr:\n%s", line, err, stderr.String())
	}

	s := open(t, dir, nil)
	_, err = s.Load(t.Context(), "orders")
	wantLocked(t, err, filepath.Join(dir, "orders.lock"), cmd.Process.Pid)

	stdin.Close() // tells the helper to close its store and exit
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper process: %v; stderr:\n%s", err, stderr.String())
	}
	if _, err := s.Load(t.Context(), "orders"); err != nil {
		t.Errorf("Load after the helper process exited: %v", err)
	}
}

// TestHelperProcess is not a test: TestLockAcrossProcesses runs it in a child
// process, where it locks the pipeline "orders", says "locked" and holds the
// lock until its stdin closes.
func TestHelperProcess(t *testing.T) {
	dir := os.Getenv("CATCHUP_FILESTORE_HELPER_DIR")
	if dir == "" {
		t.Skip("helper process for TestLockAcrossProcesses")
	}
	s, err := filestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(t.Context(), "orders"); err != nil {
		t.Fatal(err)
	}
	fmt.Println("locked")
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		t.Error(err)
	}
	if err := s.Close(); err != nil {
		t.Error(err)
	}
}

func wantLocked(t *testing.T, err error, lockFile string, pid int) {
	t.Helper()
	if !errors.Is(err, filestore.ErrLocked) {
		t.Fatalf("Load of a pipeline locked elsewhere = %v, want an error wrapping %q", err, filestore.ErrLocked)
	}
	for _, want := range []string{lockFile, fmt.Sprintf("pid %d", pid), "another catchup run"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("lock error %q does not say %q", err, want)
		}
	}
}

func TestStaleLease(t *testing.T) {
	dir := t.TempDir()
	clk := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return clk }
	p := catchup.Partition{Topic: "orders", Partition: 0}
	q := catchup.Partition{Topic: "orders", Partition: 1}

	s1 := open(t, dir, now)
	la := acquire(t, s1, p, "run-a")
	commit(t, s1, la, checkpoint.Commit{Next: 10, TargetEnd: 8, Records: 10, Bytes: 100})
	acquire(t, s1, q, "run-a")
	if err := s1.Close(); err != nil { // a crash: no Release
		t.Fatal(err)
	}

	// The leases are live by the clock, but their process is gone.
	s2 := open(t, dir, now)
	lb, cp, err := s2.Acquire(t.Context(), "pl", p, "run-b", time.Minute)
	if err != nil {
		t.Fatalf("Acquire of a lease left by a closed store: %v", err)
	}
	want := checkpoint.Checkpoint{
		Partition: p, Exists: true, Next: 10, TargetEnd: 8, Records: 10, Bytes: 100, Commits: 1,
		Owner: "run-b", Epoch: 2, Expires: clk.Add(time.Minute), Updated: clk,
	}
	if d := cmp.Diff(want, cp); d != "" {
		t.Errorf("Acquire mismatch (-want +got):\n%s", d)
	}
	if err := s2.Commit(t.Context(), la, checkpoint.Commit{Next: 20}); !errors.Is(err, checkpoint.ErrFenced) {
		t.Errorf("Commit with the lease of the closed store = %v, want an error wrapping %q", err, checkpoint.ErrFenced)
	}
	commit(t, s2, lb, checkpoint.Commit{Next: 20, TargetEnd: 18})
	if err := s2.Reset(t.Context(), "pl", q, 0); err != nil {
		t.Errorf("Reset of a partition leased by the closed store: %v", err)
	}
}

func TestReopen(t *testing.T) {
	dir := t.TempDir()
	clk := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return clk }
	p := catchup.Partition{Topic: "orders.eu", Partition: 3}
	q := catchup.Partition{Topic: "orders.eu", Partition: 4}

	s1 := open(t, dir, now)
	l := acquire(t, s1, p, "run-a")
	gap := checkpoint.Gap{From: 5, To: 9, At: clk}
	commit(t, s1, l, checkpoint.Commit{Next: 100, TargetEnd: 91, Records: 91, Bytes: 9100, Gap: &gap, Error: "produce: timeout"})
	if err := s1.Reset(t.Context(), "pl", q, 1<<62); err != nil {
		t.Fatal(err)
	}
	v := checkpoint.Verification{At: clk, From: 0, To: 100, Source: 100, Matched: 99, Missing: 1, First: "source offset 7: missing in the target"}
	if err := s1.RecordVerification(t.Context(), "pl", p, v); err != nil {
		t.Fatal(err)
	}
	before, err := s1.Load(t.Context(), "pl")
	if err != nil {
		t.Fatal(err)
	}
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}

	after, err := open(t, dir, now).Load(t.Context(), "pl")
	if err != nil {
		t.Fatalf("Load after reopen: %v", err)
	}
	// Everything survives but the lease of the closed store, which has
	// expired (see TestStaleLease); its owner stays, to say that it was
	// never released.
	before[0].Expires = time.Time{}
	if d := cmp.Diff(before, after, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("Load after reopen mismatch (-before +after):\n%s", d)
	}
}

// TestFileFormat pins the file format: people read these files, and older
// files must stay readable. A small pipeline rests in its snapshot alone
// once its Store is closed.
func TestFileFormat(t *testing.T) {
	dir := t.TempDir()
	clk := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := open(t, dir, func() time.Time { return clk })
	p := catchup.Partition{Topic: "orders", Partition: 0}
	l := acquire(t, s, p, "run-a")
	commit(t, s, l, checkpoint.Commit{Next: 42, TargetEnd: 40, Records: 40, Bytes: 4000, Gap: &checkpoint.Gap{From: 0, To: 2, At: clk}})
	if err := s.Reset(t.Context(), "pl", catchup.Partition{Topic: "audit", Partition: 1}, 7); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	before := readFile(t, filepath.Join(dir, "pl.json"))
	if d := cmp.Diff(unverified, before); d != "" {
		t.Errorf("pl.json mismatch (-want +got):\n%s", d)
	}
	s = open(t, dir, func() time.Time { return clk })

	verified := []struct {
		p catchup.Partition
		v checkpoint.Verification
	}{
		{catchup.Partition{Topic: "audit", Partition: 1}, checkpoint.Verification{At: clk.Add(time.Hour), From: 0, To: 7, Source: 7, Matched: 7}},
		{p, checkpoint.Verification{
			At: clk.Add(2 * time.Hour), From: 2, To: 42, Source: 40, Matched: 37, Missing: 1, Duplicated: 2, Differing: 1, OutOfOrder: 1,
			First: "source offset 9: missing in the target",
		}},
	}
	for _, pv := range verified {
		if err := s.RecordVerification(t.Context(), "pl", pv.p, pv.v); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The lease of run-a has no expiry any more: the Store that wrote it is
	// closed (see TestStaleLease).
	const want = `{
  "version": 1,
  "pipeline": "pl",
  "checkpoints": [
    {
      "topic": "audit",
      "partition": 1,
      "exists": true,
      "next": 7,
      "target_end": -1,
      "records": 0,
      "bytes": 0,
      "commits": 0,
      "epoch": 0,
      "updated": "2026-03-01T12:00:00Z",
      "verification": {
        "at": "2026-03-01T13:00:00Z",
        "from": 0,
        "to": 7,
        "source": 7,
        "matched": 7,
        "missing": 0,
        "duplicated": 0,
        "differing": 0,
        "out_of_order": 0
      }
    },
    {
      "topic": "orders",
      "partition": 0,
      "exists": true,
      "next": 42,
      "target_end": 40,
      "records": 40,
      "bytes": 4000,
      "commits": 1,
      "owner": "run-a",
      "epoch": 1,
      "gaps": [
        {
          "from": 0,
          "to": 2,
          "at": "2026-03-01T12:00:00Z"
        }
      ],
      "updated": "2026-03-01T12:00:00Z",
      "verification": {
        "at": "2026-03-01T14:00:00Z",
        "from": 2,
        "to": 42,
        "source": 40,
        "matched": 37,
        "missing": 1,
        "duplicated": 2,
        "differing": 1,
        "out_of_order": 1,
        "first": "source offset 9: missing in the target"
      }
    }
  ]
}
`
	if d := cmp.Diff(want, readFile(t, filepath.Join(dir, "pl.json"))); d != "" {
		t.Errorf("pl.json after RecordVerification mismatch (-want +got):\n%s", d)
	}

	// The same texts, written by hand, read back: the one with verifications
	// and the one from before verifications were recorded.
	for _, tc := range []struct {
		name, text string
		verified   bool
	}{{"verified", want, true}, {"unverified", unverified, false}} {
		dir2 := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir2, "pl.json"), []byte(tc.text), 0o600); err != nil {
			t.Fatal(err)
		}
		cps, err := open(t, dir2, nil).Load(t.Context(), "pl")
		if err != nil || len(cps) != 2 || cps[1].Next != 42 || len(cps[1].Gaps) != 1 {
			t.Fatalf("Load of the hand-written %s file = %+v, %v; want audit/1 and orders/0 at 42 with a gap", tc.name, cps, err)
		}
		for i, pv := range verified {
			var wantV *checkpoint.Verification
			if tc.verified {
				wantV = &pv.v
			}
			if d := cmp.Diff(wantV, cps[i].LastVerification); d != "" {
				t.Errorf("Load of the hand-written %s file: %s verification mismatch (-want +got):\n%s", tc.name, cps[i].Partition, d)
			}
		}
	}
}

// unverified is a file written before verifications were recorded.
const unverified = `{
  "version": 1,
  "pipeline": "pl",
  "checkpoints": [
    {
      "topic": "audit",
      "partition": 1,
      "exists": true,
      "next": 7,
      "target_end": -1,
      "records": 0,
      "bytes": 0,
      "commits": 0,
      "epoch": 0,
      "updated": "2026-03-01T12:00:00Z"
    },
    {
      "topic": "orders",
      "partition": 0,
      "exists": true,
      "next": 42,
      "target_end": 40,
      "records": 40,
      "bytes": 4000,
      "commits": 1,
      "owner": "run-a",
      "epoch": 1,
      "expires": "2026-03-01T12:01:00Z",
      "gaps": [
        {
          "from": 0,
          "to": 2,
          "at": "2026-03-01T12:00:00Z"
        }
      ],
      "updated": "2026-03-01T12:00:00Z"
    }
  ]
}
`

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCorruptFile(t *testing.T) {
	for _, tc := range []struct {
		name, content, want string
	}{
		{"Empty", "", "unexpected end of JSON input"},
		{"NotJSON", "checkpoints: yes\n", "line 1 column 1: invalid character"},
		{"Truncated", "{\n  \"version\": 1,\n  \"pipeline\": \"pl\",\n  \"checkpoints\": [\n", "unexpected end of JSON input"},
		{"TrailingData", `{"version": 1, "pipeline": "pl", "checkpoints": []} {}`, "after top-level value"},
		{"NoVersion", `{"pipeline": "pl", "checkpoints": []}`, `no "version" field`},
		{"NotAnObject", `[1, 2]`, "holds a JSON array, not an object"},
		{"VersionNotNumber", `{"version": "1"}`, "line 1 column 15: json: cannot unmarshal string"},
		{"FutureVersion", `{"version": 2, "pipeline": "pl", "stuff": {}}`, "format version 2, this catchup reads version 1"},
		{"UnknownField", `{"version": 1, "pipeline": "pl", "checkpoints": [{"topic": "t", "partition": 0, "nxt": 5}]}`, `unknown field "nxt"`},
		{"WrongType", "{\"version\": 1,\n \"pipeline\": \"pl\", \"checkpoints\": [{\"topic\": \"t\", \"next\": \"5\"}]}", "line 2 column"},
		{"OtherPipeline", `{"version": 1, "pipeline": "other", "checkpoints": []}`, `holds pipeline "other", want "pl"`},
		{"NoTopic", `{"version": 1, "pipeline": "pl", "checkpoints": [{"partition": 0}]}`, "checkpoint 0 has no topic"},
		{"Duplicate", `{"version": 1, "pipeline": "pl", "checkpoints": [{"topic": "t", "partition": 0}, {"topic": "t", "partition": 0}]}`, "checkpoint 1: t/0 appears twice"},
		{"NegativePartition", `{"version": 1, "pipeline": "pl", "checkpoints": [{"topic": "t", "partition": -1}]}`,
			"checkpoint 0: topic t: partition -1 is negative; the file is damaged"},
		{"NegativeNext", `{"version": 1, "pipeline": "pl", "checkpoints": [{"topic": "t", "partition": 2, "exists": true, "next": -7}]}`,
			"checkpoint 0: t/2: next -7 is negative; the file is damaged"},
		{"TargetEndBelowUnknown", `{"version": 1, "pipeline": "pl", "checkpoints": [{"topic": "t", "partition": 0, "next": 5, "target_end": -3}]}`,
			"checkpoint 0: t/0: target_end -3 is below -1 (unknown)"},
		{"NegativeStart", `{"version": 1, "pipeline": "pl", "checkpoints": [{"topic": "t", "partition": 0, "start": -2}]}`,
			"checkpoint 0: t/0: start -2 is negative"},
		{"BadTime", `{"version": 1, "pipeline": "pl", "checkpoints": [{"topic": "t", "partition": 0, "updated": "yesterday"}]}`, "parsing time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "pl.json")
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			s := open(t, dir, nil)
			_, err := s.Load(t.Context(), "pl")
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load of %q = %v, want an error naming %s and saying %q", tc.content, err, path, tc.want)
			}
			// Never start over: writes are refused too, and the file stays.
			if _, _, err := s.Acquire(t.Context(), "pl", catchup.Partition{Topic: "t", Partition: 0}, "run-a", time.Minute); err == nil {
				t.Errorf("Acquire on a corrupt file = nil error, want an error")
			}
			if got, err := os.ReadFile(path); err != nil || string(got) != tc.content {
				t.Errorf("corrupt file now holds %q (%v), want it untouched", got, err)
			}
		})
	}
}

func TestPipelineNames(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, nil)
	for _, name := range []string{"", ".", "..", ".hidden", "a/b", "../up", `a\b`, "a\x00b", strings.Repeat("x", 201)} {
		if _, err := s.Load(t.Context(), name); err == nil {
			t.Errorf("Load(%q) = nil error, want an error", name)
		}
	}
	for _, name := range []string{"orders", "orders.eu-west_1", "Orders-2", strings.Repeat("x", 200)} {
		if _, err := s.Load(t.Context(), name); err != nil {
			t.Errorf("Load(%q): %v", name, err)
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(dir)); len(entries) != 1 {
		t.Errorf("%s holds %d entries, want only the store's directory", filepath.Dir(dir), len(entries))
	}
}

func TestClosed(t *testing.T) {
	s := open(t, t.TempDir(), nil)
	if _, err := s.Load(t.Context(), "pl"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v, want nil", err)
	}
	if _, err := s.Load(t.Context(), "pl"); !errors.Is(err, filestore.ErrClosed) {
		t.Errorf("Load after Close = %v, want an error wrapping %q", err, filestore.ErrClosed)
	}
	if err := s.RecordVerification(t.Context(), "pl", catchup.Partition{Topic: "orders"}, checkpoint.Verification{}); !errors.Is(err, filestore.ErrClosed) {
		t.Errorf("RecordVerification after Close = %v, want an error wrapping %q", err, filestore.ErrClosed)
	}
}

// TestFailedWrite checks that a change whose file write fails is not kept.
func TestFailedWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	s := open(t, dir, nil)
	p := catchup.Partition{Topic: "orders", Partition: 0}
	l := acquire(t, s, p, "run-a")
	commit(t, s, l, checkpoint.Commit{Next: 10, TargetEnd: 10})
	if err := os.RemoveAll(dir); err != nil { // the store cannot write any more
		t.Fatal(err)
	}
	if err := s.Commit(t.Context(), l, checkpoint.Commit{Next: 20, TargetEnd: 20}); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("Commit into a removed directory = %v, want an error naming %s", err, dir)
	}
	if err := s.Reset(t.Context(), "pl", catchup.Partition{Topic: "orders", Partition: 1}, 5); err == nil {
		t.Errorf("Reset into a removed directory = nil error, want an error")
	}
	if err := s.RecordVerification(t.Context(), "pl", p, checkpoint.Verification{To: 10, Source: 10, Matched: 10}); err == nil {
		t.Errorf("RecordVerification into a removed directory = nil error, want an error")
	}
	cps, err := s.Load(t.Context(), "pl")
	if err != nil || len(cps) != 1 || cps[0].Next != 10 || cps[0].Commits != 1 || cps[0].LastVerification != nil {
		t.Errorf("Load after failed writes = %+v, %v; want only %s at 10 after 1 commit, never verified", cps, err, p)
	}
}

func open(t *testing.T, dir string, now func() time.Time) *filestore.Store {
	t.Helper()
	s, err := filestore.Open(dir, now)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func acquire(t *testing.T, s *filestore.Store, p catchup.Partition, owner string) checkpoint.Lease {
	t.Helper()
	l, _, err := s.Acquire(t.Context(), "pl", p, owner, time.Minute)
	if err != nil {
		t.Fatalf("Acquire(pl, %s, %s): %v", p, owner, err)
	}
	return l
}

func commit(t *testing.T, s *filestore.Store, l checkpoint.Lease, c checkpoint.Commit) {
	t.Helper()
	if err := s.Commit(t.Context(), l, c); err != nil {
		t.Fatalf("Commit(%s %s, next %d): %v", l.Pipeline, l.Partition, c.Next, err)
	}
}
