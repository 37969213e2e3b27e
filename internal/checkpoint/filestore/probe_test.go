package filestore_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kafka-catchup/catchup/internal/checkpoint/filestore"
)

// TestReadOnlyDoesNotLockRunsOut pins that `catchup status` or `catchup
// plan` (a ReadOnly store, which takes the pipeline's lock for an instant to
// learn whether a run holds it) never makes a run that starts at that
// instant fail as "in use by another catchup run": a cron'd run next to a
// monitoring loop of `catchup status --json` would exit 1 now and then.
func TestReadOnlyDoesNotLockRunsOut(t *testing.T) {
	dir := t.TempDir()
	ro, err := filestore.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for !stop.Load() {
			_, _ = ro.Load(t.Context(), "orders")
		}
	})
	defer wg.Wait()
	defer stop.Store(true)
	for i := range 300 {
		s, err := filestore.Open(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Load(t.Context(), "orders")
		if cerr := s.Close(); cerr != nil {
			t.Fatal(cerr)
		}
		if err != nil {
			t.Fatalf("run %d: Load while status reads: %v", i, err)
		}
	}
}
