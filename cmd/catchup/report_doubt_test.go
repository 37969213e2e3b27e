package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// TestReportShowsInDoubt pins that a partition in doubt and the run's waits
// for replication reach the text report, --json and the exit status (1).
func TestReportShowsInDoubt(t *testing.T) {
	rep := &replicate.Report{Pipeline: "dr", Resent: 3, ReplicationWaits: 2, ReplicationWaited: 61500 * time.Millisecond,
		Partitions: []replicate.Result{
			{Partition: catchup.Partition{Topic: "t", Partition: 0}, To: 20, Next: 20, Copied: 20, Status: replicate.StatusDone},
			{Partition: catchup.Partition{Topic: "t", Partition: 1}, To: 20, Next: 8, Copied: 8, Status: replicate.StatusInDoubt,
				ReplicationWaits: 1, ReplicationWaited: time.Minute, Err: errors.New("settle t/1: ... (replication_wait): in doubt")},
		}}
	data, err := json.Marshal(reportJSON(rep))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Resent              int64            `json:"resent"`
		ReplicationWaits    int64            `json:"replication_waits"`
		ReplicationWaitedMS int64            `json:"replication_waited_ms"`
		Partitions          []map[string]any `json:"partitions"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got.Resent != 3 || got.ReplicationWaits != 2 || got.ReplicationWaitedMS != 61500 {
		t.Errorf("--json resent %d, replication_waits %d, replication_waited_ms %d; want 3, 2, 61500",
			got.Resent, got.ReplicationWaits, got.ReplicationWaitedMS)
	}
	want := map[string]any{"status": "in_doubt", "next": 8.0, "lag": 12.0, "error": "settle t/1: ... (replication_wait): in doubt"}
	pick := map[string]any{}
	for k := range want {
		pick[k] = got.Partitions[1][k]
	}
	if diff := cmp.Diff(want, pick); diff != "" {
		t.Errorf("--json partition in doubt (-want +got):\n%s", diff)
	}
	if reportOK(rep) {
		t.Error("reportOK = true for a run with a partition in doubt; want false (exit 1)")
	}
	var text bytes.Buffer
	printReport(&text, rep)
	for _, w := range []string{"in_doubt", "1 partitions in doubt", "waited 2 times (1m1.5s) for the target to replicate", "3 produce requests of unknown outcome re-sent"} {
		if !strings.Contains(text.String(), w) {
			t.Errorf("report %q does not say %q", text.String(), w)
		}
	}
}
