package filestore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
)

// TestFailedAppendLeavesNoTail: when the directory sync of a new journal or
// the close after an append fails, the change fails and memory keeps the
// journal's old size; the next, shorter line is written there. The failed
// line must not be left after it: the journal must replay to the changes
// that succeeded.
func TestFailedAppendLeavesNoTail(t *testing.T) {
	fail := errors.New("injected")
	tests := []struct {
		name  string
		after int // successful resets before the failing one
		seam  func() (restore func())
	}{
		{"directory sync of a new journal", 0, func() func() {
			old := syncJournalDir
			syncJournalDir = func(string) error { return fail }
			return func() { syncJournalDir = old }
		}},
		{"close after an append", 1, func() func() {
			old := closeJournal
			closeJournal = func(f *os.File) error { _ = f.Close(); return fail }
			return func() { closeJournal = old }
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx := t.Context()
			short := catchup.Partition{Topic: "t", Partition: 0}
			for i := range tt.after {
				if err := s.Reset(ctx, "p", short, int64(i)); err != nil {
					t.Fatal(err)
				}
			}
			long := catchup.Partition{Topic: strings.Repeat("long-topic-name-", 8), Partition: 1}
			restore := tt.seam()
			err = s.Reset(ctx, "p", long, 123456789)
			restore()
			if !errors.Is(err, fail) {
				t.Fatalf("reset with the %s failing: %v, want the injected error", tt.name, err)
			}
			if err := s.Reset(ctx, "p", short, 7); err != nil {
				t.Fatal(err)
			}
			cps := map[catchup.Partition]checkpoint.Checkpoint{}
			if _, err := replay(filepath.Join(dir, "p.journal"), "p", cps, map[string]checkpoint.Begin{}); err != nil {
				t.Fatalf("the journal after a failed append and a shorter one does not replay: %v", err)
			}
			if cp, ok := cps[short]; !ok || cp.Next != 7 {
				t.Errorf("replayed %s: %+v (found %v), want next 7", short, cp, ok)
			}
			if cp, ok := cps[long]; ok {
				t.Errorf("replayed the failed change of %s: %+v", long, cp)
			}
		})
	}
}
