package e2e

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kafka-catchup/catchup/internal/awsapi"
	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
	"github.com/kafka-catchup/catchup/internal/lambdaenv"
	"github.com/kafka-catchup/catchup/internal/metrics/emftest"
)

// bin is the folder the bootstraps are built into, by TestMain.
var bin string

// testTimeout bounds every test.
const testTimeout = 60 * time.Second

// TestMain builds the bootstrap binaries of both functions, for this
// machine, the way make builds them for Lambda (-tags lambda.norpc,
// CGO_ENABLED=0, -trimpath, stripped), runs the tests and stops dynalite.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "catchup-bootstraps-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, fn := range []string{"replicate", "dispatch"} {
		if err := build(filepath.Join(dir, fn), "./functions/"+fn); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	bin = dir
	code := m.Run()
	dynamotest.Stop()
	os.RemoveAll(dir)
	os.Exit(code)
}

// build builds the Lambda bootstrap of pkg (relative to the module root) into out.
func build(out, pkg string) error {
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags", "-s -w", "-o", out, pkg)
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// proc is a running bootstrap.
type proc struct {
	name    string
	started time.Time
	out     *syncBuffer // stdout and stderr
	cmd     *exec.Cmd
}

// awsEnv is what a bootstrap needs to reach the AWS APIs of a test: a
// region, dummy credentials, no instance metadata, DynamoDB at dynamo.
func awsEnv(t *testing.T, dynamo string) map[string]string {
	return map[string]string{
		"PATH":                      os.Getenv("PATH"),
		"HOME":                      t.TempDir(),
		"AWS_REGION":                "us-east-1",
		"AWS_ACCESS_KEY_ID":         "catchup-test",
		"AWS_SECRET_ACCESS_KEY":     "catchup-test",
		"AWS_EC2_METADATA_DISABLED": "true",
		"AWS_ENDPOINT_URL_DYNAMODB": dynamo,
	}
}

// baseEnv is awsEnv and the variables Lambda and the template set, for a
// bootstrap the test starts itself (TestStartupTime).
func baseEnv(t *testing.T, dynamo, table string) map[string]string {
	e := awsEnv(t, dynamo)
	e["AWS_LAMBDA_LOG_FORMAT"] = "JSON"
	e[lambdaenv.EnvMemorySize] = "256"
	e[lambdaenv.EnvTable] = table
	e[lambdaenv.EnvService] = "e2e"
	return e
}

// start runs the bootstrap fn (a function name, or a path) as name
// against rt, with env, until the test ends.
func start(t *testing.T, fn, name string, rt *runtimeAPI, env map[string]string) *proc {
	t.Helper()
	p := &proc{name: name, out: &syncBuffer{}}
	if !filepath.IsAbs(fn) {
		fn = filepath.Join(bin, fn)
	}
	p.cmd = exec.Command(fn)
	var b [8]byte
	_, _ = rand.Read(b[:])
	env = maps.Clone(env)
	if file := recordAWS(t, filepath.Base(fn), env); file != "" {
		env[awsapi.EnvRecord] = file
	}
	env["AWS_LAMBDA_RUNTIME_API"] = rt.addr()
	env[lambdaenv.EnvFunctionName] = rt.function
	env[lambdaenv.EnvLogStreamName] = "2026/11/29/[$LATEST]" + hex.EncodeToString(b[:])
	for _, k := range slices.Sorted(maps.Keys(env)) {
		p.cmd.Env = append(p.cmd.Env, k+"="+env[k])
	}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
		if t.Failed() {
			t.Logf("output of %s:\n%s", name, p.out.String())
		}
	})
	return p
}

// checkOutput checks the EMF lines of ps against the specification and
// that no secret appears in anything they printed; it returns the documents.
func checkOutput(t *testing.T, secrets []string, ps ...*rieProc) []*emftest.Document {
	t.Helper()
	var docs []*emftest.Document
	for _, p := range ps {
		out := p.output()
		d, err := emftest.Lines([]byte(out))
		if err != nil {
			t.Errorf("%s: EMF lines break the specification: %v", p.name, err)
		}
		docs = append(docs, d...)
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("%s printed the secret %q", p.name, s)
			}
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if !strings.HasPrefix(line, "{") {
				t.Errorf("%s: a line of its output is not JSON: %s", p.name, line)
			}
		}
	}
	return docs
}

// cluster is an in-process Kafka cluster and a franz-go client of it.
type cluster struct {
	fake *kfake.Cluster
	cl   *kgo.Client
	opts []kgo.Opt // SASL, for the clients that read
	pad  int       // bytes of padding in each value seed writes; default 80
}

func newCluster(t *testing.T, clientOpts []kgo.Opt, opts ...kfake.Opt) *cluster {
	t.Helper()
	fc, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	t.Cleanup(fc.Close)
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(fc.ListenAddrs()...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0)}, clientOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &cluster{fake: fc, cl: cl, opts: clientOpts}
}

// newSCRAMCluster is newCluster with SASL/SCRAM-SHA-512 on, the user
// "replicator" with password a superuser, and the test's client logged in
// as it.
func newSCRAMCluster(t *testing.T, password string, opts ...kfake.Opt) *cluster {
	t.Helper()
	auth := scram.Auth{User: "replicator", Pass: password}.AsSha512Mechanism()
	return newCluster(t, []kgo.Opt{kgo.SASL(auth)}, append(opts, kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "replicator", password))...)
}

func (c *cluster) addr() string { return c.fake.ListenAddrs()[0] }

// seed produces n records to each of partitions of topic: keys, null keys,
// headers, tombstones and values of about 100 bytes; record i of a
// partition has timestamp ts(i).
func (c *cluster) seed(ctx context.Context, t *testing.T, topic string, partitions int32, n int, ts func(i int) time.Time) {
	t.Helper()
	var recs []*kgo.Record
	for p := range partitions {
		for i := range n {
			r := &kgo.Record{Topic: topic, Partition: p, Timestamp: ts(i),
				Value: fmt.Appendf(nil, "%s/%d/%d %s", topic, p, i, strings.Repeat("x", cmp.Or(c.pad, 80)))}
			switch i % 7 {
			case 0:
				r.Key = nil
			case 3:
				r.Key, r.Value = fmt.Appendf(nil, "k%d", i), nil // a tombstone
			default:
				r.Key = fmt.Appendf(nil, "k%d", i%13)
				r.Headers = []kgo.RecordHeader{{Key: "h", Value: []byte{byte(i)}}}
			}
			recs = append(recs, r)
		}
	}
	if err := c.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("seed %s: %v", topic, err)
	}
}

// read returns every record of topic's partitions, by partition.
func (c *cluster) read(ctx context.Context, t *testing.T, topic string, partitions int32) map[int32][]*kgo.Record {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for p := range partitions {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = p, -1, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	res, err := req.RequestWith(ctx, c.cl)
	if err != nil {
		t.Fatalf("list offsets of %s: %v", topic, err)
	}
	ends := map[int32]int64{}
	consume := map[string]map[int32]kgo.Offset{topic: {}}
	for _, rp := range res.Topics[0].Partitions {
		if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
			t.Fatalf("list offsets of %s/%d: %v", topic, rp.Partition, err)
		}
		if rp.Offset > 0 {
			ends[rp.Partition] = rp.Offset
			consume[topic][rp.Partition] = kgo.NewOffset().At(0)
		}
	}
	out := map[int32][]*kgo.Record{}
	if len(ends) == 0 {
		return out
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.addr()), kgo.ConsumePartitions(consume),
		kgo.FetchMaxWait(100 * time.Millisecond)}, c.opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for len(ends) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %s: %v", topic, ctx.Err())
		}
		fs.EachError(func(_ string, p int32, err error) { t.Fatalf("read %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			out[r.Partition] = append(out[r.Partition], r)
			if r.Offset+1 >= ends[r.Partition] {
				delete(ends, r.Partition)
			}
		})
	}
	return out
}

// checkCopy checks that dst holds exactly the records of src, in order,
// each with its key (nil apart from empty), value, timestamp and headers
// and one provenance header naming its source offset.
func checkCopy(t *testing.T, what string, src, dst []*kgo.Record) {
	t.Helper()
	if len(dst) != len(src) {
		t.Errorf("%s: %d records in the target, want %d", what, len(dst), len(src))
	}
	for i := range min(len(src), len(dst)) {
		s, d := src[i], dst[i]
		hs := d.Headers
		if len(hs) == 0 || hs[len(hs)-1].Key != catchup.ProvenanceHeader {
			t.Errorf("%s: target record %d has no provenance header", what, i)
			continue
		}
		pv, err := catchup.ParseProvenance(hs[len(hs)-1].Value)
		if err != nil || pv.Offset != s.Offset {
			t.Errorf("%s: target record %d has provenance %q, want source offset %d", what, i, hs[len(hs)-1].Value, s.Offset)
		}
		same := (s.Key == nil) == (d.Key == nil) && bytes.Equal(s.Key, d.Key) &&
			(s.Value == nil) == (d.Value == nil) && bytes.Equal(s.Value, d.Value) &&
			s.Timestamp.Equal(d.Timestamp) && len(hs)-1 == len(s.Headers)
		for j := range s.Headers {
			same = same && j < len(hs)-1 && s.Headers[j].Key == hs[j].Key && bytes.Equal(s.Headers[j].Value, hs[j].Value)
		}
		if !same {
			t.Errorf("%s: target record %d = %q/%q %s %v, want %q/%q %s %v", what, i, d.Key, d.Value, d.Timestamp, hs, s.Key, s.Value, s.Timestamp, s.Headers)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for a writing process and a reader.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
