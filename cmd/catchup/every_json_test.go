package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
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
	cfg := noTopicConfig(t, e)
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

// TestEveryStoreRequestsPerRun: in continuous mode the store stays open
// between runs, so its request counter keeps growing; each run's
// store_requests must be that run's own. The first run copies every
// partition (acquire, commits, release); the ones after it find nothing
// to copy and make the same few requests each, however many ran before.
func TestEveryStoreRequestsPerRun(t *testing.T) {
	e := newCLIEnv(t)
	cfg := e.writeConfigStore(t, "dynamo.yaml", e.dst.ListenAddrs()[0], dynamoStore(t, e))
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	if code := run(ctx, []string{"run", "-c", cfg, "--json", "--every", "100ms"}, strings.NewReader(""), &out, &errOut); code != exitOK {
		t.Fatalf("exit %d, want 0 (stopped)\nstderr:\n%s", code, errOut.String())
	}
	var counts []int64
	for dec := json.NewDecoder(&out); ; {
		var doc struct {
			Pipelines []reportJSONT `json:"pipelines"`
		}
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("document %d: %v", len(counts)+1, err)
		}
		if len(doc.Pipelines) != 1 {
			t.Fatalf("document %d: %d pipelines, want 1", len(counts)+1, len(doc.Pipelines))
		}
		counts = append(counts, doc.Pipelines[0].StoreRequests)
	}
	if len(counts) < 3 {
		t.Fatalf("%d runs in 4s at --every 100ms, want at least 3\nstderr:\n%s", len(counts), errOut.String())
	}
	// One Query to plan; per partition: acquire, the first commit, the
	// periodic ones (commit_interval 20ms) and the last, which releases;
	// then one Query per run with nothing to copy.
	if least := int64(1 + 3*cliParts); counts[0] < least {
		t.Errorf("first run: store_requests %d, want at least %d", counts[0], least)
	}
	for i, n := range counts[1:] {
		if n != 1 {
			t.Errorf("run %d of %d (nothing to copy): store_requests %d, want 1 (its own Query, not the store's total)", i+2, len(counts), n)
		}
	}
	t.Logf("store_requests per run: %v", counts)
}
