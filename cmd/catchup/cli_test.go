package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
	"github.com/kafka-catchup/catchup/internal/checkpoint/filestore"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/pipeline"
)

// The CLI tests call run, the CLI's entry, in process, against kfake
// clusters started by each test, with a file store in t.TempDir.

const (
	cliTopic     = "orders"
	cliParts     = 3
	cliPerPart   = 120
	cliSrcName   = "cli-src"
	cliPipeline  = "cli"
	cliTimeout   = 60 * time.Second
	cliFetchSize = 4096 // several fetches per window
)

// cliEnv is a source and a target cluster, a store directory and a
// configuration file that copies the source into the target.
type cliEnv struct {
	src, dst *kfake.Cluster
	dir      string
	cfg      string // path of the configuration file
	// dynamo and table are the DynamoDB client and table of a test
	// that uses the DynamoDB store (dynamoStore).
	dynamo *dynamodb.Client
	table  string
}

// TestMain stops the DynamoDB test server, if a test started it.
func TestMain(m *testing.M) { dynamotest.Main(m) }

func newCLIEnv(t *testing.T) *cliEnv {
	t.Helper()
	e := &cliEnv{dir: t.TempDir()}
	e.src = newFake(t)
	e.dst = newFake(t)
	seedCLI(t, e.src.ListenAddrs())
	e.cfg = e.writeConfig(t, "pipelines.yaml", e.dst.ListenAddrs()[0])
	return e
}

func newFake(t *testing.T) *kfake.Cluster {
	t.Helper()
	// SleepOutOfOrder: kfake's in-order sleep queue races (internal/crashtest's
	// TestSleepOutOfOrder says why, and that order holds anyway).
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(cliParts, cliTopic), kfake.SleepOutOfOrder())
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// writeConfig writes a configuration named name that copies the source to
// the target at dst, with the env's store, and returns its path.
func (e *cliEnv) writeConfig(t *testing.T, name, dst string) string {
	t.Helper()
	return e.writeConfigStore(t, name, dst, "file://"+filepath.Join(e.dir, "store"))
}

// writeConfigStore is writeConfig with another store.
func (e *cliEnv) writeConfigStore(t *testing.T, name, dst, store string) string {
	t.Helper()
	yaml := fmt.Sprintf(`store: %s
pipelines:
  - name: %s
    source: {name: %s, brokers: [%s]}
    target: {name: cli-dst, brokers: [%s]}
    topics: {include: [%s]}
    commit_interval: 20ms
    fetch_bytes: %d
    producer: {batch_records: 25}
`, store, cliPipeline, cliSrcName, e.src.ListenAddrs()[0], dst, cliTopic, cliFetchSize)
	path := filepath.Join(e.dir, name)
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// seedCLI writes cliPerPart records to every partition of cliTopic: keys,
// null keys, null and empty values, headers and timestamps.
func seedCLI(t *testing.T, brokers []string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(0), kgo.DisableIdempotentWrite())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var recs []*kgo.Record
	for p := range int32(cliParts) {
		for i := range cliPerPart {
			r := &kgo.Record{Topic: cliTopic, Partition: p,
				Key:       []byte(fmt.Sprintf("k-%d-%d", p, i)),
				Value:     []byte(strings.Repeat(fmt.Sprintf("v %d/%d;", p, i), 1+i%5)),
				Timestamp: base.Add(time.Duration(i) * time.Second),
				Headers:   []kgo.RecordHeader{{Key: "seq", Value: []byte(strconv.Itoa(i))}},
			}
			switch i % 7 {
			case 2:
				r.Key = nil
			case 4:
				r.Value = nil
			case 5:
				r.Value = []byte{}
			}
			recs = append(recs, r)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("seed the source: %v", err)
	}
}

// cli runs the command line args with stdin in and returns the exit code
// and what was written to stdout and stderr.
func cli(t *testing.T, in string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), cliTimeout)
	defer cancel()
	var out, errOut bytes.Buffer
	code = run(ctx, args, strings.NewReader(in), &out, &errOut)
	return code, out.String(), errOut.String()
}

// mustCLI runs args and fails the test unless the exit code is want.
func mustCLI(t *testing.T, want int, in string, args ...string) (stdout, stderr string) {
	t.Helper()
	code, stdout, stderr := cli(t, in, args...)
	if code != want {
		t.Fatalf("catchup %s: exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, stdout, stderr)
	}
	return stdout, stderr
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	badKey := filepath.Join(dir, "bad.yaml")
	// max_record (line 8) is a misspelling of max_records, the only problem.
	if err := os.WriteFile(badKey, []byte(`store: file://`+filepath.Join(dir, "store")+`
pipelines:
  - name: p
    source: {brokers: ["127.0.0.1:1"]}
    target: {brokers: ["127.0.0.1:2"]}
    topics: {include: [orders]}
    window:
      max_record: 10
`), 0o600); err != nil {
		t.Fatal(err)
	}
	noPassword := filepath.Join(dir, "nopw.yaml")
	if err := os.WriteFile(noPassword, []byte(`store: file://`+filepath.Join(dir, "store")+`
pipelines:
  - name: p
    source: {brokers: ["127.0.0.1:1"], sasl: {mechanism: PLAIN, username: u, password_env: CATCHUP_TEST_UNSET_PASSWORD}}
    target: {brokers: ["127.0.0.1:2"]}
    topics: {include: [orders]}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "nowhere", "pipelines.yaml")
	// unreachable is valid, with brokers nothing listens on: the flags must
	// be refused before anything connects.
	unreachable := filepath.Join(dir, "unreachable.yaml")
	if err := os.WriteFile(unreachable, []byte(`store: file://`+filepath.Join(dir, "store")+`
pipelines:
  - name: p
    source: {brokers: ["127.0.0.1:1"]}
    target: {brokers: ["127.0.0.1:2"]}
    topics: {include: [orders]}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want []string // in stderr
	}{
		{"unknown config key", []string{"run", "-c", badKey},
			[]string{badKey + ":8:7: pipelines[0] (p): window: unknown key \"max_record\" (did you mean \"max_records\"?)"}},
		{"unknown config key in plan", []string{"plan", "-c", badKey},
			[]string{badKey + ":8:7:", `did you mean "max_records"?`}},
		{"missing config file", []string{"status", "-c", missing},
			[]string{missing, "no such file"}},
		{"unknown command", []string{"frobnicate"}, []string{"unknown command", "frobnicate"}},
		{"mistyped command", []string{"rnu"}, []string{"unknown command", `did you mean "run"?`}},
		{"positional argument", []string{"status", "extra"}, []string{`unknown command "extra"`}},
		{"positional argument to run", []string{"run", "-c", badKey, "extra"}, []string{`"extra"`}},
		{"unset password_env", []string{"plan", "-c", noPassword}, []string{noPassword + ":4:78: ", "pipelines[0] (p): source.sasl.password_env: environment variable CATCHUP_TEST_UNSET_PASSWORD is not set"}},
		{"bad flag", []string{"run", "--frobnicate"}, []string{"unknown flag", "--frobnicate"}},
		{"bad flag value", []string{"reset", "--partition", "x"}, []string{"partition", `"x"`}},
		{"reset without --to", []string{"reset", "-c", badKey, "--pipeline", "p", "--topic", "t"}, []string{"--to"}},
		{"verify --to below --from", []string{"verify", "-c", unreachable, "--from", "10", "--to", "5"},
			[]string{"--to 5 is not after --from 10"}},
		{"verify --to at --from", []string{"verify", "-c", unreachable, "--from", "10", "--to", "10"},
			[]string{"--to 10 is not after --from 10"}},
		{"verify times out of order", []string{"verify", "-c", unreachable, "--from", "2026-11-02T00:00:00Z", "--to", "2026-11-01T00:00:00Z"},
			[]string{"--to 2026-11-01T00:00:00Z is not after --from 2026-11-02T00:00:00Z"}},
		{"verify bad --from", []string{"verify", "-c", unreachable, "--from", "-3"}, []string{`--from "-3"`, "an offset (0 or more)"}},
		{"verify bad --to", []string{"verify", "-c", unreachable, "--to", "yesterday"}, []string{`--to "yesterday"`}},
		{"reset bad --to", []string{"reset", "-c", unreachable, "--pipeline", "p", "--topic", "orders", "--to", "bogus", "--yes"},
			[]string{`--to "bogus": use earliest, latest, an offset (0 or more), or an RFC 3339 timestamp`}},
		{"reset negative --partition", []string{"reset", "-c", unreachable, "--pipeline", "p", "--topic", "orders", "--partition", "-1", "--to", "0", "--yes"},
			[]string{"--partition -1: a partition number is 0 or more"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := cli(t, "", tt.args...)
			if code != exitUsage {
				t.Fatalf("catchup %v: exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", tt.args, code, exitUsage, stdout, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("catchup %v: stderr %q does not contain %q", tt.args, stderr, w)
				}
			}
		})
	}
}

// TestResetNoSuchPartition: a reset of a topic or partition the source
// does not have is bad usage that says what the source has, and stores nothing.
func TestResetNoSuchPartition(t *testing.T) {
	e := newCLIEnv(t)
	cfg := e.writeConfigWith(t, "ord.yaml", "file://"+filepath.Join(e.dir, "store"), "ord.*", "") // selects ordres too
	tests := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"no such topic", []string{"--topic", "ordres"}, fmt.Sprintf("--topic ordres: the source cluster %s has no such topic", cliSrcName)},
		{"no such partition", []string{"--topic", cliTopic, "--partition", "7"},
			fmt.Sprintf("--partition 7: topic %s has partitions 0 to %d on the source", cliTopic, cliParts-1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"reset", "-c", cfg, "--pipeline", cliPipeline, "--to", "0", "--yes"}, tt.args...)
			_, stderr := mustCLI(t, exitUsage, "", args...)
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("catchup %v: stderr %q does not contain %q", args, stderr, tt.want)
			}
			if cps := loadCheckpoints(t, e); len(cps) != 0 {
				t.Errorf("catchup %v stored checkpoints %v, want none", args, cps)
			}
		})
	}
}

// TestResetTopicNotCopied: a reset of a topic the source has but the
// pipeline does not copy is bad usage that names the pipeline's topics; it
// stores no checkpoint that no run would read and status would not show.
func TestResetTopicNotCopied(t *testing.T) {
	e := newCLIEnv(t)
	cfg := e.writeConfigWith(t, "payments.yaml", "file://"+filepath.Join(e.dir, "store"), "payments", "")
	args := []string{"reset", "-c", cfg, "--pipeline", cliPipeline, "--topic", cliTopic, "--to", "0", "--yes"}
	_, stderr := mustCLI(t, exitUsage, "", args...)
	want := fmt.Sprintf(`--topic %s: pipeline %s does not copy this topic (its topics: include ["payments"]); `+
		"add it to the pipeline's topics first", cliTopic, cliPipeline)
	if !strings.Contains(stderr, want) {
		t.Errorf("catchup %v: stderr %q does not contain %q", args, stderr, want)
	}
	if cps := loadCheckpoints(t, e); len(cps) != 0 {
		t.Errorf("catchup %v stored checkpoints %v, want none", args, cps)
	}
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "troubleshooting.md"))
	if err != nil {
		t.Fatal(err)
	}
	if form := "`--topic T: pipeline P does not copy this topic (its topics: include [...])`"; !strings.Contains(string(doc), form) {
		t.Errorf("docs/troubleshooting.md has no row for %s", form)
	}
}

func TestOwnerFlag(t *testing.T) {
	t.Setenv("CATCHUP_OWNER", "from-env")
	a := &app{}
	root := a.root()
	if err := root.ParseFlags(nil); err != nil {
		t.Fatal(err)
	}
	if a.owner != "from-env" {
		t.Errorf("owner from CATCHUP_OWNER = %q, want from-env", a.owner)
	}
	if err := root.ParseFlags([]string{"--owner", "from-flag"}); err != nil {
		t.Fatal(err)
	}
	if a.owner != "from-flag" {
		t.Errorf("owner from --owner = %q, want from-flag (the flag wins over the environment)", a.owner)
	}
}

// TestOwnerTakesBackItsLease plays what --owner is for: with DynamoDB, the
// leases of a killed process stay live for lease_duration; a run under
// another owner id leaves those partitions alone, and a run under the killed
// process's id (--owner or CATCHUP_OWNER) takes them back at once and fences
// the old holder.
func TestOwnerTakesBackItsLease(t *testing.T) {
	e := newCLIEnv(t)
	cfg := e.writeConfigStore(t, "dynamo.yaml", e.dst.ListenAddrs()[0], dynamoStore(t, e))

	// Two processes, killed while they held partitions 1 and 2.
	st := dynamostore.New(e.dynamo, e.table)
	old := map[int32]checkpoint.Lease{}
	for p, owner := range map[int32]string{1: "killed-a", 2: "killed-b"} {
		l, _, err := st.Acquire(t.Context(), cliPipeline, catchup.Partition{Topic: cliTopic, Partition: p}, owner, 20*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		old[p] = l
	}
	copied := func(rep reportJSONT) map[int32]string {
		out := map[int32]string{}
		for _, r := range rep.Partitions {
			out[r.Partition] = fmt.Sprintf("%s %d", r.Status, r.Copied)
		}
		return out
	}
	want := func(run string, got map[int32]string, want ...string) {
		t.Helper()
		for p, w := range want {
			if got[int32(p)] != w {
				t.Errorf("%s: partition %d: %q, want %q", run, p, got[int32(p)], w)
			}
		}
	}
	full, none := fmt.Sprintf("done %d", cliPerPart), "done 0"

	// A run under a new owner id copies partition 0 only, and exits 1:
	// the leased partitions' lag is left.
	want("run with the default owner", copied(runJSONExit(t, exitFailure, cfg)), full, "leased 0", "leased 0")
	// The killed processes' ids take their partitions back at once.
	want("run --owner killed-a", copied(runJSONExit(t, exitFailure, cfg, "--owner", "killed-a")), none, full, "leased 0")
	t.Setenv("CATCHUP_OWNER", "killed-b")
	want("run with CATCHUP_OWNER=killed-b", copied(runJSON(t, cfg)), none, none, full)

	// The take-over incremented the epochs: the old holders are fenced.
	for p, l := range old {
		err := st.Commit(t.Context(), l, checkpoint.Commit{Next: cliPerPart + 1, TargetEnd: -1})
		if !errors.Is(err, checkpoint.ErrFenced) {
			t.Errorf("commit under the lease partition %d had before the take-over: %v, want checkpoint.ErrFenced", p, err)
		}
	}
	stdout, _ := mustCLI(t, exitOK, "", "verify", "-c", cfg)
	if !strings.Contains(stdout, "exact copy") {
		t.Errorf("verify:\n%s", stdout)
	}
	// verify recorded its results in DynamoDB.
	for p, r := range statusJSON(t, cfg) {
		if v := r.Verification; v == nil || !v.OK || v.To != cliPerPart || v.Matched != cliPerPart {
			t.Errorf("status --json after verify: partition %d last_verification %+v, want ok over [0, %d)", p, v, cliPerPart)
		}
	}
}

// statusJSON runs status --json and returns the rows of cliPipeline by partition.
func statusJSON(t *testing.T, cfg string) map[int32]statusRow {
	t.Helper()
	stdout, _ := mustCLI(t, exitOK, "", "status", "--json", "-c", cfg)
	st := decodeOne[statusJSONT](t, stdout, "status")
	if st.Pipeline != cliPipeline {
		t.Errorf("status --json: pipeline %q, want %q", st.Pipeline, cliPipeline)
	}
	rows := map[int32]statusRow{}
	for _, r := range st.Partitions {
		if r.Topic != cliTopic {
			t.Errorf("status lists topic %q, want only %q", r.Topic, cliTopic)
		}
		rows[r.Partition] = r
	}
	if len(rows) != cliParts {
		t.Fatalf("status --json lists %d partitions of pipeline %s, want %d:\n%s", len(rows), cliPipeline, cliParts, stdout)
	}
	return rows
}

// runJSON runs run --json with args and returns its report.
func runJSON(t *testing.T, cfg string, args ...string) reportJSONT {
	t.Helper()
	return runJSONExit(t, exitOK, cfg, args...)
}

// runJSONExit is runJSON for a run that must exit with code.
func runJSONExit(t *testing.T, code int, cfg string, args ...string) reportJSONT {
	t.Helper()
	stdout, _ := mustCLI(t, code, "", append([]string{"run", "--json", "-c", cfg}, args...)...)
	rep := decodeOne[reportJSONT](t, stdout, "run")
	if len(rep.Partitions) != cliParts {
		t.Fatalf("run --json reports %d partitions, want %d:\n%s", len(rep.Partitions), cliParts, stdout)
	}
	return rep
}

func TestRunPlanStatusReset(t *testing.T) {
	e := newCLIEnv(t)

	// plan: one window per partition, [0, cliPerPart), with a size estimate.
	stdout, _ := mustCLI(t, exitOK, "", "plan", "-c", e.cfg)
	for _, h := range []string{"TOPIC", "PARTITION", "FROM", "TO", "RECORDS", "EST_BYTES"} {
		if !strings.Contains(stdout, h) {
			t.Errorf("plan output lacks column %s:\n%s", h, stdout)
		}
	}
	for p := range cliParts {
		row := regexp.MustCompile(fmt.Sprintf(`(?m)^%s\s+%d\s+0\s+%d\s+%d\s+(\d+(\.\d+)? [KM]?i?B)`, cliTopic, p, cliPerPart, cliPerPart))
		m := row.FindStringSubmatch(stdout)
		if m == nil {
			t.Errorf("plan has no row %s %d 0 %d %d <bytes>:\n%s", cliTopic, p, cliPerPart, cliPerPart, stdout)
		} else if strings.HasPrefix(m[1], "0 ") {
			t.Errorf("plan estimates %s for partition %d, want more than 0", m[1], p)
		}
	}
	if want := fmt.Sprintf("%d partitions, %d records", cliParts, cliParts*cliPerPart); !strings.Contains(stdout, want) {
		t.Errorf("plan output lacks %q:\n%s", want, stdout)
	}

	// run: copies everything and prints the table.
	stdout, _ = mustCLI(t, exitOK, "", "run", "-c", e.cfg, "--owner", "cli-test")
	if !strings.Contains(stdout, "TOPIC") || !strings.Contains(stdout, "STATUS") {
		t.Errorf("run prints no table:\n%s", stdout)
	}
	if want := fmt.Sprintf("copied %d records", cliParts*cliPerPart); !strings.Contains(stdout, want) {
		t.Errorf("run output lacks %q:\n%s", want, stdout)
	}
	if n := strings.Count(stdout, " done "); n != cliParts {
		t.Errorf("run reports %d partitions done, want %d:\n%s", n, cliParts, stdout)
	}

	// A second run has nothing to copy.
	stdout, _ = mustCLI(t, exitOK, "", "run", "-c", e.cfg)
	if !strings.Contains(stdout, "copied 0 records") {
		t.Errorf("second run output lacks %q:\n%s", "copied 0 records", stdout)
	}

	// status: checkpoint at the source end, no lag, no lease left.
	for p, r := range statusJSON(t, e.cfg) {
		if r.Checkpoint == nil || *r.Checkpoint != r.SourceEnd || r.SourceEnd != cliPerPart || r.Lag != 0 || r.Records != cliPerPart {
			t.Errorf("status of partition %d: checkpoint %v, source end %d, lag %d, records %d; want checkpoint = source end = %d, lag 0, records %d",
				p, ptrString(r.Checkpoint), r.SourceEnd, r.Lag, r.Records, cliPerPart, cliPerPart)
		}
		if r.Owner != "" {
			t.Errorf("status of partition %d: lease held by %q after the runs ended", p, r.Owner)
		}
	}
	stdout, _ = mustCLI(t, exitOK, "", "status", "-c", e.cfg)
	if !strings.Contains(stdout, "total lag 0 records") {
		t.Errorf("status output lacks %q:\n%s", "total lag 0 records", stdout)
	}
	stdout, _ = mustCLI(t, exitOK, "", "verify", "-c", e.cfg)
	if want := fmt.Sprintf("exact copy: %d of %d source records matched", cliParts*cliPerPart, cliParts*cliPerPart); !strings.Contains(stdout, want) {
		t.Errorf("verify output lacks %q:\n%s", want, stdout)
	}

	// reset, not confirmed: nothing changes, exit 2.
	code, stdout, stderr := cli(t, "n\n", "reset", "-c", e.cfg, "--pipeline", cliPipeline, "--topic", cliTopic, "--to", "earliest", "--allow-duplicates")
	if code != exitUsage || !strings.Contains(stdout, "apply? [y/N]") || !strings.Contains(stderr, "nothing changed") {
		t.Errorf("reset answered n: exit code %d, want %d, with the question and \"nothing changed\"\nstdout:\n%s\nstderr:\n%s", code, exitUsage, stdout, stderr)
	}
	for p, r := range statusJSON(t, e.cfg) {
		if r.Checkpoint == nil || *r.Checkpoint != cliPerPart {
			t.Errorf("after a reset answered n, partition %d has checkpoint %s, want %d", p, ptrString(r.Checkpoint), cliPerPart)
		}
	}

	// reset below the copies the target holds: refused, exit 2, each
	// partition named with the position that copies nothing twice.
	code, _, stderr = cli(t, "", "reset", "-c", e.cfg, "--pipeline", cliPipeline, "--topic", cliTopic, "--to", "earliest", "--yes")
	want := fmt.Sprintf("%s/1: the target already holds copies up to source offset %d; a reset to 0 would copy %d records twice",
		cliTopic, cliPerPart-1, cliPerPart)
	if code != exitUsage || !strings.Contains(stderr, want) || !strings.Contains(stderr, "--allow-duplicates") {
		t.Errorf("reset below the target's copies: exit code %d, want %d, with %q and --allow-duplicates\nstderr:\n%s", code, exitUsage, want, stderr)
	}
	for p, r := range statusJSON(t, e.cfg) {
		if r.Checkpoint == nil || *r.Checkpoint != cliPerPart {
			t.Errorf("after a refused reset, partition %d has checkpoint %s, want %d", p, ptrString(r.Checkpoint), cliPerPart)
		}
	}

	// reset --yes --allow-duplicates to earliest: checkpoints go back to 0.
	stdout, _ = mustCLI(t, exitOK, "", "reset", "-c", e.cfg, "--pipeline", cliPipeline, "--topic", cliTopic, "--to", "earliest", "--yes", "--allow-duplicates")
	if want := fmt.Sprintf("reset %d partitions", cliParts); !strings.Contains(stdout, want) {
		t.Errorf("reset output lacks %q:\n%s", want, stdout)
	}
	for p, r := range statusJSON(t, e.cfg) {
		if r.Checkpoint == nil || *r.Checkpoint != 0 || r.Lag != cliPerPart {
			t.Errorf("after reset --to earliest, partition %d has checkpoint %s and lag %d, want 0 and %d", p, ptrString(r.Checkpoint), r.Lag, cliPerPart)
		}
	}

	// A reset forgets the target end offset (checkpoint.Store.Reset): after
	// a recreated source topic, the target's records carry provenance
	// offsets of the old topic, and reconciling with them would skip new
	// records. So the next run copies the window again, deliberately, and
	// verify reports every record of the replayed range as duplicated.
	rep := runJSON(t, e.cfg)
	for _, r := range rep.Partitions {
		if r.Copied != cliPerPart || r.Skipped != 0 || r.Reconciled != 0 || r.Next != cliPerPart || r.Status != "done" {
			t.Errorf("run after reset, partition %d: copied %d, skipped %d, reconciled %d, next %d, status %s; want copied %d, skipped 0, reconciled 0, next %d, done",
				r.Partition, r.Copied, r.Skipped, r.Reconciled, r.Next, r.Status, cliPerPart, cliPerPart)
		}
	}
	if ends := targetEnds(t, e.dst.ListenAddrs()[0]); fmt.Sprint(ends) != fmt.Sprint([]int64{2 * cliPerPart, 2 * cliPerPart, 2 * cliPerPart}) {
		t.Errorf("target end offsets after the run that followed the reset: %v, want %d in every partition", ends, 2*cliPerPart)
	}
	stdout, _ = mustCLI(t, exitFailure, "", "verify", "-c", e.cfg)
	for p := range cliParts {
		row := fmt.Sprintf(`(?m)^%s\s+%d\s+0\s+%d\s+%d\s+%d\s+0\s+%d\s+0\s+0\b`, cliTopic, p, cliPerPart, cliPerPart, cliPerPart, cliPerPart)
		if !regexp.MustCompile(row).MatchString(stdout) {
			t.Errorf("verify after the replay: no row for partition %d with %d matched and %d duplicated:\n%s", p, cliPerPart, cliPerPart, stdout)
		}
	}

	// Once the replay is committed, a further run copies nothing, and a
	// crash would reconcile from the target end recorded after the reset.
	st, err := filestore.Open(filepath.Join(e.dir, "store"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cps, err := st.Load(t.Context(), cliPipeline)
	st.Close()
	if err != nil || len(cps) != cliParts {
		t.Fatalf("load checkpoints: %d, %v; want %d", len(cps), err, cliParts)
	}
	for _, c := range cps {
		if c.Next != cliPerPart || c.TargetEnd != 2*cliPerPart {
			t.Errorf("checkpoint of %s after the replay: next %d, target end %d; want %d, %d", c.Partition, c.Next, c.TargetEnd, cliPerPart, 2*cliPerPart)
		}
	}
	rep = runJSON(t, e.cfg)
	for _, r := range rep.Partitions {
		if r.Copied != 0 || r.Status != "done" {
			t.Errorf("run after the replay, partition %d: copied %d, status %s; want 0, done", r.Partition, r.Copied, r.Status)
		}
	}
}

func ptrString(p *int64) string {
	if p == nil {
		return "none"
	}
	return strconv.FormatInt(*p, 10)
}

// targetEnds returns the end offsets of cliTopic's partitions on the cluster at addr.
func targetEnds(t *testing.T, addr string) []int64 {
	t.Helper()
	dst, err := pipeline.ConnectWriter(config.Cluster{Name: "t", Brokers: []string{addr}}, config.DefaultProducer())
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	var parts []catchup.Partition
	for p := range int32(cliParts) {
		parts = append(parts, catchup.Partition{Topic: cliTopic, Partition: p})
	}
	ends, err := dst.EndOffsets(t.Context(), parts)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int64, len(parts))
	for i, p := range parts {
		out[i] = ends[p]
	}
	return out
}

// TestVerifyDetects copies the source with catchup, then builds a second
// target from the first one's records with one record of partition 1
// removed, duplicated or modified, and verifies against it.
func TestVerifyDetects(t *testing.T) {
	e := newCLIEnv(t)
	mustCLI(t, exitOK, "", "run", "-c", e.cfg)
	copied := readAll(t, e.dst.ListenAddrs()[0])

	const victim = 57 // a source offset of partition 1; its copy is at the same target offset
	tests := []struct {
		name   string
		tamper func(recs []catchup.Record) []catchup.Record
		// want is the MISSING, DUPLICATED and DIFFERING counts of partition 1.
		missing, duplicated, differing int
	}{
		{"exact", func(recs []catchup.Record) []catchup.Record { return recs }, 0, 0, 0},
		{"removed", func(recs []catchup.Record) []catchup.Record {
			return slices.Concat(recs[:victim], recs[victim+1:])
		}, 1, 0, 0},
		{"duplicated", func(recs []catchup.Record) []catchup.Record {
			return slices.Concat(recs[:victim+1], recs[victim:]) // recs[victim] twice
		}, 0, 1, 0},
		{"modified", func(recs []catchup.Record) []catchup.Record {
			out := slices.Clone(recs)
			out[victim].Value = append([]byte("tampered "), out[victim].Value...)
			return out
		}, 0, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := newFake(t)
			for p := range int32(cliParts) {
				recs := copied[p]
				if p == 1 {
					recs = tt.tamper(recs)
				}
				writeAll(t, dst.ListenAddrs()[0], catchup.Partition{Topic: cliTopic, Partition: p}, recs)
			}
			cfg := e.writeConfig(t, tt.name+".yaml", dst.ListenAddrs()[0])
			want := exitFailure
			if tt.missing+tt.duplicated+tt.differing == 0 {
				want = exitOK
			}
			before := loadCheckpoints(t, e)
			start := time.Now()
			stdout, _ := mustCLI(t, want, "", "verify", "-c", cfg)
			end := time.Now()
			for p := range cliParts {
				var m, d, f int
				if p == 1 {
					m, d, f = tt.missing, tt.duplicated, tt.differing
				}
				matched := cliPerPart - m - f
				// TOPIC PARTITION FROM TO SOURCE MATCHED MISSING DUPLICATED DIFFERING OUT_OF_ORDER
				row := fmt.Sprintf(`(?m)^%s\s+%d\s+0\s+%d\s+%d\s+%d\s+%d\s+%d\s+%d\s+0\b`, cliTopic, p, cliPerPart, cliPerPart, matched, m, d, f)
				if !regexp.MustCompile(row).MatchString(stdout) {
					t.Errorf("verify: no row for partition %d with matched %d, missing %d, duplicated %d, differing %d, out of order 0:\n%s", p, matched, m, d, f, stdout)
				}
			}
			verdict := "exact copy"
			if want != exitOK {
				verdict = "MISMATCH"
			}
			if !strings.Contains(stdout, verdict) {
				t.Errorf("verify output lacks %q:\n%s", verdict, stdout)
			}
			if want != exitOK && !strings.Contains(stdout, fmt.Sprintf("source offset %d", victim)) {
				t.Errorf("verify does not name source offset %d as the first problem:\n%s", victim, stdout)
			}

			// verify recorded each partition's result, and nothing else.
			after := loadCheckpoints(t, e)
			if d := cmp.Diff(before, after, cmpopts.IgnoreFields(checkpoint.Checkpoint{}, "LastVerification"), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("verify changed the checkpoints beyond their verification (-before +after):\n%s", d)
			}
			rows := statusJSON(t, cfg)
			stdout, _ = mustCLI(t, exitOK, "", "status", "-c", cfg)
			if !regexp.MustCompile(`(?m)^TOPIC\s.*\sGAPS\s+VERIFIED\s+LAST_ERROR$`).MatchString(stdout) {
				t.Errorf("status has no VERIFIED column:\n%s", stdout)
			}
			for p := range int32(cliParts) {
				var m, d, f int64
				if p == 1 {
					m, d, f = int64(tt.missing), int64(tt.duplicated), int64(tt.differing)
				}
				// A record modified in place has only a differing copy: it
				// is replaced. The target holds one copy less for a removed
				// record, one more for a duplicated one.
				wantV := checkpoint.Verification{From: 0, To: cliPerPart, Source: cliPerPart, Matched: cliPerPart - m - f, Missing: m, Duplicated: d, Differing: f,
					Replaced: f, Target: cliPerPart - m + d}
				stored := after[p].LastVerification
				if stored == nil {
					t.Errorf("verify stored no verification for partition %d", p)
					continue
				}
				if stored.At.Before(start.Truncate(time.Millisecond)) || stored.At.After(end) {
					t.Errorf("verification of partition %d at %s, want between %s and %s", p, stored.At, start, end)
				}
				switch wantFirst := fmt.Sprintf("source offset %d", victim); {
				case m+d+f == 0 && stored.First != "":
					t.Errorf("verification of partition %d, an exact copy, names a first problem: %q", p, stored.First)
				case m+d+f != 0 && !strings.Contains(stored.First, wantFirst):
					t.Errorf("verification of partition %d names first problem %q, want one naming %q", p, stored.First, wantFirst)
				}
				got := *stored
				got.At, got.First = time.Time{}, ""
				if diff := cmp.Diff(wantV, got); diff != "" {
					t.Errorf("stored verification of partition %d mismatch (-want +got):\n%s", p, diff)
				}

				r := rows[p].Verification
				if r == nil || r.OK != (m+d+f == 0) || r.From != 0 || r.To != cliPerPart || r.Source != cliPerPart ||
					r.Matched != wantV.Matched || r.Missing != m || r.Duplicated != d || r.Differing != f || r.OutOfOrder != 0 ||
					r.First != stored.First || !r.At.Equal(stored.At) {
					t.Errorf("status --json: last_verification of partition %d = %+v, want %+v", p, r, stored)
				}
				const minute = `\d{4}-\d\d-\d\dT\d\d:\d\dZ`
				cell := "ok " + minute
				switch {
				case m != 0:
					cell = "MISMATCH " + minute + ": 1 missing"
				case d != 0:
					cell = "MISMATCH " + minute + ": 1 duplicated"
				case f != 0:
					cell = "MISMATCH " + minute + ": 1 differing"
				}
				// TOPIC PARTITION CHECKPOINT SOURCE_END LAG COPIED SINCE_UPDATE LEASE GAPS VERIFIED
				row := fmt.Sprintf(`(?m)^%s\s+%d\s+%d\s+%d\s+0\s+%d\s+\d\S*s\s+-\s+0\s+%s\s*$`, cliTopic, p, cliPerPart, cliPerPart, cliPerPart, cell)
				if !regexp.MustCompile(row).MatchString(stdout) {
					t.Errorf("status: no row for partition %d with VERIFIED matching %q:\n%s", p, cell, stdout)
				}
			}
		})
	}
}

// loadCheckpoints returns the checkpoints of cliPipeline in e's file store, by
// partition number.
func loadCheckpoints(t *testing.T, e *cliEnv) map[int32]checkpoint.Checkpoint {
	t.Helper()
	st, err := filestore.Open(filepath.Join(e.dir, "store"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cps, err := st.Load(t.Context(), cliPipeline)
	if err != nil {
		t.Fatalf("load checkpoints: %v", err)
	}
	out := map[int32]checkpoint.Checkpoint{}
	for _, c := range cps {
		out[c.Partition.Partition] = c
	}
	return out
}

// readAll returns every record of cliTopic on the cluster at addr, by partition.
func readAll(t *testing.T, addr string) map[int32][]catchup.Record {
	t.Helper()
	src, err := pipeline.ConnectReader(config.Cluster{Name: "t", Brokers: []string{addr}}, "read_uncommitted")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	out := map[int32][]catchup.Record{}
	for p := range int32(cliParts) {
		part := catchup.Partition{Topic: cliTopic, Partition: p}
		for off := int64(0); off < cliPerPart; {
			f, err := src.Fetch(t.Context(), part, off, 1<<20)
			if err != nil {
				t.Fatalf("read %s at %d: %v", part, off, err)
			}
			if f.Next <= off {
				t.Fatalf("read %s at %d: nothing, want %d records", part, off, cliPerPart)
			}
			out[p] = append(out[p], f.Records...)
			off = f.Next
		}
		if len(out[p]) != cliPerPart {
			t.Fatalf("read %d records from %s, want %d", len(out[p]), part, cliPerPart)
		}
	}
	return out
}

// writeAll produces recs to p on the cluster at addr, as they are.
func writeAll(t *testing.T, addr string, p catchup.Partition, recs []catchup.Record) {
	t.Helper()
	dst, err := pipeline.ConnectWriter(config.Cluster{Name: "t", Brokers: []string{addr}}, config.DefaultProducer())
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	acked, _, err := dst.Produce(t.Context(), p, recs, nil)
	if err != nil || acked != len(recs) {
		t.Fatalf("write %d records to %s: %d acknowledged, %v", len(recs), p, acked, err)
	}
}

// TestEveryUsage: a negative --every is bad usage (exit 2), and
// mirrormaker without --every says that it copies once, unlike MirrorMaker.
func TestEveryUsage(t *testing.T) {
	e := newCLIEnv(t)
	for _, args := range [][]string{
		{"run", "-c", e.cfg, "--every", "-1s"},
		{"mirrormaker", "--consumer.config", "x", "--producer.config", "y", "--whitelist", "a", "--every", "-1s"},
	} {
		_, stderr := mustCLI(t, exitUsage, "", args...)
		if !strings.Contains(stderr, "--every -1s: give a positive duration") {
			t.Errorf("catchup %v: stderr %q; want the bad duration named", args, stderr)
		}
	}
}

// TestVerifyEmptyRangeRefused: --from and --to that leave no record on any
// partition, once resolved against the checkpoints and the source (a --to
// of 0, a --from past every high watermark), are bad usage: verify would
// report an exact copy of nothing and record it as verified.
func TestVerifyEmptyRangeRefused(t *testing.T) {
	e := newCLIEnv(t)
	mustCLI(t, exitOK, "", "run", "-c", e.cfg)
	before := loadCheckpoints(t, e)
	for _, args := range [][]string{{"--to", "0"}, {"--from", "1000000"}, {"--from", "5", "--to", "5"}} {
		code, stdout, stderr := cli(t, "", append([]string{"verify", "-c", e.cfg}, args...)...)
		if code != exitUsage || !strings.Contains(stderr, "leave no record to compare") && !strings.Contains(stderr, "is not after") {
			t.Errorf("verify %v: exit code %d, stderr %q; want %d and the empty range named", args, code, stderr, exitUsage)
		}
		if strings.Contains(stdout, "exact copy") {
			t.Errorf("verify %v reported an exact copy of an empty range:\n%s", args, stdout)
		}
	}
	if after := loadCheckpoints(t, e); !cmp.Equal(before, after) {
		t.Errorf("an empty verify range changed the checkpoints (-before +after):\n%s", cmp.Diff(before, after))
	}
	// A range that holds records is still compared.
	if stdout, _ := mustCLI(t, exitOK, "", "verify", "-c", e.cfg, "--to", "10"); !strings.Contains(stdout, "exact copy") {
		t.Errorf("verify --to 10: no exact copy:\n%s", stdout)
	}
}
