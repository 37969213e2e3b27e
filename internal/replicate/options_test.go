package replicate

import (
	"strings"
	"testing"
	"time"
)

// TestNewRefusesValuesOutOfRange: the engine fills in no default; a value
// out of range is refused with the option's name, and a zero that means
// "none" (Retries, Margin, TakeoverSettle, ReplicationWait) is taken as it is.
func TestNewRefusesValuesOutOfRange(t *testing.T) {
	r := newRig(nil)
	for _, tc := range []struct {
		name string
		set  func(*Options)
		want string // "" : accepted
	}{
		{"zero retries: none", func(o *Options) { o.Retries = 0 }, ""},
		{"zero margin: none", func(o *Options) { o.Margin = 0 }, ""},
		{"zero takeover settle: no wait", func(o *Options) { o.TakeoverSettle = 0 }, ""},
		{"zero replication wait: no wait", func(o *Options) { o.ReplicationWait = 0 }, ""},
		{"zero parallelism", func(o *Options) { o.Parallelism = 0 }, "Options.Parallelism 0: want at least 1"},
		{"zero commit interval", func(o *Options) { o.CommitInterval = 0 }, "Options.CommitInterval 0s: want a positive duration"},
		{"zero fetch bytes", func(o *Options) { o.FetchBytes = 0 }, "Options.FetchBytes 0: want at least 1"},
		{"zero lease", func(o *Options) { o.LeaseTTL = 0 }, "Options.LeaseTTL 0s: want a positive duration"},
		{"zero batch records", func(o *Options) { o.BatchRecords = 0 }, "Options.BatchRecords 0: want at least 1"},
		{"zero retry backoff", func(o *Options) { o.RetryBackoff = 0 }, "Options.RetryBackoff 0s: want a positive duration"},
		{"negative retries", func(o *Options) { o.Retries = -1 }, "Options.Retries -1: want 0 (none) or more"},
		{"negative margin", func(o *Options) { o.Margin = -time.Second }, "Options.Margin -1s: want 0 (none) or more"},
		{"negative settle", func(o *Options) { o.TakeoverSettle = -1 }, "Options.TakeoverSettle -1ns: want 0 (no wait) or more"},
		{"negative wait", func(o *Options) { o.ReplicationWait = -1 }, "Options.ReplicationWait -1ns: want 0 (no wait) or more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := r.options("run")
			tc.set(&o)
			e, err := New(o)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("New: %v", err)
			case tc.want == "" && (e.o.Retries != o.Retries || e.o.Margin != o.Margin ||
				e.o.TakeoverSettle != o.TakeoverSettle || e.o.ReplicationWait != o.ReplicationWait):
				t.Errorf("New replaced a value: got %+v", e.o)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("New error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}
