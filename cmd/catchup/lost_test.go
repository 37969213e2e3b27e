package main

import (
	"fmt"
	"path/filepath"
	"testing"
)

// TestLostStoreShownByPlanAndAdoptedByRun: a pipeline whose store is gone
// (here a new, empty file store) over a target its copies filled: plan shows
// each partition's target ahead of its window (target_next), and the run
// copies nothing twice, exit 0. Before the read-back, the run copied every
// record a second time (each target partition ended at twice its source).
func TestLostStoreShownByPlanAndAdoptedByRun(t *testing.T) {
	e := newCLIEnv(t)
	runJSON(t, e.cfg)
	lost := e.writeConfigStore(t, "lost.yaml", e.dst.ListenAddrs()[0], "file://"+filepath.Join(e.dir, "new-store"))

	stdout, _ := mustCLI(t, exitOK, "", "plan", "--json", "-c", lost)
	pl := decodeOne[planJSONT](t, stdout, "plan")
	for _, row := range pl.Partitions {
		if row.From != 0 || row.TargetNext != cliPerPart {
			t.Errorf("plan, partition %d: from %d, target_next %d; want 0 and %d", row.Partition, row.From, row.TargetNext, cliPerPart)
		}
	}
	rep := runJSON(t, lost)
	for _, r := range rep.Partitions {
		if r.Copied != 0 || r.Next != cliPerPart || r.Status != "done" {
			t.Errorf("run, partition %d: copied %d, next %d, status %s; want 0, %d, done", r.Partition, r.Copied, r.Next, r.Status, cliPerPart)
		}
	}
	if ends := targetEnds(t, e.dst.ListenAddrs()[0]); fmt.Sprint(ends) != fmt.Sprint([]int64{cliPerPart, cliPerPart, cliPerPart}) {
		t.Errorf("target ends %v; want %d each: nothing copied twice", ends, cliPerPart)
	}
}
