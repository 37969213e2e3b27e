package filestore_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/checkpoint/filestore"
)

// TestBeginSurvives: a begin is kept by a clean Close (in the snapshot) and
// by a crash (in the journal alone), and a begin line in the journal is
// read back by the next Store.
func TestBeginSurvives(t *testing.T) {
	clk := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return clk }
	b := checkpoint.Begin{At: clk, Offsets: []int64{4, checkpoint.FromLogStart, 1 << 50}}
	for _, crash := range []bool{false, true} {
		t.Run(map[bool]string{false: "close", true: "crash"}[crash], func(t *testing.T) {
			dir := t.TempDir()
			s := open(t, dir, now)
			if _, err := s.PutBegin(t.Context(), "pl", "orders", b); err != nil {
				t.Fatal(err)
			}
			from := dir
			if crash {
				// The files as a crash leaves them: the journal, no Close.
				from = t.TempDir()
				for _, name := range []string{"pl.journal", "pl.json"} {
					data, err := os.ReadFile(filepath.Join(dir, name))
					if os.IsNotExist(err) {
						continue
					}
					if err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(from, name), data, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			} else if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			got, err := open(t, from, now).LoadBegins(t.Context(), "pl", []string{"orders"})
			if err != nil {
				t.Fatalf("LoadBegins after reopen: %v", err)
			}
			if d := cmp.Diff(map[string]checkpoint.Begin{"orders": b}, got); d != "" {
				t.Errorf("LoadBegins after reopen (-want +got):\n%s", d)
			}
			ro, err := filestore.OpenReadOnly(from)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := ro.LoadBegins(t.Context(), "pl", []string{"orders"}); err != nil || !cmp.Equal(got["orders"], b) {
				t.Errorf("ReadOnly.LoadBegins = %v, %v; want %v", got, err, b)
			}
		})
	}
}
