// Package emftest checks CloudWatch Embedded Metric Format documents
// against the specification, for the tests of any code that writes them.
// It is to EMF what testing/fstest is to fs.FS: a conformance check that
// ships with the writer.
package emftest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Limits of the specification.
const (
	maxMetrics    = 100     // MetricDefinitions in one MetricDirective
	maxDimensions = 30      // dimension keys in one DimensionSet
	maxValues     = 100     // values in one metric's array
	maxDocument   = 1 << 20 // a log event's size limit
)

// units are the CloudWatch units a MetricDefinition may name.
var units = []string{
	"Seconds", "Microseconds", "Milliseconds", "Bytes", "Kilobytes", "Megabytes", "Gigabytes", "Terabytes",
	"Bits", "Kilobits", "Megabits", "Gigabits", "Terabits", "Percent", "Count",
	"Bytes/Second", "Kilobytes/Second", "Megabytes/Second", "Gigabytes/Second", "Terabytes/Second",
	"Bits/Second", "Kilobits/Second", "Megabits/Second", "Gigabits/Second", "Terabits/Second", "Count/Second", "None",
}

// Document is a checked EMF document, reduced to what tests assert on.
type Document struct {
	Timestamp  int64              // unix milliseconds
	Namespace  string             // of the first directive
	Dimensions [][]string         // dimension sets of the first directive
	Units      map[string]string  // metric name → unit
	Values     map[string]float64 // metric name → value (the first, for an array)
	Members    map[string]any     // every top-level member but _aws
}

// Check parses line, one EMF document, and returns every way it breaks the
// specification: the _aws metadata (Timestamp in milliseconds,
// CloudWatchMetrics), each MetricDirective (Namespace, Dimensions,
// Metrics), no unknown members in the objects the specification defines,
// every dimension a top-level string member and every metric a top-level
// number (or array of at most 100 numbers), at most 100 metrics per
// directive and 30 dimensions per dimension set.
func Check(line []byte) (*Document, error) {
	if len(line) > maxDocument {
		return nil, fmt.Errorf("emf: document of %d bytes, more than %d", len(line), maxDocument)
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var root map[string]any
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("emf: not a JSON object: %w", err)
	}
	if dec.More() {
		return nil, errors.New("emf: data after the JSON object")
	}
	c := &checker{root: root, doc: &Document{Units: map[string]string{}, Values: map[string]float64{}, Members: map[string]any{}}}
	c.check()
	return c.doc, errors.Join(c.errs...)
}

type checker struct {
	root map[string]any
	doc  *Document
	errs []error
}

func (c *checker) addf(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("emf: "+format, args...))
}

// only reports members of obj (at path) outside allowed.
func (c *checker) only(path string, obj map[string]any, allowed ...string) {
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if !slices.Contains(allowed, k) {
			c.addf("%s has a member %q that the specification does not define", path, k)
		}
	}
}

func (c *checker) check() {
	for k, v := range c.root {
		if k != "_aws" {
			c.doc.Members[k] = v
		}
	}
	aws, ok := c.root["_aws"].(map[string]any)
	if !ok {
		c.addf("the root has no _aws object")
		return
	}
	c.only("_aws", aws, "Timestamp", "CloudWatchMetrics")
	switch ts, err := integer(aws["Timestamp"]); {
	case err != nil:
		c.addf("_aws.Timestamp: %v", err)
	case ts < 1e12 || ts > 1e14:
		c.addf("_aws.Timestamp %d is not milliseconds since the epoch", ts)
	default:
		c.doc.Timestamp = ts
	}
	dirs, ok := aws["CloudWatchMetrics"].([]any)
	if !ok {
		c.addf("_aws.CloudWatchMetrics is not an array")
		return
	}
	for i, d := range dirs {
		c.directive(fmt.Sprintf("_aws.CloudWatchMetrics[%d]", i), d, i == 0)
	}
}

func (c *checker) directive(path string, v any, first bool) {
	d, ok := v.(map[string]any)
	if !ok {
		c.addf("%s is not an object", path)
		return
	}
	c.only(path, d, "Namespace", "Dimensions", "Metrics")
	ns, ok := d["Namespace"].(string)
	if !ok || ns == "" || len(ns) > 255 {
		c.addf("%s.Namespace must be a string of 1 to 255 characters", path)
	}
	sets, ok := d["Dimensions"].([]any)
	if !ok {
		c.addf("%s.Dimensions is not an array", path)
	}
	var dimSets [][]string
	for i, s := range sets {
		keys, ok := s.([]any)
		if !ok {
			c.addf("%s.Dimensions[%d] is not an array", path, i)
			continue
		}
		if len(keys) > maxDimensions {
			c.addf("%s.Dimensions[%d] has %d dimensions, more than %d", path, i, len(keys), maxDimensions)
		}
		var set []string
		for _, k := range keys {
			name, ok := k.(string)
			if !ok {
				c.addf("%s.Dimensions[%d] holds a non-string %v", path, i, k)
				continue
			}
			set = append(set, name)
			if _, ok := c.root[name].(string); !ok {
				c.addf("%s.Dimensions[%d]: dimension %q is not a top-level string member", path, i, name)
			}
		}
		dimSets = append(dimSets, set)
	}
	metrics, ok := d["Metrics"].([]any)
	if !ok {
		c.addf("%s.Metrics is not an array", path)
	}
	if len(metrics) > maxMetrics {
		c.addf("%s.Metrics has %d definitions, more than %d", path, len(metrics), maxMetrics)
	}
	for i, m := range metrics {
		c.definition(fmt.Sprintf("%s.Metrics[%d]", path, i), m)
	}
	if first {
		c.doc.Namespace, c.doc.Dimensions = ns, dimSets
	}
}

func (c *checker) definition(path string, v any) {
	m, ok := v.(map[string]any)
	if !ok {
		c.addf("%s is not an object", path)
		return
	}
	c.only(path, m, "Name", "Unit", "StorageResolution")
	name, ok := m["Name"].(string)
	if !ok || name == "" || len(name) > 1024 {
		c.addf("%s.Name must be a string of 1 to 1024 characters", path)
		return
	}
	if u, present := m["Unit"]; present {
		s, ok := u.(string)
		if !ok || !slices.Contains(units, s) {
			c.addf("%s.Unit %v is not a CloudWatch unit", path, u)
		}
		c.doc.Units[name] = s
	}
	if r, present := m["StorageResolution"]; present {
		if n, err := integer(r); err != nil || (n != 1 && n != 60) {
			c.addf("%s.StorageResolution %v must be 1 or 60", path, r)
		}
	}
	switch val := c.root[name].(type) {
	case json.Number:
		f, err := val.Float64()
		if err != nil {
			c.addf("metric %q: %v", name, err)
		}
		c.doc.Values[name] = f
	case []any:
		if len(val) == 0 || len(val) > maxValues {
			c.addf("metric %q has %d values, want 1 to %d", name, len(val), maxValues)
		}
		for j, x := range val {
			n, ok := x.(json.Number)
			if !ok {
				c.addf("metric %q value %d is not a number", name, j)
				continue
			}
			if j == 0 {
				c.doc.Values[name], _ = n.Float64()
			}
		}
	default:
		c.addf("metric %q is not a top-level number or array of numbers", name)
	}
}

func integer(v any) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("%v is not a number", v)
	}
	return n.Int64()
}

// Lines returns the EMF documents among lines of output (a function's
// stdout, where log lines and EMF lines mix): every line that is a JSON
// object with an _aws member, checked. The error joins every problem found.
func Lines(output []byte) ([]*Document, error) {
	var docs []*Document
	var errs []error
	for i, line := range bytes.Split(output, []byte("\n")) {
		if !bytes.Contains(line, []byte(`"_aws"`)) {
			continue
		}
		d, err := Check(line)
		if err != nil {
			errs = append(errs, fmt.Errorf("line %d: %w", i+1, err))
			continue
		}
		docs = append(docs, d)
	}
	return docs, errors.Join(errs...)
}
