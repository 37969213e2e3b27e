package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/checkpoint/filestore"
)

// The verify matrix: each case builds a source and a target through the
// real command line on kfake, runs catchup verify, and checks its exit
// code and every count of the verification it stored and printed as JSON.

const vTopic = "vt" // one partition

// vCluster starts a kfake cluster holding vTopic, with the broker configs
// given as key, value pairs.
func vCluster(t *testing.T, configs ...string) *kfake.Cluster {
	t.Helper()
	opts := []kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(1, vTopic)}
	if len(configs) > 0 {
		m := map[string]string{}
		for i := 0; i+1 < len(configs); i += 2 {
			m[configs[i]] = configs[i+1]
		}
		opts = append(opts, kfake.BrokerConfigs(m))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// vBase is the timestamp of the first record vProduce writes; record i of a
// call with first f is at vBase + f+i seconds.
var vBase = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// vProduce writes n records to vTopic on c, numbered from first; a value
// longer than big bytes replaces record number bigAt (-1: none).
func vProduce(t *testing.T, c *kfake.Cluster, name string, first, n, bigAt, big int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ProducerLinger(0), kgo.DisableIdempotentWrite())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for i := first; i < first+n; i++ {
		v := []byte(fmt.Sprintf("%s value %d", name, i))
		if i == bigAt {
			v = []byte(strings.Repeat("x", big))
		}
		recs = append(recs, &kgo.Record{Topic: vTopic, Key: []byte(fmt.Sprintf("%s-%d", name, i)), Value: v,
			Timestamp: vBase.Add(time.Duration(i) * time.Second)})
	}
	ctx, cancel := context.WithTimeout(t.Context(), cliTimeout)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce to %s: %v", name, err)
	}
}

// vPipeline is one pipeline of a verify test configuration.
type vPipeline struct {
	name       string
	src, dst   *kfake.Cluster
	srcN, dstN string // cluster names
	extra      string // more YAML lines of the pipeline, indented by four spaces
}

// vConfig writes a configuration with a file store in dir and returns its path.
func vConfig(t *testing.T, dir string, ps ...vPipeline) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "store: file://%s\npipelines:\n", filepath.Join(dir, "store"))
	for _, p := range ps {
		fmt.Fprintf(&b, `  - name: %s
    source: {name: %s, brokers: [%s]}
    target: {name: %s, brokers: [%s]}
    topics: {include: [%s]}
    commit_interval: 20ms
    producer: {batch_records: 5}
%s`, p.name, p.srcN, p.src.ListenAddrs()[0], p.dstN, p.dst.ListenAddrs()[0], vTopic, p.extra)
	}
	path := filepath.Join(dir, fmt.Sprintf("pipelines-%d.yaml", time.Now().UnixNano()))
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// vStored returns the verification stored for partition 0 of pipeline.
func vStored(t *testing.T, dir, pipeline string) checkpoint.Checkpoint {
	t.Helper()
	st, err := filestore.Open(filepath.Join(dir, "store"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cps, err := st.Load(t.Context(), pipeline)
	if err != nil || len(cps) != 1 {
		t.Fatalf("load checkpoints of %s: %d, %v; want 1", pipeline, len(cps), err)
	}
	return cps[0]
}

// vRewrite copies the target of a pipeline that ran into a new cluster, with
// edit applied to its records, and returns the new cluster.
func vRewrite(t *testing.T, from *kfake.Cluster, edit func([]catchup.Record) []catchup.Record) *kfake.Cluster {
	t.Helper()
	recs := readPartition(t, from, catchup.Partition{Topic: vTopic})
	dst := vCluster(t)
	writeAll(t, dst.ListenAddrs()[0], catchup.Partition{Topic: vTopic}, edit(recs))
	return dst
}

func TestVerifyMatrix(t *testing.T) {
	type check struct {
		pipeline string
		want     checkpoint.Verification // At, First and Stuck ignored
	}
	tests := []struct {
		name string
		// setup builds the clusters, runs catchup and returns the
		// configuration to verify with and what to expect.
		setup    func(t *testing.T, dir string) (cfg string, checks []check)
		wantExit int
		wantOut  []string
	}{
		{
			name: "active-active pair",
			setup: func(t *testing.T, dir string) (string, []check) {
				a, b := vCluster(t), vCluster(t)
				vProduce(t, a, "a", 0, 30, -1, 0)
				vProduce(t, b, "b", 0, 20, -1, 0)
				cfg := vConfig(t, dir,
					vPipeline{name: "a-to-b", src: a, dst: b, srcN: "a", dstN: "b"},
					vPipeline{name: "b-to-a", src: b, dst: a, srcN: "b", dstN: "a"})
				mustCLI(t, exitOK, "", "run", "-c", cfg) // a→b copies a's 30, b→a b's 20
				mustCLI(t, exitOK, "", "run", "-c", cfg) // each now skips the other's copies
				return cfg, []check{
					// a holds its 30 and b's 20; b holds its 20 and a's 30.
					{"a-to-b", checkpoint.Verification{From: 0, To: 50, Source: 50, Matched: 30, LoopSkipped: 20, Foreign: 20, Target: 50}},
					{"b-to-a", checkpoint.Verification{From: 0, To: 50, Source: 50, Matched: 20, LoopSkipped: 30, Foreign: 30, Target: 50}},
				}
			},
			wantExit: exitOK, wantOut: []string{"exact copy: 30 of 50", "exact copy: 20 of 50"},
		},
		{
			name: "late start: latest",
			setup: func(t *testing.T, dir string) (string, []check) {
				src, dst := vCluster(t), vCluster(t)
				vProduce(t, src, "s", 0, 40, -1, 0)
				cfg := vConfig(t, dir, vPipeline{name: "p", src: src, dst: dst, srcN: "s", dstN: "d", extra: "    start: latest\n"})
				mustCLI(t, exitOK, "", "run", "-c", cfg)
				vProduce(t, src, "s", 40, 25, -1, 0)
				mustCLI(t, exitOK, "", "run", "-c", cfg)
				return cfg, []check{{"p", checkpoint.Verification{From: 40, To: 65, Source: 25, Matched: 25, Target: 25}}}
			},
			wantExit: exitOK, wantOut: []string{"exact copy: 25 of 25"},
		},
		{
			name: "late start: timestamp",
			setup: func(t *testing.T, dir string) (string, []check) {
				src, dst := vCluster(t), vCluster(t)
				vProduce(t, src, "s", 0, 40, -1, 0)
				at := vBase.Add(12 * time.Second).Format(time.RFC3339)
				cfg := vConfig(t, dir, vPipeline{name: "p", src: src, dst: dst, srcN: "s", dstN: "d", extra: "    start: " + at + "\n"})
				mustCLI(t, exitOK, "", "run", "-c", cfg)
				return cfg, []check{{"p", checkpoint.Verification{From: 12, To: 40, Source: 28, Matched: 28, Target: 28}}}
			},
			wantExit: exitOK, wantOut: []string{"exact copy: 28 of 28"},
		},
		{
			name: "late start: explicit offsets",
			setup: func(t *testing.T, dir string) (string, []check) {
				src, dst := vCluster(t), vCluster(t)
				vProduce(t, src, "s", 0, 40, -1, 0)
				cfg := vConfig(t, dir, vPipeline{name: "p", src: src, dst: dst, srcN: "s", dstN: "d",
					extra: "    start_offsets: {" + vTopic + ": {0: 15}}\n"})
				mustCLI(t, exitOK, "", "run", "-c", cfg)
				return cfg, []check{{"p", checkpoint.Verification{From: 15, To: 40, Source: 25, Matched: 25, Target: 25}}}
			},
			wantExit: exitOK, wantOut: []string{"exact copy: 25 of 25"},
		},
		{
			name: "out-of-order target (second half copied first)",
			setup: func(t *testing.T, dir string) (string, []check) {
				src, dst := vCluster(t), vCluster(t)
				vProduce(t, src, "s", 0, 40, -1, 0)
				p := vPipeline{name: "p", src: src, dst: dst, srcN: "s", dstN: "d"}
				mustCLI(t, exitOK, "", "run", "-c", vConfig(t, dir, p))
				p.dst = vRewrite(t, dst, func(r []catchup.Record) []catchup.Record { return slices.Concat(r[20:], r[:20]) })
				return vConfig(t, dir, p), []check{{"p", checkpoint.Verification{From: 0, To: 40, Source: 40, Matched: 20, OutOfOrder: 20, Target: 40}}}
			},
			wantExit: exitFailure, wantOut: []string{"MISMATCH: 20 of 40", "target offset 20 holds source offset 0 after a copy of source offset 39"},
		},
		{
			name: "tampered copy beside the true one",
			setup: func(t *testing.T, dir string) (string, []check) {
				src, dst := vCluster(t), vCluster(t)
				vProduce(t, src, "s", 0, 40, -1, 0)
				p := vPipeline{name: "p", src: src, dst: dst, srcN: "s", dstN: "d"}
				mustCLI(t, exitOK, "", "run", "-c", vConfig(t, dir, p))
				p.dst = vRewrite(t, dst, func(r []catchup.Record) []catchup.Record {
					bad := r[7]
					bad.Value = []byte("tampered")
					return slices.Concat(r, []catchup.Record{bad})
				})
				return vConfig(t, dir, p), []check{{"p", checkpoint.Verification{From: 0, To: 40, Source: 40, Matched: 40, Differing: 1, Target: 41}}}
			},
			wantExit: exitFailure, wantOut: []string{"MISMATCH: 40 of 40", "source offset 7 differs from its copy at target offset 40"},
		},
		{
			name: "foreign records",
			setup: func(t *testing.T, dir string) (string, []check) {
				src, dst := vCluster(t), vCluster(t)
				vProduce(t, dst, "native", 0, 5, -1, 0)
				vProduce(t, src, "s", 0, 40, -1, 0)
				p := vPipeline{name: "p", src: src, dst: dst, srcN: "s", dstN: "d"}
				mustCLI(t, exitOK, "", "run", "-c", vConfig(t, dir, p))
				vProduce(t, dst, "native", 5, 3, -1, 0)
				return vConfig(t, dir, p), []check{{"p", checkpoint.Verification{From: 0, To: 40, Source: 40, Matched: 40, Foreign: 8, Target: 48}}}
			},
			wantExit: exitOK, wantOut: []string{"exact copy: 40 of 40"},
		},
		{
			name: "stuck partition",
			setup: func(t *testing.T, dir string) (string, []check) {
				src, dst := vCluster(t), vCluster(t, "message.max.bytes", "4000")
				vProduce(t, src, "s", 0, 40, 25, 8000) // record 25 cannot be copied
				p := vPipeline{name: "p", src: src, dst: dst, srcN: "s", dstN: "d"}
				cfg := vConfig(t, dir, p)
				mustCLI(t, exitFailure, "", "run", "-c", cfg)
				return cfg, []check{{"p", checkpoint.Verification{From: 0, To: 25, Source: 25, Matched: 25, Target: 25, Behind: 15}}}
			},
			wantExit: exitFailure, wantOut: []string{"STUCK vt/0: the checkpoint is 15 offsets behind the source end; last error: ", "STUCK: 25 of 25"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg, checks := tt.setup(t, dir)
			stdout, _ := mustCLI(t, tt.wantExit, "", "verify", "-c", cfg)
			for _, w := range tt.wantOut {
				if !strings.Contains(stdout, w) {
					t.Errorf("verify output lacks %q:\n%s", w, stdout)
				}
			}
			for _, c := range checks {
				cp := vStored(t, dir, c.pipeline)
				if cp.LastVerification == nil {
					t.Fatalf("pipeline %s: no verification stored", c.pipeline)
				}
				got := *cp.LastVerification
				if c.want.Behind != 0 && got.Stuck == "" {
					t.Errorf("pipeline %s: verification says nothing of the stuck partition: %+v", c.pipeline, got)
				}
				if diff := cmp.Diff(c.want, got, cmpopts.IgnoreFields(checkpoint.Verification{}, "At", "First", "Stuck")); diff != "" {
					t.Errorf("pipeline %s: stored verification (-want +got):\n%s\nverify printed:\n%s", c.pipeline, diff, stdout)
				}
				// status --json shows what was stored.
				out, _ := mustCLI(t, exitOK, "", "status", "--json", "-c", cfg, "--pipeline", c.pipeline)
				if diff := cmp.Diff(verificationJSONOf(got), decodeOne[statusJSONT](t, out, "status").Partitions[0].Verification); diff != "" {
					t.Errorf("pipeline %s: status --json last_verification (-stored +shown):\n%s", c.pipeline, diff)
				}
			}
			// verify --json says the same, with the same exit code.
			out, _ := mustCLI(t, tt.wantExit, "", "verify", "--json", "-c", cfg)
			doc := decodeDoc[verifyJSONT](t, out)
			if len(doc.Pipelines) != len(checks) {
				t.Fatalf("verify --json: %d pipelines, want %d:\n%s", len(doc.Pipelines), len(checks), out)
			}
			for i, c := range checks {
				got := doc.Pipelines[i]
				want := verificationJSONOf(c.want)
				want.OK = tt.wantExit == exitOK
				if got.Pipeline != c.pipeline || got.OK != want.OK || len(got.Partitions) != 1 {
					t.Fatalf("verify --json: pipeline %d = %+v; want %s, ok %t, one partition", i, got, c.pipeline, want.OK)
				}
				if diff := cmp.Diff(*want, got.Partitions[0].verificationJSON, cmpopts.IgnoreFields(verificationJSON{}, "First", "Stuck")); diff != "" {
					t.Errorf("verify --json: pipeline %s (-want +got):\n%s", c.pipeline, diff)
				}
			}
		})
	}
}

// TestVerifyCheckpointWithoutStart: a checkpoint written before catchup
// recorded starts keeps an unknown start through later runs (its copies
// began who knows where), and verify compares it from the source log start.
func TestVerifyCheckpointWithoutStart(t *testing.T) {
	dir := t.TempDir()
	src, dst := vCluster(t), vCluster(t)
	vProduce(t, src, "s", 0, 40, -1, 0)
	cfg := vConfig(t, dir, vPipeline{name: "p", src: src, dst: dst, srcN: "s", dstN: "d"})
	mustCLI(t, exitOK, "", "run", "-c", cfg)
	if cp := vStored(t, dir, "p"); cp.Start == nil || *cp.Start != 0 {
		t.Fatalf("start after the first run = %v, want 0", ptrString(cp.Start))
	}
	// Make it a checkpoint of an older catchup: no start.
	path := filepath.Join(dir, "store", "p.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Replace(string(data), "\"start\": 0,\n", "", 1)
	if old == string(data) {
		t.Fatalf("no start in the store file:\n%s", data)
	}
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	vProduce(t, src, "s", 40, 10, -1, 0)
	mustCLI(t, exitOK, "", "run", "-c", cfg)
	if cp := vStored(t, dir, "p"); cp.Start != nil {
		t.Errorf("start of an old checkpoint after a run = %d, want none (copying began before it was recorded)", *cp.Start)
	}
	stdout, _ := mustCLI(t, exitOK, "", "verify", "-c", cfg)
	if !strings.Contains(stdout, "exact copy: 50 of 50") {
		t.Errorf("verify of an old checkpoint does not compare from the log start:\n%s", stdout)
	}
}
