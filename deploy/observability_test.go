package deploy

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// ruleGroup is a Prometheus rule group, every field of the rules file
// format catchup uses (a strict decode refuses others).
type ruleGroup struct {
	Name  string `json:"name"`
	Rules []struct {
		Alert       string            `json:"alert"`
		Expr        string            `json:"expr"`
		For         string            `json:"for,omitempty"`
		Labels      map[string]string `json:"labels,omitempty"`
		Annotations map[string]string `json:"annotations,omitempty"`
	} `json:"rules"`
}

// prometheusRule is the Prometheus Operator's PrometheusRule
// (monitoring.coreos.com/v1), the fields catchup's uses.
type prometheusRule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Groups []ruleGroup `json:"groups"`
	} `json:"spec"`
}

// tool returns the path of program, or skips t (fails it under
// CATCHUP_REQUIRE_PROMETHEUS=1, as make test-deploy sets) when it is not
// installed.
func tool(t *testing.T, program string) string {
	t.Helper()
	p, err := exec.LookPath(program)
	if err != nil {
		if os.Getenv("CATCHUP_REQUIRE_PROMETHEUS") == "1" {
			t.Fatalf("%s not installed (make prometheus-tools): %v", program, err)
		}
		t.Skipf("%s not installed (make prometheus-tools): %v", program, err)
	}
	return p
}

// documentedMetrics returns the Prometheus metric names of the table of
// docs/metrics.md.
func documentedMetrics(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) > 3 && strings.HasPrefix(strings.TrimSpace(cells[2]), "catchup_") {
			out = append(out, strings.TrimSpace(cells[2]))
		}
	}
	if len(out) == 0 {
		t.Fatal("docs/metrics.md: no metrics table")
	}
	return out
}

var metricName = regexp.MustCompile(`\bcatchup_[a-z_]+\b`)

// undocumented returns the catchup_ metric names in expr that
// docs/metrics.md does not list.
func undocumented(expr string, documented []string) []string {
	var out []string
	for _, m := range metricName.FindAllString(expr, -1) {
		if !slices.Contains(documented, m) {
			out = append(out, m)
		}
	}
	return out
}

// TestPrometheusRules: the rules file passes promtool check rules and its
// unit tests (promtool test rules: the retention-headroom alert fires on a
// paused copy 54 minutes before the gap), reads only documented metrics,
// and the PrometheusRule carries exactly its groups.
func TestPrometheusRules(t *testing.T) {
	promtool := tool(t, "promtool")
	for _, args := range [][]string{{"check", "rules", "catchup.rules.yaml"}, {"test", "rules", "catchup.rules.test.yaml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = "prometheus"
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	data, err := os.ReadFile(filepath.Join("prometheus", "catchup.rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Groups []ruleGroup `json:"groups"`
	}
	if err := yaml.UnmarshalStrict(data, &file); err != nil {
		t.Fatalf("catchup.rules.yaml: %v", err)
	}
	var pr prometheusRule
	decodeStrict(t, "prometheusrule.yaml", &pr, "PrometheusRule")
	if pr.APIVersion != "monitoring.coreos.com/v1" {
		t.Errorf("prometheusrule.yaml: apiVersion %q, want monitoring.coreos.com/v1", pr.APIVersion)
	}
	if d := cmp.Diff(file.Groups, pr.Spec.Groups); d != "" {
		t.Errorf("prometheusrule.yaml's groups differ from prometheus/catchup.rules.yaml's (-file +PrometheusRule):\n%s", d)
	}
	documented := documentedMetrics(t)
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			if u := undocumented(r.Expr, documented); len(u) > 0 {
				t.Errorf("alert %s reads %v, not in docs/metrics.md's table", r.Alert, u)
			}
		}
	}
}

// TestGrafanaDashboard: the dashboard is JSON with unique panel ids whose
// queries read only documented metrics, and every panel has a query.
func TestGrafanaDashboard(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("grafana", "catchup-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID    string `json:"uid"`
		Panels []struct {
			ID      int    `json:"id"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	documented := documentedMetrics(t)
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel %q: id %d repeated", p.Title, p.ID)
		}
		ids[p.ID] = true
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			if u := undocumented(q.Expr, documented); len(u) > 0 || !metricName.MatchString(q.Expr) {
				t.Errorf("panel %q: query %q reads %v, not in docs/metrics.md's table (or no catchup metric)", p.Title, q.Expr, u)
			}
		}
	}
	if d.UID == "" || len(d.Panels) == 0 {
		t.Errorf("dashboard: uid %q, %d panels", d.UID, len(d.Panels))
	}
}
