package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestLogFormatJSONLines: off a terminal the logs are JSON (--log-format
// auto), one object per line that parses alone, with no empty attribute;
// --log-format text gives logfmt, and a bad format is a usage error.
func TestLogFormatJSONLines(t *testing.T) {
	for _, tc := range []struct {
		args []string
		json bool
	}{
		{nil, true},
		{[]string{"--log-format", "json", "--log-level", "debug"}, true},
		{[]string{"--log-format", "text"}, false},
	} {
		e := newCLIEnv(t) // a backlog to copy, and log about, each time
		var out, errOut bytes.Buffer
		run(t.Context(), append([]string{"run", "-c", e.cfg}, tc.args...), strings.NewReader(""), &out, &errOut)
		lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
		if len(lines) == 0 || lines[0] == "" {
			t.Fatalf("%v: no log lines", tc.args)
		}
		for i, l := range lines {
			var obj map[string]any
			err := json.Unmarshal([]byte(l), &obj)
			if tc.json != (err == nil) {
				t.Errorf("%v: line %d %q: JSON error %v, want JSON %v", tc.args, i+1, l, err, tc.json)
				continue
			}
			if !tc.json {
				if !strings.Contains(l, "msg=") {
					t.Errorf("%v: line %d %q: not logfmt", tc.args, i+1, l)
				}
				continue
			}
			for _, k := range []string{"time", "level", "msg"} {
				if _, ok := obj[k]; !ok {
					t.Errorf("%v: line %d %q: no %q", tc.args, i+1, l, k)
				}
			}
			for k, v := range obj {
				if v == nil || v == "" {
					t.Errorf("%v: line %d: empty attribute %s=%v", tc.args, i+1, k, v)
				}
			}
		}
	}
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{"run", "-c", "pipelines.yaml", "--log-format", "xml"}, strings.NewReader(""), &out, &errOut); code != exitUsage ||
		!strings.Contains(errOut.String(), "--log-format \"xml\": give text, json or auto") {
		t.Errorf("--log-format xml: exit %d, stderr %q; want 2 and the formats", code, errOut.String())
	}
}

// TestLogDropsEmptyAttributes: an empty string or a nil error is left out of
// a log line, in both formats.
func TestLogDropsEmptyAttributes(t *testing.T) {
	for _, format := range []string{logText, logJSON} {
		var buf bytes.Buffer
		a := &app{err: &buf, logFormat: format}
		a.logger().Info("groups synced", "group_skipped", "", "error", error(nil), "groups", 2)
		if s := buf.String(); strings.Contains(s, "group_skipped") || strings.Contains(s, "error") || !strings.Contains(s, "groups") {
			t.Errorf("%s: %q; want groups and no group_skipped or error", format, s)
		}
	}
}

// TestJSONOneLinePerDocument: off a terminal --json prints each document on
// one line (here continuous mode's stream of documents, one per run), so a
// log shipper takes each as one record; --json=pretty indents.
func TestJSONOneLinePerDocument(t *testing.T) {
	e := newCLIEnv(t)
	for _, tc := range []struct {
		style   string
		oneLine bool
	}{{"--json", true}, {"--json=compact", true}, {"--json=pretty", false}} {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		var out, errOut bytes.Buffer
		code := run(ctx, []string{"run", "-c", e.cfg, tc.style, "--every", "100ms"}, strings.NewReader(""), &out, &errOut)
		cancel()
		if code != exitOK {
			t.Fatalf("%s: exit %d\nstderr:\n%s", tc.style, code, errOut.String())
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		docs := 0
		for dec := json.NewDecoder(strings.NewReader(out.String())); dec.More(); docs++ {
			var doc map[string]any
			if err := dec.Decode(&doc); err != nil {
				t.Fatalf("%s: document %d: %v", tc.style, docs+1, err)
			}
		}
		if docs < 2 {
			t.Fatalf("%s: %d documents, want one per run (at least 2)", tc.style, docs)
		}
		if got := len(lines) == docs; got != tc.oneLine {
			t.Errorf("%s: %d lines for %d documents; want one line per document: %v", tc.style, len(lines), docs, tc.oneLine)
		}
		for i, l := range lines {
			if tc.oneLine && !json.Valid([]byte(l)) {
				t.Errorf("%s: line %d is not a JSON document: %q", tc.style, i+1, l)
			}
		}
	}
}
