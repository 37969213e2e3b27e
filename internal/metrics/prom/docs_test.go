package prom_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kafka-catchup/catchup/internal/metrics"
	"github.com/kafka-catchup/catchup/internal/metrics/prom"
	"github.com/kafka-catchup/catchup/internal/metrics/prom/promtest"
)

// everything returns an exporter that has observed every figure a run
// has: a full report with group sync counts, then a successful run.
func everything(t *testing.T) *prom.Exporter {
	t.Helper()
	now := time.Now()
	e := prom.New(nil, time.Minute)
	groups := []metrics.Value{{Name: metrics.GroupOffsetsSynced, Unit: metrics.Count}, {Name: metrics.GroupOffsetsSkipped, Unit: metrics.Count}}
	rep := fullReport(now)
	if err := e.Observe(rep, groups...); err != nil {
		t.Fatal(err)
	}
	rep.Pipeline = "q"
	rep.Partitions = rep.Partitions[:2]
	if err := e.Observe(rep, groups...); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestDocsTable: the table of docs/metrics.md lists every EMF metric of the
// code (metrics.Names) once, with the Prometheus name the exporter gives it
// ("—" when it does not export it), and every metric of the exporter's
// registry once, with its type and labels.
func TestDocsTable(t *testing.T) {
	rows, err := promtest.DocumentedMetrics("../../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	e := everything(t)
	fams := gather(t, e)

	var emfDocumented, promDocumented []string
	for _, r := range rows {
		if r.EMF != "—" {
			emfDocumented = append(emfDocumented, r.EMF)
			want, ok := e.PromName(r.EMF)
			if !ok {
				want = "—"
			}
			if r.Prom != want {
				t.Errorf("docs/metrics.md: EMF %s is exported as %q, the table says %q", r.EMF, want, r.Prom)
			}
		}
		if r.Prom == "—" {
			continue
		}
		promDocumented = append(promDocumented, r.Prom)
		fam := fams[r.Prom]
		if fam == nil {
			t.Errorf("docs/metrics.md: %s is not in the exporter's registry", r.Prom)
			continue
		}
		if kind := strings.ToLower(fam.GetType().String()); r.Type != kind {
			t.Errorf("docs/metrics.md: %s is a %s, the table says %q", r.Prom, kind, r.Type)
		}
		var labels []string
		for _, l := range fam.GetMetric()[0].GetLabel() {
			labels = append(labels, l.GetName())
		}
		if got := strings.Join(labels, ", "); r.Labels != got {
			t.Errorf("docs/metrics.md: %s has labels %q, the table says %q", r.Prom, got, r.Labels)
		}
	}
	if missing, extra := diff(metrics.Names, emfDocumented); len(missing)+len(extra) > 0 {
		t.Errorf("docs/metrics.md: EMF metrics of the code not in the table: %v; in the table, not in the code or twice: %v", missing, extra)
	}
	var registered []string
	for name := range fams {
		registered = append(registered, name)
	}
	if missing, extra := diff(registered, promDocumented); len(missing)+len(extra) > 0 {
		t.Errorf("docs/metrics.md: registry metrics not in the table: %v; in the table, not in the registry or twice: %v", missing, extra)
	}
}

// diff returns what want has that got lacks, and what got has beyond want
// (duplicates included).
func diff(want, got []string) (missing, extra []string) {
	left := slices.Clone(got)
	for _, w := range want {
		if i := slices.Index(left, w); i >= 0 {
			left = slices.Delete(left, i, i+1)
		} else {
			missing = append(missing, w)
		}
	}
	return missing, left
}
