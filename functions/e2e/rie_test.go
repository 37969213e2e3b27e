package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
	"github.com/kafka-catchup/catchup/internal/lambdaenv"
	"github.com/kafka-catchup/catchup/internal/worker"
)

// envRIE names the aws-lambda-rie binary for TestUnderRIE:
//
//	GOBIN=$PWD/bin go install github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@latest
//	CATCHUP_RIE=$PWD/bin/aws-lambda-rie go test -run RIE ./functions/e2e/
const envRIE = "CATCHUP_RIE"

// TestUnderRIE runs the replicate bootstrap under the AWS Lambda Runtime
// Interface Emulator, the runtime API of Lambda's own container images,
// and copies a pipeline through it: the bootstrap works with Lambda's
// implementation of the Runtime API, not only with the test's.
func TestUnderRIE(t *testing.T) {
	rie := os.Getenv(envRIE)
	if rie == "" {
		t.Skipf("set %s to an aws-lambda-rie binary to run the bootstrap under it", envRIE)
	}
	ctx := testContext(t)
	src := newCluster(t, nil, kfake.SeedTopics(2, "events"))
	dst := newCluster(t, nil, kfake.SeedTopics(2, "events"))
	src.seed(ctx, t, "events", 2, 50, func(i int) time.Time { return time.UnixMilli(1_700_000_000_000 + int64(i)) })
	endpoint := dynamotest.Endpoint(t)
	table := dynamotest.Table(t, dynamotest.Client(t, endpoint))
	config := fmt.Sprintf("pipelines:\n  - name: p\n    source: {brokers: [%s]}\n    target: {brokers: [%s]}\n    topics: {include: [events]}\n", src.addr(), dst.addr())
	env := with(baseEnv(t, endpoint, table, nil), lambdaenv.EnvConfig, config)
	env["AWS_LAMBDA_FUNCTION_TIMEOUT"] = "30"

	api, runtime := freePort(t), freePort(t)
	cmd := exec.Command(rie, "--runtime-interface-emulator-address", api, "--runtime-api-address", runtime, filepath.Join(bin, "replicate"))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		cmd.Env = append(cmd.Env, k+"="+env[k])
	}
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("aws-lambda-rie output:\n%s", out.String())
		}
	})
	url := "http://" + api + "/2015-03-31/functions/function/invocations"
	var body []byte
	for deadline := time.Now().Add(10 * time.Second); ; {
		res, err := http.Post(url, "application/json", bytes.NewReader([]byte(`{"pipeline":"p"}`)))
		if err == nil {
			body, _ = io.ReadAll(res.Body)
			res.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("aws-lambda-rie did not answer: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var sum worker.Summary
	if err := json.Unmarshal(body, &sum); err != nil || !sum.Done || sum.Copied != 100 {
		t.Fatalf("invocation through aws-lambda-rie: %s (%v); want done with 100 records copied", body, err)
	}
	want, got := src.read(ctx, t, "events", 2), dst.read(ctx, t, "events", 2)
	for p := range int32(2) {
		checkCopy(t, fmt.Sprintf("events/%d", p), want[p], got[p])
	}
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
