// Package metrics writes catchup's metrics in CloudWatch Embedded Metric
// Format (EMF): one JSON document per line on a writer, the Lambda
// function's stdout, which CloudWatch Logs turns into metrics without an API
// call from the function. It also names the metrics and dimensions catchup
// emits, so that template.yaml's alarms and dashboard can be checked against
// them. Package emftest checks a line against the EMF specification.
package metrics

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
)

// Limits of the EMF specification.
const (
	MaxMetrics    = 100 // metric definitions in one directive
	MaxDimensions = 30  // dimension keys in one dimension set
)

// Unit is a CloudWatch metric unit.
type Unit string

// The units catchup's metrics use.
const (
	Count   Unit = "Count"
	Bytes   Unit = "Bytes"
	Seconds Unit = "Seconds"
	// Milliseconds: a duration too short for Seconds in whole numbers.
	Milliseconds Unit = "Milliseconds"
)

// Dimension is a name and value that a metric is recorded under.
type Dimension struct{ Name, Value string }

// Value is one metric datum.
type Value struct {
	Name  string
	Unit  Unit
	Value int64
}

// Emitter writes EMF documents, one per line. It is safe for concurrent
// use. A nil *Emitter discards everything.
type Emitter struct {
	w         io.Writer
	namespace string
	now       func() time.Time
	mu        sync.Mutex
}

// New returns an Emitter that writes documents of namespace to w. now is
// the clock of the documents' timestamps; nil means time.Now.
func New(w io.Writer, namespace string, now func() time.Time) *Emitter {
	if now == nil {
		now = time.Now
	}
	return &Emitter{w: w, namespace: namespace, now: now}
}

// Emit writes values recorded under dims, aggregated along each of sets:
// every set lists names of dims, and CloudWatch stores every value once per
// set. Dimension values and metric values are top-level members of the
// document, as the specification requires, so a dimension and a metric
// must not share a name. More than MaxMetrics values are split over
// several documents. Zero values are written too: an alarm needs a datum
// to tell "nothing happened" from "no data".
func (e *Emitter) Emit(dims []Dimension, sets [][]string, values []Value) error {
	if e == nil || len(values) == 0 {
		return nil
	}
	if err := check(dims, sets, values); err != nil {
		return err
	}
	var lines []byte
	for chunk := range slices.Chunk(values, MaxMetrics) {
		b, err := e.document(dims, sets, chunk)
		if err != nil {
			return err
		}
		lines = append(append(lines, b...), '\n')
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	_, err := e.w.Write(lines) // one write per call, so lines of concurrent calls never interleave
	return err
}

// document is one EMF document. It is built as an ordered list of members
// so that the output is stable: _aws first, then dimensions, then metrics.
func (e *Emitter) document(dims []Dimension, sets [][]string, values []Value) ([]byte, error) {
	type definition struct {
		Name string `json:"Name"`
		Unit Unit   `json:"Unit"`
	}
	type directive struct {
		Namespace  string       `json:"Namespace"`
		Dimensions [][]string   `json:"Dimensions"`
		Metrics    []definition `json:"Metrics"`
	}
	type metadata struct {
		Timestamp         int64       `json:"Timestamp"`
		CloudWatchMetrics []directive `json:"CloudWatchMetrics"`
	}
	d := directive{Namespace: e.namespace, Dimensions: sets}
	for _, v := range values {
		d.Metrics = append(d.Metrics, definition{Name: v.Name, Unit: v.Unit})
	}
	meta, err := json.Marshal(metadata{Timestamp: e.now().UnixMilli(), CloudWatchMetrics: []directive{d}})
	if err != nil {
		return nil, err
	}
	b := append([]byte(`{"_aws":`), meta...)
	member := func(name string, value any) error {
		k, err := json.Marshal(name)
		if err != nil {
			return err
		}
		v, err := json.Marshal(value)
		if err != nil {
			return err
		}
		b = append(append(append(append(b, ','), k...), ':'), v...)
		return nil
	}
	for _, dim := range dims {
		if err := member(dim.Name, dim.Value); err != nil {
			return nil, err
		}
	}
	for _, v := range values {
		if err := member(v.Name, v.Value); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// check returns every way dims, sets and values would make an invalid
// document.
func check(dims []Dimension, sets [][]string, values []Value) error {
	var errs []error
	names := map[string]string{"_aws": "the metadata member"}
	for _, d := range dims {
		if d.Name == "" || d.Value == "" {
			errs = append(errs, fmt.Errorf("metrics: dimension %q=%q: name and value must not be empty", d.Name, d.Value))
		}
		if what, ok := names[d.Name]; ok {
			errs = append(errs, fmt.Errorf("metrics: dimension %q repeats %s", d.Name, what))
		}
		names[d.Name] = "a dimension"
	}
	for _, v := range values {
		if v.Name == "" || v.Unit == "" {
			errs = append(errs, fmt.Errorf("metrics: metric %q: name and unit must not be empty", v.Name))
		}
		if what, ok := names[v.Name]; ok {
			errs = append(errs, fmt.Errorf("metrics: metric %q repeats %s", v.Name, what))
		}
		names[v.Name] = "a metric"
	}
	for _, set := range sets {
		if len(set) > MaxDimensions {
			errs = append(errs, fmt.Errorf("metrics: dimension set %v has %d dimensions, more than %d", set, len(set), MaxDimensions))
		}
		for _, k := range set {
			if names[k] != "a dimension" {
				errs = append(errs, fmt.Errorf("metrics: dimension set %v names %q, which is not a dimension of the document", set, k))
			}
		}
	}
	return errors.Join(errs...)
}
