package worker

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/metrics"
	"github.com/kafka-catchup/catchup/internal/metrics/emftest"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// TestMetricsPerTopicOptIn: the copy metrics carry a topic dimension (a
// CloudWatch custom metric per topic and name) only with TopicMetrics; the
// pipeline and service figures the alarms read add up the same either way.
func TestMetricsPerTopicOptIn(t *testing.T) {
	rep := &replicate.Report{Pipeline: "p", Partitions: []replicate.Result{
		{Partition: catchup.Partition{Topic: "a", Partition: 0}, Status: replicate.StatusDone, Copied: 3},
		{Partition: catchup.Partition{Topic: "b", Partition: 0}, Status: replicate.StatusDone, Copied: 4},
		{Partition: catchup.Partition{Topic: "b", Partition: 1}, Status: replicate.StatusFenced},
	}}
	for _, tc := range []struct {
		perTopic  bool
		wantLines int // copy metrics documents
	}{{false, 1}, {true, 2}} {
		var out bytes.Buffer
		h := &Handler{o: Options{Metrics: metrics.New(&out, "catchup", nil), Service: "s", TopicMetrics: tc.perTopic}}
		h.emit(t.Context(), "p", false, rep, 5)
		docs, err := emftest.Lines(out.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		lines, topics := 0, 0
		var records, fenced float64
		for _, d := range docs {
			if _, ok := d.Values[metrics.Records]; !ok {
				continue
			}
			lines++
			if d.Members[metrics.DimTopic] != nil {
				topics++
			}
			records += d.Values[metrics.Records]
			fenced += d.Values[metrics.FencedCommits]
		}
		if lines != tc.wantLines || topics != map[bool]int{false: 0, true: 2}[tc.perTopic] || records != 7 || fenced != 1 {
			t.Errorf("TopicMetrics %v: %d copy documents (%d with a topic), %v records, %v fenced; want %d documents, 7 records, 1 fenced",
				tc.perTopic, lines, topics, records, fenced, tc.wantLines)
		}
	}
}

// TestMetricsOfABackfillJob: a job's invocation writes under its
// pipeline's name, not its checkpoint namespace (no dimension value per
// job), and its latency and record age as BackfillLatency and
// BackfillRecordAge, never as the ReplicationLatency and RecordAge the
// alarms watch; the scheduled run writes those.
func TestMetricsOfABackfillJob(t *testing.T) {
	now := time.Now()
	rep := &replicate.Report{Pipeline: "p.job.incident-7", Now: now, Partitions: []replicate.Result{
		{Partition: catchup.Partition{Topic: "a", Partition: 0}, Status: replicate.StatusPartial, Copied: 3,
			Newest: now.Add(-48 * time.Hour), Oldest: now.Add(-47 * time.Hour)},
	}}
	for _, job := range []bool{false, true} {
		var out bytes.Buffer
		h := &Handler{o: Options{Metrics: metrics.New(&out, "catchup", nil), Service: "s"}}
		h.emit(t.Context(), "p", job, rep, 5)
		docs, err := emftest.Lines(out.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, d := range docs {
			if got := d.Members[metrics.DimPipeline]; got != "p" {
				t.Errorf("job %v: pipeline dimension %v, want p (the pipeline, not its job's namespace)", job, got)
			}
			for n := range d.Values {
				names[n] = true
			}
		}
		want := map[bool][]string{false: {metrics.ReplicationLatency, metrics.RecordAge}, true: {metrics.BackfillLatency, metrics.BackfillRecordAge}}
		for _, n := range want[job] {
			if !names[n] {
				t.Errorf("job %v: no %s written", job, n)
			}
		}
		for _, n := range want[!job] {
			if names[n] {
				t.Errorf("job %v: %s written", job, n)
			}
		}
	}
}

// TestMetricsOfSyncs: an invocation whose topic ACL sync or topic config
// sync failed writes ACLSyncFailed or TopicConfigSyncFailed 1, one whose
// sync succeeded 0, both on the line of the pipeline and service
// dimensions the alarms read; one that did not sync writes none.
func TestMetricsOfSyncs(t *testing.T) {
	for _, tc := range []struct {
		name, figure string
		rep          replicate.Report
		want         string
	}{
		{"ACLs failed", metrics.ACLSyncFailed, replicate.Report{ACLs: &replicate.ACLSync{Error: `cluster "src" refuses DescribeAcls`}}, "1 Count"},
		{"ACLs succeeded", metrics.ACLSyncFailed, replicate.Report{ACLs: &replicate.ACLSync{Present: 2}}, "0 Count"},
		{"ACLs not run", metrics.ACLSyncFailed, replicate.Report{}, "absent"},
		{"configs failed", metrics.TopicConfigSyncFailed, replicate.Report{ConfigSynced: true, ConfigSyncError: "alter target topic configs: refused"}, "1 Count"},
		{"configs succeeded", metrics.TopicConfigSyncFailed, replicate.Report{ConfigSynced: true}, "0 Count"},
		{"configs not run", metrics.TopicConfigSyncFailed, replicate.Report{}, "absent"},
	} {
		var out bytes.Buffer
		h := &Handler{o: Options{Metrics: metrics.New(&out, "catchup", nil), Service: "s"}}
		tc.rep.Pipeline = "p"
		h.emit(t.Context(), "p", false, &tc.rep, 0)
		docs, err := emftest.Lines(out.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		got := "absent"
		for _, d := range docs {
			if v, ok := d.Values[tc.figure]; ok {
				got = fmt.Sprintf("%v %s", v, d.Units[tc.figure])
				if d.Members[metrics.DimService] != "s" || d.Members[metrics.DimPipeline] != "p" {
					t.Errorf("%s: %s written with %v, want service s and pipeline p", tc.name, tc.figure, d.Members)
				}
			}
		}
		if got != tc.want {
			t.Errorf("%s: %s %s, want %s", tc.name, tc.figure, got, tc.want)
		}
	}
}
