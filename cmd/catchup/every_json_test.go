package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// TestEveryJSONStreamsFailedRuns: with --json, continuous mode prints one
// document per run; a run that fails before it has a report (here: the
// include pattern matches no topic) prints one too, with its error, so
// that a reader of the stream sees every run fail, not a single empty
// document at the end that says nothing went wrong.
func TestEveryJSONStreamsFailedRuns(t *testing.T) {
	e := newCLIEnv(t)
	b, err := os.ReadFile(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := e.cfg + ".none.yaml"
	if err := os.WriteFile(cfg, bytes.Replace(b, []byte("include: ["+cliTopic+"]"), []byte("include: [no-such-topic]"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	if code := run(ctx, []string{"run", "-c", cfg, "--json", "--every", "50ms"}, strings.NewReader(""), &out, &errOut); code != exitOK {
		t.Fatalf("exit %d, want 0 (stopped)\nstderr:\n%s", code, errOut.String())
	}
	dec := json.NewDecoder(&out)
	docs := 0
	for {
		var doc struct {
			Pipelines []json.RawMessage `json:"pipelines"`
			Error     string            `json:"error"`
		}
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("document %d: %v", docs+1, err)
		}
		docs++
		if !strings.Contains(doc.Error, "pipeline "+cliPipeline) || !strings.Contains(doc.Error, "matches no topic") {
			t.Errorf("document %d: error %q, %d pipelines; want the run's error naming pipeline %s", docs, doc.Error, len(doc.Pipelines), cliPipeline)
		}
	}
	if docs < 2 {
		t.Errorf("%d documents; want one per failed run (at least 2 in 3s at --every 50ms)\nstderr:\n%s", docs, errOut.String())
	}
}
