// Package testbin builds the repository's commands for tests that run them
// as child processes (internal/crashtest, cmd/catchup's outcome table): the
// real binary, its real exit code and its real stdout.
package testbin

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Build compiles the main package pkg, a path relative to the module root
// ("./cmd/catchup"), into dir and returns the binary's path. It builds
// without -race whatever the test binary was built with: the children run
// at full speed. The go command's build cache makes a second build of an
// unchanged tree cheap.
func Build(dir, pkg string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", fmt.Errorf("build %s: %w", pkg, err)
	}
	bin := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
	}
	return bin, nil
}

// BuildT is Build into t.TempDir, failing t on an error.
func BuildT(t testing.TB, pkg string) string {
	t.Helper()
	bin, err := Build(t.TempDir(), pkg)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// RepoRoot is the nearest directory above the working directory holding
// go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
