package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kafka-catchup/catchup/internal/lambdaenv"
)

// envMeasure turns on TestStartupTime (make measure-lambda).
const envMeasure = "CATCHUP_MEASURE_STARTUP"

// helloWorld is the smallest aws-lambda-go function, the baseline.
const helloWorld = `package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	lambda.Start(func(context.Context, map[string]any) (string, error) { return "hello", nil })
}
`

// TestStartupTime measures, for each bootstrap and for a hello-world
// aws-lambda-go bootstrap built the same way in a temporary module, the
// time from exec to the first Runtime API request (GET /next): the part of
// a cold start the function controls. It logs the median of 7 starts.
func TestStartupTime(t *testing.T) {
	if os.Getenv(envMeasure) != "1" {
		t.Skipf("a measurement, not a check: set %s=1 (make measure-lambda)", envMeasure)
	}
	dir := t.TempDir()
	sum, err := os.ReadFile(filepath.Join("..", "..", "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"go.mod":  "module hello\n\ngo 1.26\n\nrequire github.com/aws/aws-lambda-go v1.55.1\n",
		"go.sum":  string(sum),
		"main.go": helloWorld,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	hello := filepath.Join(dir, "bootstrap")
	cmd := exec.Command("go", "build", "-mod=mod", "-tags", "lambda.norpc", "-trimpath", "-ldflags", "-s -w", "-o", hello, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build hello world: %v\n%s", err, out)
	}
	// Sizes of the binaries Lambda would run: linux/arm64.
	arm := map[string]string{"hello world": filepath.Join(dir, "arm64", "hello")}
	cmd = exec.Command("go", "build", "-mod=mod", "-tags", "lambda.norpc", "-trimpath", "-ldflags", "-s -w", "-o", arm["hello world"], ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build hello world for linux/arm64: %v\n%s", err, out)
	}
	for _, fn := range []string{"replicate", "dispatch"} {
		arm[fn] = filepath.Join(dir, "arm64", fn)
		t.Setenv("GOOS", "linux")
		t.Setenv("GOARCH", "arm64")
		if err := build(arm[fn], "./functions/"+fn); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("GOOS", "")
	t.Setenv("GOARCH", "")
	for _, name := range []string{"hello world", "replicate", "dispatch"} {
		info, err := os.Stat(arm[name])
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%-12s linux/arm64 bootstrap: %.1f MiB (%d bytes)", name, float64(info.Size())/(1<<20), info.Size())
	}

	config := "pipelines:\n  - name: p\n    source: {brokers: [\"127.0.0.1:1\"]}\n    target: {brokers: [\"127.0.0.1:2\"]}\n    topics: {include: [x]}\n"
	env := with(with(baseEnv(t, "http://127.0.0.1:1", "catchup"), lambdaenv.EnvConfig, config),
		lambdaenv.EnvReplicateFunction, "catchup-replicate")
	for _, b := range []struct{ name, path string }{
		{"hello world", hello},
		{"replicate", filepath.Join(bin, "replicate")},
		{"dispatch", filepath.Join(bin, "dispatch")},
	} {
		var took []time.Duration
		for range 7 {
			rt := newRuntimeAPI(t, b.name)
			p := start(t, b.path, b.name, rt, env)
			deadline := time.Now().Add(10 * time.Second)
			for rt.firstNext.Load() == nil && time.Now().Before(deadline) {
				time.Sleep(100 * time.Microsecond)
			}
			first := rt.firstNext.Load()
			if first == nil {
				t.Fatalf("%s made no /next request in 10s:\n%s", b.name, p.out.String())
			}
			took = append(took, first.Sub(p.started))
			_ = p.cmd.Process.Kill()
		}
		slices.Sort(took)
		t.Logf("%-12s exec to first /next on this machine: median %s (min %s, max %s)",
			b.name, took[len(took)/2].Round(10*time.Microsecond), took[0].Round(10*time.Microsecond), took[len(took)-1].Round(10*time.Microsecond))
	}
}
