package pipeline

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/kafka-catchup/catchup/internal/checkpoint"
	cfg "github.com/kafka-catchup/catchup/internal/config"
)

// unfoldedStore is a store whose Close fails, as a file store's does when
// folding its journal at the end of a run fails.
type unfoldedStore struct{ checkpoint.Store }

func (unfoldedStore) Close() error { return errors.New("write /x/p.json: no space left on device") }

// TestCloseLogsAStoreThatDidNotClose: every caller defers Close and drops
// its error, so Close says it: one error line naming the pipeline and the
// store's error. (Before, a journal that failed to fold said nothing.)
func TestCloseLogsAStoreThatDidNotClose(t *testing.T) {
	var buf bytes.Buffer
	p := &Pipeline{Config: &cfg.Pipeline{Name: "orders"}, Store: unfoldedStore{checkpoint.NewMemStore(nil)}, ownStore: true,
		log: slog.New(slog.NewTextHandler(&buf, nil))}
	if err := p.Close(); err == nil {
		t.Fatal("Close: nil error; want the store's")
	}
	line := buf.String()
	if strings.Count(line, "\n") != 1 || !strings.Contains(line, "level=ERROR") || !strings.Contains(line, "pipeline=orders") ||
		!strings.Contains(line, "no space left on device") {
		t.Errorf("log after a failed store Close:\n%s\nwant one ERROR line naming the pipeline and the error", line)
	}
}
