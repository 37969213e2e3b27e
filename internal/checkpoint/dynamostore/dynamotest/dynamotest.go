// Package dynamotest gives tests a real DynamoDB API: the endpoint named by
// AWS_ENDPOINT_URL_DYNAMODB (LocalStack, or a real region) if it is set, or
// else dynalite, an in-memory DynamoDB-compatible server that the test binary
// starts once on loopback with `node test/dynamodb/dynalite.js`.
//
// The server cannot outlive the test binary: it exits when its stdin, a pipe
// held by the test binary, closes. Call Main from TestMain to stop it as soon
// as the tests end:
//
//	func TestMain(m *testing.M) { dynamotest.Main(m) }
//
// If no server can be had, tests skip with the reason, unless
// CATCHUP_REQUIRE_DYNAMODB=1 (CI), which makes it a failure.
package dynamotest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore"
	"github.com/kafka-catchup/catchup/internal/testbin"
)

// Environment variables read by this package.
const (
	EnvEndpoint = "AWS_ENDPOINT_URL_DYNAMODB" // use this endpoint instead of starting dynalite
	EnvRequire  = "CATCHUP_REQUIRE_DYNAMODB"  // "1": fail, don't skip, when no server can be had
)

// startTimeout bounds dynalite's startup (about 0.3 s when healthy).
const startTimeout = 20 * time.Second

// server is the one dynalite of this test binary.
var server struct {
	once     sync.Once
	mu       sync.Mutex
	endpoint string
	err      error
	proc     *process // nil unless dynalite runs
}

// process is a running dynalite.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	waited chan struct{} // closed when cmd.Wait returned
}

// Endpoint returns the URL of a DynamoDB API for t: AWS_ENDPOINT_URL_DYNAMODB
// if set, else the test binary's dynalite, started on first use. If neither
// can be had, t skips, or fails under CATCHUP_REQUIRE_DYNAMODB=1.
func Endpoint(t testing.TB) string {
	t.Helper()
	if e := os.Getenv(EnvEndpoint); e != "" {
		return e
	}
	server.once.Do(start)
	server.mu.Lock()
	endpoint, err := server.endpoint, server.err
	server.mu.Unlock()
	if err != nil {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("no DynamoDB test server: %v", err)
		}
		t.Skipf("no DynamoDB test server: %v (set %s=1 to fail instead)", err, EnvRequire)
	}
	return endpoint
}

// Main runs the tests and then stops dynalite, if they started it.
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop stops dynalite if it runs. Tests that call Endpoint afterwards skip.
func Stop() {
	server.once.Do(func() { server.err = errors.New("stopped") })
	server.mu.Lock()
	defer server.mu.Unlock()
	p := server.proc
	if p == nil {
		return
	}
	_ = p.stdin.Close() // dynalite.js exits when its stdin closes
	select {
	case <-p.waited:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.waited
	}
	server.proc = nil
	server.err = errors.New("stopped")
}

func start() {
	endpoint, p, err := startDynalite()
	server.mu.Lock()
	defer server.mu.Unlock()
	server.endpoint, server.proc, server.err = endpoint, p, err
}

// startDynalite starts test/dynamodb/dynalite.js and reads the endpoint it
// prints on its first line.
func startDynalite() (string, *process, error) {
	root, err := testbin.RepoRoot() // test/dynamodb/dynalite.js is under it
	if err != nil {
		return "", nil, err
	}
	if _, err := os.Stat(filepath.Join(root, "node_modules", "dynalite")); err != nil {
		return "", nil, errors.New("dynalite is not installed: run `npm ci` in the repo root (make test does it)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return "", nil, errors.New("node is not on PATH: install Node.js 20 or later, then run `npm ci` in the repo root")
	}
	cmd := exec.Command(node, filepath.Join("test", "dynamodb", "dynalite.js"))
	cmd.Dir = root
	var stderr syncBuffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("start dynalite: %w", err)
	}
	waited := make(chan struct{})
	lines := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, _ := r.ReadString('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, r) // never let a full pipe block the server
		_ = cmd.Wait()
		close(waited)
	}()
	fail := func(err error) (string, *process, error) {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		<-waited
		if s := strings.TrimSpace(stderr.String()); s != "" {
			err = fmt.Errorf("%w; its stderr: %s", err, s)
		}
		return "", nil, err
	}
	select {
	case line := <-lines:
		endpoint, ok := strings.CutPrefix(strings.TrimSpace(line), "DYNAMODB_ENDPOINT=")
		if !ok {
			return fail(fmt.Errorf("dynalite printed %q, want DYNAMODB_ENDPOINT=URL", line))
		}
		return endpoint, &process{cmd: cmd, stdin: stdin, waited: waited}, nil
	case <-time.After(startTimeout):
		return fail(fmt.Errorf("dynalite did not print its endpoint within %s", startTimeout))
	}
}

// Client returns a DynamoDB client for endpoint, with the SDK's default
// retryer. Credentials and region come from AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN and AWS_REGION when set (for a real
// endpoint); otherwise they are static dummies and us-east-1, which dynalite
// and LocalStack accept.
func Client(t testing.TB, endpoint string, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	t.Helper()
	id, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	if id == "" || secret == "" {
		id, secret = "catchup-test", "catchup-test"
	}
	region := os.Getenv("AWS_REGION")
	if region == "" {
		region = "us-east-1"
	}
	return dynamodb.New(dynamodb.Options{
		Region:       region,
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider(id, secret, os.Getenv("AWS_SESSION_TOKEN")),
	}, optFns...)
}

// Table creates a table with the store's schema under a fresh name, so that
// tests are independent, and deletes it when t ends.
func Table(t testing.TB, client *dynamodb.Client) string {
	t.Helper()
	name := TableName(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := dynamostore.CreateTable(ctx, client, name); err != nil {
		t.Fatalf("dynamotest.Table: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)}); err != nil {
			t.Logf("delete table %s: %v", name, err)
		}
	})
	return name
}

// TableName returns a fresh table name that names t:
// "catchup-test-<test name>-<random>".
func TableName(t testing.TB) string {
	var b strings.Builder
	for _, r := range t.Name() {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := b.String()
	if len(name) > 180 {
		name = name[:180]
	}
	return "catchup-test-" + name + "-" + strings.ToLower(rand.Text()[:10])
}

// syncBuffer is a bytes.Buffer safe for a writing process and a reader.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() > 64<<10 {
		return len(p), nil // keep the start, where startup errors are
	}
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// StartDynalite starts a dynalite of its own for a program that is not a
// test (bench/cmd/scale), from the repo root above the working directory,
// and returns its endpoint and the function that stops it.
func StartDynalite() (endpoint string, stop func(), err error) {
	endpoint, p, err := startDynalite()
	if err != nil {
		return "", nil, err
	}
	return endpoint, func() {
		_ = p.stdin.Close() // dynalite.js exits when its stdin closes
		<-p.waited
	}, nil
}
