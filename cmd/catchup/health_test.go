package main

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestHealthStates: /readyz is 503 until a run succeeds, then 200;
// /healthz turns 503 at the unhealthy-after'th failed run in a row and back
// to 200 with the next success.
func TestHealthStates(t *testing.T) {
	h := &health{after: 2}
	fail := errors.New("pipeline p: dial tcp 127.0.0.1:1: connection refused")
	for i, step := range []struct {
		record         error // nil: a success; skipped for the first step
		skip           bool
		ready, healthy int
	}{
		{skip: true, ready: 503, healthy: 200},
		{record: fail, ready: 503, healthy: 200},
		{record: fail, ready: 503, healthy: 503},
		{record: nil, ready: 200, healthy: 200},
		{record: fail, ready: 200, healthy: 200},
		{record: fail, ready: 200, healthy: 503},
	} {
		if !step.skip {
			h.record(step.record)
		}
		for path, want := range map[string]int{"/readyz": step.ready, "/healthz": step.healthy} {
			rec := httptest.NewRecorder()
			if path == "/readyz" {
				h.readyz(rec, httptest.NewRequest(http.MethodGet, path, nil))
			} else {
				h.healthz(rec, httptest.NewRequest(http.MethodGet, path, nil))
			}
			if rec.Code != want {
				t.Errorf("step %d: %s = %d %q, want %d", i, path, rec.Code, rec.Body.String(), want)
			}
			if rec.Code == 503 && path == "/healthz" && !strings.Contains(rec.Body.String(), "connection refused") {
				t.Errorf("step %d: /healthz body %q does not name the last error", i, rec.Body.String())
			}
		}
	}
}

// TestEveryHealthEndpoints: `run --every --listen` whose runs all fail is
// never ready and turns unhealthy after --unhealthy-after failed runs.
func TestEveryHealthEndpoints(t *testing.T) {
	e := newCLIEnv(t)
	bad := noTopicConfig(t, e)
	addr, errOut := startEvery(t, "run", "-c", bad, "--every", "50ms", "--listen", "127.0.0.1:0", "--unhealthy-after", "2")
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		code, body := get("/healthz")
		if code == http.StatusServiceUnavailable {
			if !strings.Contains(body, "matches no topic") {
				t.Errorf("/healthz: %q, want the last run's error", body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz still %d %q after 30s of failed runs\nstderr:\n%s", code, body, errOut.String())
		}
		time.Sleep(20 * time.Millisecond) // the runs' backoff, in another goroutine
	}
	if code, body := get("/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz = %d %q with no successful run, want 503", code, body)
	}
}
