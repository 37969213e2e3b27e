package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/kafka-catchup/catchup/internal/awsapi"
	"github.com/kafka-catchup/catchup/internal/lambdaenv"
)

// Environment of the emulator tests: make test installs aws-lambda-rie
// (pinned, from the Go module proxy) and sets both.
const (
	envRIE        = "CATCHUP_RIE"         // path of the aws-lambda-rie binary
	envRequireRIE = "CATCHUP_REQUIRE_RIE" // "1": fail, rather than skip, without it
)

// rieBinary returns the aws-lambda-rie binary the tests run the functions
// under, or skips t (fails it under CATCHUP_REQUIRE_RIE=1) without one.
func rieBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(envRIE); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s=%s: %v", envRIE, p, err)
		}
		return p
	}
	msg := fmt.Sprintf("no Lambda emulator: set %s to an aws-lambda-rie binary (make test-lambda installs the pinned one and runs this suite)", envRIE)
	if os.Getenv(envRequireRIE) == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg + fmt.Sprintf(" (set %s=1 to fail instead)", envRequireRIE))
	return ""
}

// lambdaStack is the functions of one test deployed as template.yaml
// deploys them: each function is a pool of AWS Lambda Runtime Interface
// Emulator processes (aws-lambda-rie, Lambda's own Runtime API, the one in
// its container images) running its bootstrap with the environment,
// memory and timeout the template gives it, behind a loopback server of
// the Lambda Invoke API that the dispatcher's SDK client reaches through
// AWS_ENDPOINT_URL_LAMBDA.
//
// The front exists because aws-lambda-rie serves one function at one path
// (/2015-03-31/functions/function/invocations), one invocation at a time
// (a second concurrent one makes it panic) and synchronously: the front
// maps Invoke on a function's name to a free emulator of its pool,
// answers InvocationType Event at once with 202 and runs the invocation
// when an emulator is free, as Lambda queues asynchronous invocations. It
// also reports a function error or a timeout as Lambda does (X-Amz-Function-
// Error), which the emulator does not: it answers 200 with the error
// document, or with "Task timed out after N.00 seconds". It does not retry
// failed asynchronous invocations (Lambda does, twice): the tests read
// every outcome instead.
type lambdaStack struct {
	front  *httptest.Server
	params map[string]any    // template parameters, and what the template's Refs stand for
	env    map[string]string // variables every bootstrap gets besides the template's, forwarded as is
	client *awslambda.Client // the test's own Lambda client, on the front

	mu  sync.Mutex
	fns map[string]*rieFunction // by function name
}

// Names of the stack's resources, which the template's Refs resolve to.
const (
	stackName         = "e2e"
	replicateFunction = "catchup-replicate"
	dispatchFunction  = "catchup-dispatch"
)

// newLambdaStack returns a stack whose template parameters are params
// (as `sam deploy --parameter-overrides` sets them), on the DynamoDB
// endpoint dynamo with table, and the Secrets Manager, SSM and STS double
// (nil: none). env is added to every bootstrap's environment as is.
func newLambdaStack(t *testing.T, params map[string]any, dynamo, table string, double *awsDouble, env map[string]string) *lambdaStack {
	t.Helper()
	s := &lambdaStack{params: maps.Clone(params), fns: map[string]*rieFunction{}, env: awsEnv(t, dynamo)}
	if s.params == nil {
		s.params = map[string]any{}
	}
	s.params["CheckpointTable"] = table
	s.params["ReplicateFunction"] = replicateFunction
	s.params["DispatchFunction"] = dispatchFunction
	s.params["AWS::StackName"] = stackName
	s.params["AWS::Region"] = "us-east-1"
	if double != nil {
		for _, svc := range []string{"SECRETS_MANAGER", "SSM", "STS"} {
			s.env["AWS_ENDPOINT_URL_"+svc] = double.srv.URL
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /2015-03-31/functions/{name}/invocations", s.serveInvoke)
	s.front = httptest.NewServer(mux)
	t.Cleanup(s.front.Close)
	s.env["AWS_ENDPOINT_URL_LAMBDA"] = s.front.URL
	maps.Copy(s.env, env)
	s.client = awslambda.New(awslambda.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(s.front.URL),
		Credentials: aws.AnonymousCredentials{},
	})
	return s
}

// fnSpec is what template.yaml gives a function: its environment
// variables, memory (MiB) and timeout (seconds).
type fnSpec struct {
	Env      map[string]string
	MemoryMB int
	TimeoutS int
	LogEnv   map[string]string // what Lambda sets from LoggingConfig
}

// templateFunction reads the spec of the function logical from the
// template resolved with params.
func templateFunction(t *testing.T, logical string, params map[string]any) fnSpec {
	t.Helper()
	raw := resolvedTemplate(t, params)
	props, ok := dig(raw, "Resources", logical, "Properties").(map[string]any)
	if !ok {
		t.Fatalf("template.yaml has no function %s", logical)
	}
	spec := fnSpec{Env: map[string]string{}, LogEnv: map[string]string{}}
	vars, _ := dig(props, "Environment", "Variables").(map[string]any)
	for k, v := range vars {
		spec.Env[k] = scalar(v)
	}
	number := func(name string) int {
		v := props[name]
		if v == nil {
			v = dig(raw, "Globals", "Function", name)
		}
		n, err := strconv.Atoi(scalar(v))
		if err != nil {
			t.Fatalf("%s: %s = %v: %v", logical, name, v, err)
		}
		return n
	}
	spec.MemoryMB, spec.TimeoutS = number("MemorySize"), number("Timeout")
	// Lambda's variables for the advanced logging controls.
	if f, ok := dig(raw, "Globals", "Function", "LoggingConfig", "LogFormat").(string); ok {
		spec.LogEnv["AWS_LAMBDA_LOG_FORMAT"] = f
	}
	if l, ok := dig(raw, "Globals", "Function", "LoggingConfig", "ApplicationLogLevel").(string); ok {
		spec.LogEnv["AWS_LAMBDA_LOG_LEVEL"] = l
	}
	return spec
}

// deploy starts n emulators of the function logical of the template, each
// running its bootstrap. adjust, when not nil, changes the spec read from
// the template first (a test that shortens the timeout says so).
func (s *lambdaStack) deploy(t *testing.T, logical string, n int, adjust func(*fnSpec)) *rieFunction {
	t.Helper()
	rie := rieBinary(t)
	spec := templateFunction(t, logical, s.params)
	if adjust != nil {
		adjust(&spec)
	}
	name, _ := s.params[logical].(string)
	bootstrap := map[string]string{"ReplicateFunction": "replicate", "DispatchFunction": "dispatch"}[logical]
	fn := &rieFunction{name: name, spec: spec, idle: make(chan *rieProc, n)}
	for i := range n {
		env := maps.Clone(spec.Env)
		maps.Copy(env, spec.LogEnv)
		maps.Copy(env, s.env)
		var b [8]byte
		_, _ = rand.Read(b[:])
		env[lambdaenv.EnvFunctionName] = name
		env[lambdaenv.EnvMemorySize] = strconv.Itoa(spec.MemoryMB)
		env["AWS_LAMBDA_FUNCTION_TIMEOUT"] = strconv.Itoa(spec.TimeoutS)
		env[lambdaenv.EnvLogStreamName] = "2026/11/29/[$LATEST]" + hex.EncodeToString(b[:])
		if f := recordAWS(t, bootstrap, env); f != "" {
			env[awsapi.EnvRecord] = f
		}
		p := startRIE(t, rie, fmt.Sprintf("%s-%d", name, i), filepath.Join(bin, bootstrap), env)
		fn.procs = append(fn.procs, p)
		fn.idle <- p
	}
	s.mu.Lock()
	s.fns[name] = fn
	s.mu.Unlock()
	return fn
}

// rieFunction is one function of a lambdaStack: a pool of emulators.
type rieFunction struct {
	name  string
	spec  fnSpec
	procs []*rieProc
	idle  chan *rieProc

	mu     sync.Mutex
	events []*rieInvocation // the asynchronous invocations, in arrival order
}

// rieInvocation is one invocation and, once answered, its outcome.
type rieInvocation struct {
	payload []byte
	done    chan struct{}
	body    []byte
	failed  bool // a function error or a timeout
	took    time.Duration
}

// rieProc is one aws-lambda-rie process; it starts the bootstrap on its
// first invocation, as Lambda starts an execution environment.
type rieProc struct {
	name string
	addr string
	cmd  *exec.Cmd
	out  *syncBuffer // the emulator's and the bootstrap's output
}

func startRIE(t *testing.T, rie, name, bootstrap string, env map[string]string) *rieProc {
	t.Helper()
	api, runtime := freePort(t), freePort(t)
	p := &rieProc{name: name, addr: api, out: &syncBuffer{}}
	p.cmd = exec.Command(rie, "--runtime-interface-emulator-address", api, "--runtime-api-address", runtime, bootstrap)
	for _, k := range slices.Sorted(maps.Keys(env)) {
		p.cmd.Env = append(p.cmd.Env, k+"="+env[k])
	}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start aws-lambda-rie for %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
		if t.Failed() {
			t.Logf("output of %s (aws-lambda-rie):\n%s", name, p.out.String())
		}
	})
	// Its HTTP server listens a moment after exec.
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.Dial("tcp", api)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("aws-lambda-rie for %s does not listen on %s: %v\n%s", name, api, err, p.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return p
}

// rieLine matches the emulator's own lines: its log ("03 Dec 2026
// 17:58:10,902 [INFO] (rapid) INIT START...") and START, END and REPORT,
// which Lambda writes to the log stream too, not the function.
var rieLine = regexp.MustCompile(`^(\d\d \w{3} \d{4} [\d:,]+ \[\w+\] \(rapid\) |(START|END|REPORT) RequestId: )`)

// output is what the bootstrap printed, the emulator's lines left out.
func (p *rieProc) output() string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(p.out.String(), "\n") {
		if !rieLine.MatchString(line) {
			b.WriteString(line)
		}
	}
	return b.String()
}

// serveInvoke serves Lambda's Invoke: RequestResponse (the default) runs
// the invocation and answers its response; Event queues it and answers 202.
func (s *lambdaStack) serveInvoke(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if i := strings.LastIndex(name, ":function:"); i >= 0 { // an ARN
		name = name[i+len(":function:"):]
	}
	s.mu.Lock()
	fn := s.fns[name]
	s.mu.Unlock()
	if fn == nil {
		awsError(w, http.StatusNotFound, "ResourceNotFoundException", "Function not found: "+name)
		return
	}
	payload, err := io.ReadAll(r.Body)
	if err != nil {
		awsError(w, http.StatusBadRequest, "InvalidRequestContentException", err.Error())
		return
	}
	inv := &rieInvocation{payload: payload, done: make(chan struct{})}
	switch typ := r.Header.Get("X-Amz-Invocation-Type"); typ {
	case "Event":
		fn.mu.Lock()
		fn.events = append(fn.events, inv)
		fn.mu.Unlock()
		go fn.run(inv)
		w.WriteHeader(http.StatusAccepted)
	case "", "RequestResponse":
		fn.run(inv)
		if inv.failed {
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
		}
		w.Header().Set("X-Amz-Executed-Version", "$LATEST")
		_, _ = w.Write(inv.body)
	default:
		awsError(w, http.StatusBadRequest, "InvalidParameterValueException", "X-Amz-Invocation-Type "+typ+" is not served here")
	}
}

// run runs inv on the next free emulator of fn.
func (fn *rieFunction) run(inv *rieInvocation) {
	defer close(inv.done)
	p := <-fn.idle
	defer func() { fn.idle <- p }()
	begin := time.Now()
	res, err := http.Post("http://"+p.addr+"/2015-03-31/functions/function/invocations", "application/json", bytes.NewReader(inv.payload))
	inv.took = time.Since(begin)
	if err != nil {
		inv.body, inv.failed = []byte(err.Error()), true
		return
	}
	defer res.Body.Close()
	inv.body, _ = io.ReadAll(res.Body)
	var doc map[string]any
	_ = json.Unmarshal(inv.body, &doc)
	_, errorType := doc["errorType"]
	inv.failed = res.StatusCode/100 != 2 || bytes.HasPrefix(inv.body, []byte("Task timed out after ")) ||
		errorType && len(doc) <= 3 // aws-lambda-go's error document: errorMessage, errorType, stackTrace
}

// queued returns the asynchronous invocations of fn so far.
func (fn *rieFunction) queued() []*rieInvocation {
	fn.mu.Lock()
	defer fn.mu.Unlock()
	return slices.Clone(fn.events)
}

// invoke invokes fn synchronously through the Lambda API, with the SDK, and
// returns the outcome; it fails t when ctx ends first.
func (s *lambdaStack) invoke(ctx context.Context, t *testing.T, fn *rieFunction, payload string) *rieInvocation {
	t.Helper()
	begin := time.Now()
	out, err := s.client.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String(fn.name),
		InvocationType: types.InvocationTypeRequestResponse, Payload: []byte(payload)})
	if err != nil {
		t.Fatalf("invoke %s with %s: %v", fn.name, payload, err)
	}
	return &rieInvocation{payload: []byte(payload), body: out.Payload, failed: out.FunctionError != nil, took: time.Since(begin)}
}

// wait returns once inv is answered, or fails t when ctx ends first.
func (inv *rieInvocation) wait(ctx context.Context, t *testing.T) *rieInvocation {
	t.Helper()
	select {
	case <-inv.done:
		return inv
	case <-ctx.Done():
		t.Fatalf("invocation with %s: no answer: %v", inv.payload, ctx.Err())
		return nil
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
