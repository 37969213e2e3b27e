package metrics_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/metrics"
	"github.com/kafka-catchup/catchup/internal/metrics/emftest"
)

var at = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func TestEmitFollowsTheSpecification(t *testing.T) {
	var out bytes.Buffer
	e := metrics.New(&out, "catchup", func() time.Time { return at })
	dims := []metrics.Dimension{{metrics.DimService, "prod"}, {metrics.DimPipeline, "orders-dr"}, {metrics.DimTopic, "orders"}}
	sets := [][]string{{metrics.DimPipeline, metrics.DimTopic}, {metrics.DimPipeline}, {metrics.DimService}}
	err := e.Emit(dims, sets, []metrics.Value{
		{Name: metrics.Records, Unit: metrics.Count, Value: 1200},
		{Name: metrics.BytesCopied, Unit: metrics.Bytes, Value: 1 << 20},
		{Name: metrics.Gaps, Unit: metrics.Count, Value: 0},
	})
	if err != nil {
		t.Fatalf("Emit: %v", err)
	}
	want := `{"_aws":{"Timestamp":1777636800000,"CloudWatchMetrics":[{"Namespace":"catchup","Dimensions":[["pipeline","topic"],["pipeline"],["service"]],` +
		`"Metrics":[{"Name":"Records","Unit":"Count"},{"Name":"Bytes","Unit":"Bytes"},{"Name":"Gaps","Unit":"Count"}]}]},` +
		`"service":"prod","pipeline":"orders-dr","topic":"orders","Records":1200,"Bytes":1048576,"Gaps":0}` + "\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("Emit wrote (-want +got):\n%s", diff)
	}
	docs, err := emftest.Lines(out.Bytes())
	if err != nil || len(docs) != 1 {
		t.Fatalf("emftest.Lines = %d documents, %v; want 1 valid document", len(docs), err)
	}
	if d := docs[0]; d.Values[metrics.Records] != 1200 || d.Units[metrics.BytesCopied] != "Bytes" || d.Timestamp != at.UnixMilli() {
		t.Errorf("checked document = %+v", d)
	}
}

func TestEmitSplitsAtTheMetricLimit(t *testing.T) {
	var out bytes.Buffer
	e := metrics.New(&out, "catchup", nil)
	var values []metrics.Value
	for i := range 250 {
		values = append(values, metrics.Value{Name: fmt.Sprintf("M%03d", i), Unit: metrics.Count, Value: int64(i)})
	}
	if err := e.Emit([]metrics.Dimension{{"pipeline", "p"}}, [][]string{{"pipeline"}}, values); err != nil {
		t.Fatalf("Emit: %v", err)
	}
	docs, err := emftest.Lines(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for _, d := range docs {
		got += len(d.Values)
	}
	if len(docs) != 3 || got != 250 {
		t.Errorf("Emit of 250 metrics wrote %d documents with %d metrics; want 3 documents, 250 metrics", len(docs), got)
	}
}

func TestEmitRefusesInvalidDocuments(t *testing.T) {
	many := make([]string, 31)
	var dims []metrics.Dimension
	for i := range many {
		many[i] = fmt.Sprintf("d%d", i)
		dims = append(dims, metrics.Dimension{Name: many[i], Value: "v"})
	}
	tests := []struct {
		name   string
		dims   []metrics.Dimension
		sets   [][]string
		values []metrics.Value
		want   string
	}{
		{"unknown dimension in a set", []metrics.Dimension{{"pipeline", "p"}}, [][]string{{"topic"}},
			[]metrics.Value{{"Records", metrics.Count, 1}}, `names "topic", which is not a dimension`},
		{"metric named like a dimension", []metrics.Dimension{{"pipeline", "p"}}, [][]string{{"pipeline"}},
			[]metrics.Value{{"pipeline", metrics.Count, 1}}, `metric "pipeline" repeats a dimension`},
		{"too many dimensions", dims, [][]string{many}, []metrics.Value{{"Records", metrics.Count, 1}}, "31 dimensions, more than 30"},
		{"empty dimension value", []metrics.Dimension{{"topic", ""}}, nil, []metrics.Value{{"Records", metrics.Count, 1}}, "must not be empty"},
		{"reserved name", nil, nil, []metrics.Value{{"_aws", metrics.Count, 1}}, `metric "_aws" repeats the metadata member`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := metrics.New(&out, "catchup", nil).Emit(tt.dims, tt.sets, tt.values)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Emit = %v, want an error containing %q", err, tt.want)
			}
			if out.Len() != 0 {
				t.Errorf("Emit wrote %q despite the error", out.String())
			}
		})
	}
}

func TestNilEmitterDiscards(t *testing.T) {
	var e *metrics.Emitter
	if err := e.Emit(nil, nil, []metrics.Value{{"Records", metrics.Count, 1}}); err != nil {
		t.Errorf("nil Emitter: %v", err)
	}
}

func TestCheckFindsViolations(t *testing.T) {
	tests := []struct{ name, line, want string }{
		{"no _aws", `{"Records":1}`, "no _aws object"},
		{"seconds timestamp", `{"_aws":{"Timestamp":1777636800,"CloudWatchMetrics":[]}}`, "not milliseconds"},
		{"extra member in _aws", `{"_aws":{"Timestamp":1777636800000,"CloudWatchMetrics":[],"X":1}}`, `member "X"`},
		{"metric not a member", `{"_aws":{"Timestamp":1777636800000,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[],"Metrics":[{"Name":"R","Unit":"Count"}]}]}}`,
			`metric "R" is not a top-level number`},
		{"dimension not a string", `{"_aws":{"Timestamp":1777636800000,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[["p"]],"Metrics":[]}]},"p":3}`,
			`dimension "p" is not a top-level string member`},
		{"bad unit", `{"_aws":{"Timestamp":1777636800000,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[],"Metrics":[{"Name":"R","Unit":"Records"}]}]},"R":1}`,
			"not a CloudWatch unit"},
		{"no namespace", `{"_aws":{"Timestamp":1777636800000,"CloudWatchMetrics":[{"Dimensions":[],"Metrics":[]}]}}`, "Namespace must be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := emftest.Check([]byte(tt.line)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Check(%s) = %v, want an error containing %q", tt.line, err, tt.want)
			}
		})
	}
}
