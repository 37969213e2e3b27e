package prom_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/metrics"
	"github.com/kafka-catchup/catchup/internal/metrics/prom"
	"github.com/kafka-catchup/catchup/internal/metrics/prom/promtest"
	"github.com/kafka-catchup/catchup/internal/plan"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

func TestName(t *testing.T) {
	for _, tc := range []struct {
		emf  string
		unit metrics.Unit
		kind prom.Kind
		want string
	}{
		{metrics.Records, metrics.Count, prom.Counter, "catchup_records_total"},
		{metrics.BytesCopied, metrics.Bytes, prom.Counter, "catchup_bytes_total"},
		{metrics.DynamoDBRequests, metrics.Count, prom.Counter, "catchup_dynamo_db_requests_total"},
		{metrics.ReplicationWaited, metrics.Milliseconds, prom.Counter, "catchup_replication_waited_seconds_total"},
		{metrics.RetentionHeadroom, metrics.Seconds, prom.Gauge, "catchup_retention_headroom_seconds"},
		{metrics.LagBytes, metrics.Bytes, prom.Gauge, "catchup_lag_bytes"},
		{metrics.ETATicks, metrics.Count, prom.Gauge, "catchup_eta_ticks"},
		{metrics.ACLSyncFailed, metrics.Count, prom.Gauge, "catchup_acl_sync_failed"},
		{metrics.TopicConfigSyncFailed, metrics.Count, prom.Gauge, "catchup_topic_config_sync_failed"},
	} {
		if got := prom.Name(tc.emf, tc.unit, tc.kind); got != tc.want {
			t.Errorf("Name(%s, %s, %s) = %s, want %s", tc.emf, tc.unit, tc.kind, got, tc.want)
		}
	}
}

// fullReport is a report of pipeline "p" with every figure of a run: a
// done, a partial (lag, record age, headroom), a failed and an in-doubt
// partition, and an ACL sync and a topic config sync that failed.
func fullReport(now time.Time) *replicate.Report {
	part := func(topic string, n int32) catchup.Partition { return catchup.Partition{Topic: topic, Partition: n} }
	return &replicate.Report{Pipeline: "p", Now: now, Duration: 3 * time.Second, Resent: 2, StoreRequests: 9,
		ReplicationWaits: 1, ReplicationWaited: 1500 * time.Millisecond,
		ACLs:         &replicate.ACLSync{Error: `cluster "src" refuses DescribeAcls`},
		ConfigSynced: true, ConfigSyncError: "alter target topic configs: refused",
		Partitions: []replicate.Result{
			{Partition: part("a", 0), From: 0, To: 10, End: 10, Next: 10, Copied: 10, Bytes: 100, Newest: now.Add(-time.Minute), Status: replicate.StatusDone},
			{Partition: part("a", 1), From: 0, To: 5, End: 20, Next: 5, Copied: 5, Bytes: 50, Newest: now.Add(-time.Minute),
				Oldest: now.Add(-2 * time.Hour), Deletion: plan.Deletion{At: now.Add(30 * time.Minute)}, Status: replicate.StatusPartial},
			{Partition: part("b", 0), Status: replicate.StatusFailed, Err: &catchup.GapError{}},
			{Partition: part("b", 1), Status: replicate.StatusInDoubt},
		}}
}

func gather(t *testing.T, e *prom.Exporter) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := e.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// value returns the value of the series of fam with labels.
func value(fam *dto.MetricFamily, labels map[string]string) (float64, bool) {
	for _, m := range fam.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		if cmp.Equal(got, labels) {
			if fam.GetType() == dto.MetricType_COUNTER {
				return m.GetCounter().GetValue(), true
			}
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

// TestObserve: counters add up the runs, gauges hold the last run's, and a
// time figure the last run does not have (nothing left: no record age) is
// gone rather than stale; catchup_acl_sync_failed holds the last ACL
// sync's result through runs that did not sync, until one that did.
func TestObserve(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e := prom.New(func() time.Time { return now }, time.Minute)
	rep := fullReport(now)
	for range 2 {
		if err := e.Observe(rep); err != nil {
			t.Fatal(err)
		}
	}
	fams := gather(t, e)
	a := map[string]string{"pipeline": "p", "topic": "a"}
	p := map[string]string{"pipeline": "p"}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"catchup_records_total", a, 30},
		{"catchup_lag_records", a, 15},
		{"catchup_failed_partitions", map[string]string{"pipeline": "p", "topic": "b"}, 1},
		{"catchup_in_doubt_partitions", map[string]string{"pipeline": "p", "topic": "b"}, 1},
		{"catchup_replication_waited_seconds_total", p, 3},
		{"catchup_record_age_seconds", p, 7200},
		{"catchup_retention_headroom_seconds", p, 1800},
		{"catchup_runs_total", map[string]string{"pipeline": "p", "result": "failure"}, 2},
		{"catchup_last_run_timestamp_seconds", p, float64(now.Unix())},
		{"catchup_run_interval_seconds", map[string]string{}, 60},
		{"catchup_acl_sync_failed", p, 1},
		{"catchup_topic_config_sync_failed", p, 1},
	} {
		fam := fams[c.name]
		if fam == nil {
			t.Errorf("%s not gathered", c.name)
			continue
		}
		if got, ok := value(fam, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (found %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	if _, ok := value(fams["catchup_last_success_timestamp_seconds"], p); ok {
		t.Errorf("catchup_last_success_timestamp_seconds set after failed runs only")
	}

	done := &replicate.Report{Pipeline: "p", Now: now, Partitions: []replicate.Result{{Partition: catchup.Partition{Topic: "a"}, Status: replicate.StatusDone}}}
	if err := e.Observe(done); err != nil {
		t.Fatal(err)
	}
	fams = gather(t, e)
	for _, name := range []string{"catchup_record_age_seconds", "catchup_retention_headroom_seconds"} {
		if v, ok := value(fams[name], p); ok {
			t.Errorf("%s = %v after a run that left nothing; want no series", name, v)
		}
	}
	if v, _ := value(fams["catchup_last_success_timestamp_seconds"], p); v != float64(now.Unix()) {
		t.Errorf("catchup_last_success_timestamp_seconds = %v after a successful run, want %d", v, now.Unix())
	}
	if v, ok := value(fams["catchup_acl_sync_failed"], p); !ok || v != 1 {
		t.Errorf("catchup_acl_sync_failed = %v (found %v) after a run with no ACL sync; want 1, the last sync's", v, ok)
	}
	done.ACLs = &replicate.ACLSync{Present: 1}
	if err := e.Observe(done); err != nil {
		t.Fatal(err)
	}
	if v, ok := value(gather(t, e)["catchup_acl_sync_failed"], p); !ok || v != 0 {
		t.Errorf("catchup_acl_sync_failed = %v (found %v) after an ACL sync that succeeded; want 0", v, ok)
	}
}

// TestTextfile: the textfile passes promtool check metrics, and a failed
// run's file keeps the last success recorded by an earlier process, so the
// no-successful-run alert of a systemd timer has its reference.
func TestTextfile(t *testing.T) {
	promtool := promtest.Tool(t, "promtool")
	path := filepath.Join(t.TempDir(), "catchup.prom")
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

	ok := prom.New(func() time.Time { return t0 }, time.Hour)
	if err := ok.Observe(&replicate.Report{Pipeline: "p", Now: t0, Partitions: []replicate.Result{{Partition: catchup.Partition{Topic: "a"}, Status: replicate.StatusDone}}}); err != nil {
		t.Fatal(err)
	}
	if err := ok.WriteTextfile(path); err != nil {
		t.Fatal(err)
	}
	failing := prom.New(func() time.Time { return t0.Add(time.Hour) }, time.Hour)
	if err := failing.Observe(fullReport(t0.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	if err := failing.WriteTextfile(path); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(promtool, "check", "metrics")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd.Stdin = f
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := `catchup_last_success_timestamp_seconds{pipeline="p"} 1.767323045e+09`
	if !slices.Contains(lines(string(b)), want) {
		t.Errorf("textfile after a failed run lacks %q (the earlier success):\n%s", want, b)
	}
}

func lines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}
