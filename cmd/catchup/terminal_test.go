package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
)

// TestVerboseLogLinesDoNotOverwriteTheProgressBar runs `run -v` with the
// error stream taken for a terminal: the progress bar is drawn, and every
// log line starts on a line of its own (after a newline, or after the
// bar's line was erased), never after the bar's text.
func TestVerboseLogLinesDoNotOverwriteTheProgressBar(t *testing.T) {
	e := newCLIEnv(t)
	var out, errOut bytes.Buffer
	a := &app{in: strings.NewReader(""), out: &out, err: &errOut, forceTerminal: true}
	root := a.root()
	root.SetArgs([]string{"run", "-v", "-c", e.cfg})
	root.SetOut(&out)
	root.SetErr(&errOut)
	ctx, cancel := context.WithTimeout(t.Context(), cliTimeout)
	defer cancel()
	if err := root.ExecuteContext(ctx); err != nil {
		t.Fatalf("run -v: %v\n%s", err, errOut.String())
	}
	stderr := errOut.String()
	if !strings.Contains(stderr, "rec/s") || !strings.Contains(stderr, `msg="window copied"`) {
		t.Fatalf("run -v on a terminal: want the progress bar and the log lines, got:\n%q", stderr)
	}
	for _, i := range regexp.MustCompile(`time=`).FindAllStringIndex(stderr, -1) {
		// A log line starts the output, follows a newline, or follows the
		// erasure of the bar's line; anything else is the bar's text.
		before := stderr[:i[0]]
		if before != "" && !strings.HasSuffix(before, "\n") && !strings.HasSuffix(before, eraseLine) {
			t.Errorf("run -v on a terminal: a log line was written after the bar's text: %q", stderr[max(0, i[0]-60):i[1]])
		}
	}
}

// TestVerifyShowsProgress: verify on a terminal draws a progress bar of the
// records it reads.
func TestVerifyShowsProgress(t *testing.T) {
	e := newCLIEnv(t)
	mustCLI(t, exitOK, "", "run", "-c", e.cfg)
	var out, errOut bytes.Buffer
	a := &app{in: strings.NewReader(""), out: &out, err: &errOut, forceTerminal: true}
	root := a.root()
	root.SetArgs([]string{"verify", "-c", e.cfg})
	root.SetOut(&out)
	root.SetErr(&errOut)
	if err := root.ExecuteContext(t.Context()); err != nil {
		t.Fatalf("verify: %v\n%s", err, errOut.String())
	}
	if stderr := errOut.String(); !strings.Contains(stderr, "rec/s") || !strings.Contains(stderr, "/360,") {
		t.Errorf("verify on a terminal: want a progress bar of the 360 records, got:\n%q", stderr)
	}
}
