package crashtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestEverySIGTERM runs the real binary in continuous mode (`run --every`).
// First it is stopped by SIGTERM while it copies the backlog: it exits 0 and
// leaves no lease behind. Then it runs again while a producer appends to
// the source; once a run that started after the last append has copied
// everything, SIGTERM stops it (exit 0), and the target is an exact copy of
// the source with the checkpoints at the source ends.
func TestEverySIGTERM(t *testing.T) {
	h, ctx := start(t, options{store: "file", provenance: true}, kfake.SleepOutOfOrder()) // see TestSleepOutOfOrder
	// A slow target, so that the first SIGTERM lands while the backlog is
	// being copied.
	h.dst.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		h.dst.KeepControl()
		h.dst.SleepControl(func() { time.Sleep(10 * time.Millisecond) })
		return nil, nil, false
	})

	c := h.startEvery(t, "first")
	for h.copiedSome(ctx) == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	c.stop(t)
	copied := h.copiedSome(ctx)
	t.Logf("first loop stopped by SIGTERM with %d records in the target", copied)
	for p, cp := range h.checkpoints(ctx) {
		if cp.Owner != "" {
			t.Errorf("after SIGTERM: %s still leased by %q", p, cp.Owner)
		}
	}

	// Records appended while the loop runs: each batch is followed by two
	// more runs (the second started after the append), so the runs see the
	// source grow between them.
	c = h.startEvery(t, "second")
	var reps []runReport
	for range 5 {
		h.appendPlain(ctx, 100)
		n := len(c.reports(t))
		for reps = c.reports(t); len(reps) < n+2; reps = c.reports(t) {
			if ctx.Err() != nil {
				t.Fatalf("the loop made no runs after an append: %d reports\n%s", len(reps), c.log(t))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if last := reps[len(reps)-1]; !last.caughtUp() {
		t.Errorf("the last run, started after the last append, did not copy everything: %+v", last)
	}
	c.stop(t)
	t.Logf("second loop: %d runs", len(c.reports(t)))
	tl := h.check(ctx)
	h.summary(tl, "", 0)
	h.requireExact(tl)
}

// everyChild is a `catchup run --every` process whose stdout goes to a file,
// which the test reads while it runs.
type everyChild struct {
	cmd          *exec.Cmd
	stdout, logf string
	exited       chan error
}

func (h *harness) startEvery(t *testing.T, name string) *everyChild {
	t.Helper()
	c := &everyChild{stdout: filepath.Join(h.dir, name+".out"), logf: filepath.Join(h.dir, name+".log"), exited: make(chan error, 1)}
	out, err := os.Create(c.stdout)
	if err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(c.logf)
	if err != nil {
		t.Fatal(err)
	}
	c.cmd = exec.Command(catchupBin, "run", "-c", h.cfg, "--owner", ownerID, "--json", "--every", "100ms")
	c.cmd.Env, c.cmd.Stdout, c.cmd.Stderr = h.env, out, logf
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("start catchup run --every: %v", err)
	}
	go func() {
		c.exited <- c.cmd.Wait()
		out.Close()
		logf.Close()
	}()
	t.Cleanup(func() { _ = c.cmd.Process.Kill() })
	return c
}

// stop sends SIGTERM and fails the test unless the process exits 0 soon.
func (c *everyChild) stop(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-c.exited:
		if err != nil {
			t.Fatalf("catchup run --every after SIGTERM: %v, want exit 0\n%s", err, c.log(t))
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("catchup run --every did not exit within 30s of SIGTERM\n%s", c.log(t))
	}
}

func (c *everyChild) log(t *testing.T) string {
	b, err := os.ReadFile(c.logf)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// reports decodes the complete JSON documents written so far, one per run
// (the one pipeline's entry; none for a run that failed before its report).
func (c *everyChild) reports(t *testing.T) []runReport {
	t.Helper()
	b, err := os.ReadFile(c.stdout)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var out []runReport
	for {
		var doc struct {
			Pipelines []runReport `json:"pipelines"`
		}
		if err := dec.Decode(&doc); err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("report %d: %v", len(out)+1, err)
			}
			return out // a report being written is read next time
		}
		var r runReport
		if len(doc.Pipelines) > 0 {
			r = doc.Pipelines[0]
		}
		out = append(out, r)
	}
}

// caughtUp reports whether every partition of the run ended done with no lag.
func (r runReport) caughtUp() bool {
	for _, p := range r.Partitions {
		if p.Status != "done" || p.Lag != 0 {
			return false
		}
	}
	return len(r.Partitions) > 0
}

// copiedSome returns the records in the target, all partitions together.
func (h *harness) copiedSome(ctx context.Context) int64 {
	var n int64
	for _, end := range h.targetEnds(ctx) {
		n += end
	}
	return n
}
