package crashtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
)

// catchupBin is the catchup binary TestMain builds, without -race whatever
// the test binary was built with: the children must run at full speed.
var catchupBin string

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "catchup-crashtest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "crashtest:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	root, err := repoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "crashtest:", err)
		return 1
	}
	catchupBin = filepath.Join(dir, "catchup")
	build := exec.Command("go", "build", "-o", catchupBin, "./cmd/catchup")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "crashtest: go build ./cmd/catchup: %v\n%s", err, out)
		return 1
	}
	code := m.Run()
	dynamotest.Stop()
	return code
}

// repoRoot is the nearest directory above the working directory holding go.mod.
func repoRoot() (string, error) {
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
