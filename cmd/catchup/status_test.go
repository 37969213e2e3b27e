package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/checkpoint/filestore"
)

// TestStatusAndPlanWhileARunHoldsTheLock reads status and plan while
// another Store (a run) holds the file store's lock of the pipeline: both
// work, status shows the run's live lease, and nothing is written. Once the
// run is gone, its lease left in the file shows as dead (no owner).
func TestStatusAndPlanWhileARunHoldsTheLock(t *testing.T) {
	e := newCLIEnv(t)
	mustCLI(t, exitOK, "", "run", "-c", e.cfg)
	st, err := filestore.Open(filepath.Join(e.dir, "store"), nil)
	if err != nil {
		t.Fatal(err)
	}
	p1 := catchup.Partition{Topic: cliTopic, Partition: 1}
	l, _, err := st.Acquire(t.Context(), cliPipeline, p1, "live-run", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(t.Context(), l, checkpoint.Commit{Next: cliPerPart, TargetEnd: cliPerPart}); err != nil {
		t.Fatal(err)
	}

	rows := statusJSON(t, e.cfg)
	if r := rows[1]; r.Owner != "live-run" || r.LeaseExpires.IsZero() || r.Checkpoint == nil || *r.Checkpoint != cliPerPart {
		t.Errorf("status while the run holds the lock: partition 1 %+v, want lease_owner live-run, checkpoint %d", r, cliPerPart)
	}
	if r := rows[0]; r.Owner != "" || r.Lag != 0 {
		t.Errorf("status while the run holds the lock: partition 0 %+v, want no lease, lag 0", r)
	}
	mustCLI(t, exitOK, "", "plan", "-c", e.cfg)
	// The run still holds its lock: it can commit.
	if err := st.Release(t.Context(), l); err != nil {
		t.Fatalf("release after status and plan: %v", err)
	}

	// A run that died with its lease: the next reader holds the lock, so
	// the lease is dead.
	l, _, err = st.Acquire(t.Context(), cliPipeline, p1, "dead-run", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	_ = l
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if r := statusJSON(t, e.cfg)[1]; r.Owner != "" {
		t.Errorf("status after the run died: partition 1 lease_owner %q, want none", r.Owner)
	}
}

func TestSince(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		t    time.Time
		want string
	}{
		{time.Time{}, "-"},
		{now.Add(time.Minute), "0s"},
		{now.Add(-192500 * time.Millisecond), "3m12s"},
		{now.Add(-(26*time.Hour + 5*time.Minute + 9*time.Second)), "26h5m"},
	} {
		if got := since(now, tc.t); got != tc.want {
			t.Errorf("since(%v) = %q, want %q", tc.t, got, tc.want)
		}
	}
}

// TestStatusShowsLastWrite: status prints, per partition and for the
// pipeline, how long ago its checkpoint was last written.
func TestStatusShowsLastWrite(t *testing.T) {
	e := newCLIEnv(t)
	mustCLI(t, exitOK, "", "run", "-c", e.cfg)
	out, _ := mustCLI(t, exitOK, "", "status", "-c", e.cfg)
	lines := strings.Split(out, "\n")
	col := slices.Index(strings.Fields(lines[1]), "SINCE_UPDATE")
	rows := 0
	for _, l := range lines[2:] {
		if f := strings.Fields(l); len(f) > col && col >= 0 && f[0] == cliTopic {
			if _, err := time.ParseDuration(f[col]); err != nil {
				t.Errorf("status: SINCE_UPDATE %q is not a duration: %v", f[col], err)
			}
			rows++
		}
	}
	if rows != cliParts || !strings.Contains(out, "; last checkpoint write ") {
		t.Errorf("status after a run:\n%s\nwant a SINCE_UPDATE duration on each of %d partitions, and the pipeline's last write", out, cliParts)
	}
}
