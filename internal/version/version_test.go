package version

import (
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFrom(t *testing.T) {
	vcs := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/kafka-catchup/catchup", Version: "(devel)"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "8e6dc92"},
			{Key: "vcs.time", Value: "2026-12-01T22:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	tests := []struct {
		name                 string
		bi                   *debug.BuildInfo
		ldVer, ldCommit, ldD string
		want                 Info
		wantString           string
	}{
		{
			name:  "linker values win",
			bi:    vcs,
			ldVer: "v1.2.3", ldCommit: "abc1234", ldD: "2026-12-02T00:00:00Z",
			want:       Info{Version: "v1.2.3", Commit: "abc1234", Date: "2026-12-02T00:00:00Z", GoVersion: "go1.26.8"},
			wantString: "catchup v1.2.3 (commit abc1234, built 2026-12-02T00:00:00Z, go1.26.8)",
		},
		{
			name:       "source build: vcs stamp, dirty tree",
			bi:         vcs,
			want:       Info{Version: "devel", Commit: "8e6dc92-dirty", Date: "2026-12-01T22:00:00Z", GoVersion: "go1.26.8"},
			wantString: "catchup devel (commit 8e6dc92-dirty, built 2026-12-01T22:00:00Z, go1.26.8)",
		},
		{
			name:       "go install module@version",
			bi:         &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.4.0"}},
			want:       Info{Version: "v0.4.0", GoVersion: "go1.26.8"},
			wantString: "catchup v0.4.0 (go1.26.8)",
		},
		{
			name:       "no build info",
			want:       Info{Version: "devel"},
			wantString: "catchup devel",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := from(tt.bi, tt.ldVer, tt.ldCommit, tt.ldD)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("from() (-want +got):\n%s", diff)
			}
			if s := got.String(); s != tt.wantString {
				t.Errorf("String() = %q, want %q", s, tt.wantString)
			}
		})
	}
}
