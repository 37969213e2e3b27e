package crashtest

import (
	"fmt"
	"os"
	"testing"

	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
	"github.com/kafka-catchup/catchup/internal/testbin"
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
	if catchupBin, err = testbin.Build(dir, "./cmd/catchup"); err != nil {
		fmt.Fprintln(os.Stderr, "crashtest:", err)
		return 1
	}
	code := m.Run()
	dynamotest.Stop()
	return code
}
