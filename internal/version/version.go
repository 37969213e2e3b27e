// Package version reports which build of catchup is running: the release
// version and commit stamped by the linker (make release, goreleaser), or
// else what the Go toolchain recorded in the binary (debug.ReadBuildInfo).
package version

import (
	"log/slog"
	"runtime/debug"
	"strings"
)

// Set by the linker:
//
//	-X github.com/kafka-catchup/catchup/internal/version.version=v1.2.3
//	-X github.com/kafka-catchup/catchup/internal/version.commit=abc1234
//	-X github.com/kafka-catchup/catchup/internal/version.date=2026-12-01T22:00:00Z
//
// They are variables only because -X can set nothing else; nothing writes
// them at run time.
var (
	version string
	commit  string
	date    string
)

// Info describes a build.
type Info struct {
	// Version is the release version (v1.2.3), the module version when built
	// by go install module@version, or "devel".
	Version string `json:"version"`
	// Commit is the VCS revision, with "-dirty" when the tree had changes.
	Commit string `json:"commit,omitempty"`
	// Date is the build or commit time, RFC 3339.
	Date string `json:"date,omitempty"`
	// GoVersion is the toolchain that built the binary.
	GoVersion string `json:"go_version"`
}

// Get returns the running binary's build information.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return from(bi, version, commit, date)
}

// from merges the linker's values (preferred) with the build information.
func from(bi *debug.BuildInfo, ldVersion, ldCommit, ldDate string) Info {
	in := Info{Version: ldVersion, Commit: ldCommit, Date: ldDate}
	if bi != nil {
		in.GoVersion = bi.GoVersion
		if in.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			in.Version = bi.Main.Version
		}
		var modified bool
		var revision, vcsTime string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.time":
				vcsTime = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if in.Commit == "" && revision != "" {
			in.Commit = revision
			if modified {
				in.Commit += "-dirty"
			}
		}
		if in.Date == "" {
			in.Date = vcsTime
		}
	}
	if in.Version == "" {
		in.Version = "devel"
	}
	return in
}

// String is the one-line form: "catchup v1.2.3 (commit abc1234, built
// 2026-12-01T22:00:00Z, go1.26.8)".
func (in Info) String() string {
	s := "catchup " + in.Version
	var extra []string
	if in.Commit != "" {
		extra = append(extra, "commit "+in.Commit)
	}
	if in.Date != "" {
		extra = append(extra, "built "+in.Date)
	}
	if in.GoVersion != "" {
		extra = append(extra, in.GoVersion)
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	return s
}

// LogAttr is the build as one slog group, for start-up log lines:
// version=… commit=… go_version=….
func (in Info) LogAttr() slog.Attr {
	return slog.Group("build",
		slog.String("version", in.Version),
		slog.String("commit", in.Commit),
		slog.String("date", in.Date),
		slog.String("go_version", in.GoVersion))
}
