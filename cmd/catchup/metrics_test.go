package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafka-catchup/catchup/internal/metrics/prom/promtest"
)

// syncBuffer is a bytes.Buffer a running command writes while the test
// reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// servingAddr finds the address of "serving metrics and health" in logs
// (text or JSON).
var servingAddr = regexp.MustCompile(`serving metrics and health.*?addr"?[=:]"?(127\.0\.0\.1:\d+)`)

// startEvery runs `catchup args...` (run --every --listen 127.0.0.1:0) in
// the background until the test ends, and returns the address it serves on
// and its stderr.
func startEvery(t *testing.T, args ...string) (string, *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, strings.NewReader(""), &out, &errOut) }()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("exit %d after the stop, want 0\nstderr:\n%s", code, errOut.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := servingAddr.FindStringSubmatch(errOut.String()); m != nil {
			return m[1], &errOut
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q log line in 30s; stderr:\n%s", "serving metrics and health", errOut.String())
		}
		time.Sleep(20 * time.Millisecond) // waiting for another goroutine's output, not timing logic
	}
}

// editConfig writes the env's configuration changed by edit next to it,
// with suffix, and returns its path.
func editConfig(t *testing.T, e *cliEnv, suffix string, edit func([]byte) []byte) string {
	t.Helper()
	b, err := os.ReadFile(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := e.cfg + suffix
	if err := os.WriteFile(cfg, edit(b), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// noTopicConfig returns the env's configuration with an include pattern
// that matches no topic: every run fails.
func noTopicConfig(t *testing.T, e *cliEnv) string {
	t.Helper()
	return editConfig(t, e, ".none.yaml", func(b []byte) []byte {
		return bytes.Replace(b, []byte("include: ["+cliTopic+"]"), []byte("include: [no-such-topic]"), 1)
	})
}

// TestEveryMetricsScrapedByPrometheus: a real Prometheus server scrapes
// /metrics of `run --every --listen` and reads every metric of the table of
// docs/metrics.md that is exported off Lambda, with the runs' labels. The
// runs copy at most one record per partition (lag, record age and headroom
// stay); with sync_acls and create_topics the first run syncs the topic
// ACLs and configs and the runs after it (within acl_sync_interval and
// config_sync_interval) do not, and catchup_acl_sync_failed and
// catchup_topic_config_sync_failed still read 0 at the last scrape, many
// runs later.
func TestEveryMetricsScrapedByPrometheus(t *testing.T) {
	promtest.Tool(t, "prometheus")
	rows, err := promtest.DocumentedMetrics("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, r := range rows {
		if r.Prom != "—" {
			want = append(want, r.Prom)
		}
	}
	e := newCLIEnv(t)
	cfg := editConfig(t, e, ".window-acls.yaml", func(b []byte) []byte {
		return append(b, "    window: {max_records: 1}\n    sync_acls: true\n    create_topics: true\n"...)
	})
	addr, errOut := startEvery(t, "run", "-c", cfg, "--every", "200ms", "--listen", "127.0.0.1:0")
	srv := promtest.Prometheus(t, addr)

	ctx := t.Context()
	var missing []string
	for deadline := time.Now().Add(60 * time.Second); ; {
		got, err := srv.Names(ctx, `{job="catchup"}`)
		if err != nil {
			t.Fatal(err)
		}
		missing = missing[:0]
		for _, w := range want {
			if !slices.Contains(got, w) {
				missing = append(missing, w)
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus has not scraped %v in 60s (has %v)\ncatchup's stderr:\n%s", missing, got, errOut.String())
		}
		time.Sleep(250 * time.Millisecond) // one scrape interval of the server
	}
	for expr, check := range map[string]func(float64) bool{
		`sum(catchup_records_total{job="catchup"})`:                                              func(v float64) bool { return v > 0 },
		`max_over_time(catchup_retention_headroom_seconds{pipeline="` + cliPipeline + `"}[10m])`: func(v float64) bool { return v > 0 && v < 8*24*3600 },
		`max_over_time(catchup_record_age_seconds{pipeline="` + cliPipeline + `"}[10m])`:         func(v float64) bool { return v >= 3000 },
		`catchup_run_interval_seconds{job="catchup"}`:                                            func(v float64) bool { return v == 0.2 },
		`max_over_time(catchup_acl_sync_failed{pipeline="` + cliPipeline + `"}[10m])`:            func(v float64) bool { return v == 0 },
		`catchup_acl_sync_failed{pipeline="` + cliPipeline + `"}`:                                func(v float64) bool { return v == 0 },
		`max_over_time(catchup_topic_config_sync_failed{pipeline="` + cliPipeline + `"}[10m])`:   func(v float64) bool { return v == 0 },
		`catchup_topic_config_sync_failed{pipeline="` + cliPipeline + `"}`:                       func(v float64) bool { return v == 0 },
	} {
		samples, err := srv.Query(ctx, expr)
		if err != nil {
			t.Fatal(err)
		}
		if len(samples) != 1 || !check(samples[0].Value) {
			t.Errorf("%s = %v, want one series in range", expr, samples)
		}
	}
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz after successful runs: %s, want 200", resp.Status)
	}
}

// TestPushToPushgateway: a single run (a CronJob's) pushes its metrics to a
// real Pushgateway under job catchup and the pipeline; a later failed run
// pushes its failure and leaves the last success's timestamp in place, so
// that the no-successful-run alert keeps its reference.
func TestPushToPushgateway(t *testing.T) {
	gw := promtest.Pushgateway(t)
	e := newCLIEnv(t)
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{"run", "-c", e.cfg, "-p", cliPipeline, "--metrics-push", gw, "--interval", "15m"},
		strings.NewReader(""), &out, &errOut); code != exitOK {
		t.Fatalf("exit %d, want 0\nstderr:\n%s", code, errOut.String())
	}
	first := pushed(t, gw)
	success := first[`catchup_last_success_timestamp_seconds{instance="`+cliPipeline+`",job="catchup",pipeline="`+cliPipeline+`"}`]
	for _, series := range []string{
		`catchup_records_total{instance="` + cliPipeline + `",job="catchup",pipeline="` + cliPipeline + `",topic="` + cliTopic + `"}`,
		`catchup_run_interval_seconds{instance="` + cliPipeline + `",job="catchup"}`,
	} {
		if v, ok := first[series]; !ok || v == "0" {
			t.Errorf("after the run the Pushgateway has %s = %q (present: %v), want non-zero", series, v, ok)
		}
	}
	if success == "" {
		t.Fatalf("no last success pushed; the Pushgateway has:\n%v", first)
	}

	bad := noTopicConfig(t, e)
	errOut.Reset()
	if code := run(t.Context(), []string{"run", "-c", bad, "-p", cliPipeline, "--metrics-push", gw}, strings.NewReader(""), &out, &errOut); code != exitFailure {
		t.Fatalf("exit %d, want 1\nstderr:\n%s", code, errOut.String())
	}
	second := pushed(t, gw)
	if got := second[`catchup_last_success_timestamp_seconds{instance="`+cliPipeline+`",job="catchup",pipeline="`+cliPipeline+`"}`]; got != success {
		t.Errorf("after a failed run the last success is %q, want the earlier run's %q", got, success)
	}
	if got := second[`catchup_runs_total{instance="`+cliPipeline+`",job="catchup",pipeline="`+cliPipeline+`",result="failure"}`]; got != "1" {
		t.Errorf("after a failed run catchup_runs_total{result=failure} = %q, want 1", got)
	}
}

// pushed returns the series the Pushgateway at gw serves, by name and
// labels as the exposition format writes them.
func pushed(t *testing.T, gw string) map[string]string {
	t.Helper()
	resp, err := http.Get(gw + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if i := strings.LastIndexByte(line, ' '); i > 0 && strings.HasPrefix(line, "catchup_") {
			out[line[:i]] = line[i+1:]
		}
	}
	return out
}
