package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// TestReportShowsLoopSkipped pins that the records loop prevention left out
// reach the run report and --json, not only the engine's counters.
func TestReportShowsLoopSkipped(t *testing.T) {
	rep := &replicate.Report{Pipeline: "ab", Partitions: []replicate.Result{{
		Partition: catchup.Partition{Topic: "t", Partition: 0}, From: 0, To: 20, Next: 20,
		Copied: 10, LoopSkipped: 10, Status: replicate.StatusDone,
	}}}
	data, err := json.Marshal(reportJSON(rep))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Partitions []map[string]any `json:"partitions"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"copied": 10.0, "skipped": 0.0, "loop_skipped": 10.0, "lag": 0.0, "status": "done"}
	pick := map[string]any{}
	for k := range want {
		pick[k] = got.Partitions[0][k]
	}
	if diff := cmp.Diff(want, pick); diff != "" {
		t.Errorf("--json partition (-want +got):\n%s", diff)
	}
	var text bytes.Buffer
	printReport(&text, rep)
	if w := "10 records not copied back by loop prevention"; !strings.Contains(text.String(), w) {
		t.Errorf("report %q does not say %q", text.String(), w)
	}
}
