package main

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/version"
)

func TestVersion(t *testing.T) {
	want := "catchup " + version.Get().Version
	tests := []struct {
		name string
		args []string
	}{
		{"command", []string{"version"}},
		{"flag", []string{"--version"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := cli(t, "", tt.args...)
			if code != exitOK {
				t.Fatalf("catchup %v: exit %d, stderr %s", tt.args, code, stderr)
			}
			if !strings.HasPrefix(stdout, want) || !strings.Contains(stdout, runtime.Version()) {
				t.Errorf("catchup %v = %q, want %q… with %s", tt.args, stdout, want, runtime.Version())
			}
		})
	}
	code, stdout, _ := cli(t, "", "version", "--json")
	var got version.Info
	if err := json.Unmarshal([]byte(stdout), &got); code != exitOK || err != nil {
		t.Fatalf("catchup version --json: exit %d, %v: %q", code, err, stdout)
	}
	if diff := cmp.Diff(version.Get(), got); diff != "" {
		t.Errorf("catchup version --json (-want +got):\n%s", diff)
	}
}
