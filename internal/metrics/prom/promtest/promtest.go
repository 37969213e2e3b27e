// Package promtest starts the Prometheus tools tests talk to: a Prometheus
// server, a Pushgateway and promtool, from Debian's prometheus and
// prometheus-pushgateway packages (make prometheus-tools installs them).
// Without them a test skips, or fails under CATCHUP_REQUIRE_PROMETHEUS=1
// (make test), so that CI never skips it.
package promtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// EnvRequire set to "1" makes a missing tool a failure.
const EnvRequire = "CATCHUP_REQUIRE_PROMETHEUS"

// Tool returns the path of the program name, or skips t (fails it under
// CATCHUP_REQUIRE_PROMETHEUS=1) when it is not installed.
func Tool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		msg := fmt.Sprintf("%s not installed (make prometheus-tools installs Debian's prometheus and prometheus-pushgateway): %v", name, err)
		if os.Getenv(EnvRequire) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

// listening is the line both servers log once they listen, with the
// address they got (the tests give them port 0).
var listening = regexp.MustCompile(`msg="Listening on" address=(\S+)`)

// serve starts the server program with args, stops it when t ends, and
// returns the address it listens on.
func serve(t testing.TB, program string, args ...string) string {
	t.Helper()
	cmd := exec.Command(Tool(t, program), args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil && !sent {
				addr <- m[1]
				sent = true
			}
		}
		if !sent {
			close(addr)
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	select {
	case a, ok := <-addr:
		if !ok {
			t.Fatalf("%s exited before it listened", program)
		}
		return a
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not log its address in 30s", program)
	}
	return ""
}

// Pushgateway starts a Pushgateway on a loopback port and returns its URL.
func Pushgateway(t testing.TB) string {
	t.Helper()
	return "http://" + serve(t, "prometheus-pushgateway", "--web.listen-address=127.0.0.1:0",
		"--persistence.file="+filepath.Join(t.TempDir(), "pushgateway"))
}

// Server is a Prometheus server a test started.
type Server struct{ URL string }

// Prometheus starts a Prometheus server on a loopback port that scrapes
// target (host:port) every 250 ms, as job "catchup".
func Prometheus(t testing.TB, target string) *Server {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	conf := fmt.Sprintf("global:\n  scrape_interval: 250ms\n  scrape_timeout: 200ms\nscrape_configs:\n  - job_name: catchup\n    static_configs:\n      - targets: [%q]\n", target)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := serve(t, "prometheus", "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address=127.0.0.1:0")
	s := &Server{URL: "http://" + addr}
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := http.Get(s.URL + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus at %s not ready in 30s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond) // waiting for another process
	}
}

// Sample is one series of a query's result.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Query evaluates expr now.
func (s *Server) Query(ctx context.Context, expr string) ([]Sample, error) {
	var data struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	}
	if err := s.get(ctx, "/api/v1/query?"+url.Values{"query": {expr}}.Encode(), &data); err != nil {
		return nil, fmt.Errorf("query %s: %w", expr, err)
	}
	var out []Sample
	for _, r := range data.Result {
		v, _ := r.Value[1].(string)
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("query %s: value %v: %w", expr, r.Value[1], err)
		}
		out = append(out, Sample{Labels: r.Metric, Value: f})
	}
	return out, nil
}

// Names returns the metric names of the series that match selector, over
// everything the server has stored.
func (s *Server) Names(ctx context.Context, selector string) ([]string, error) {
	var names []string
	if err := s.get(ctx, "/api/v1/label/__name__/values?"+url.Values{"match[]": {selector}}.Encode(), &names); err != nil {
		return nil, fmt.Errorf("names of %s: %w", selector, err)
	}
	return names, nil
}

// get calls the HTTP API at path and decodes the data of its answer into
// data.
func (s *Server) get(ctx context.Context, path string, data any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return err
	}
	if body.Status != "success" {
		return fmt.Errorf("%s: %s", resp.Status, body.Error)
	}
	return json.Unmarshal(body.Data, data)
}
