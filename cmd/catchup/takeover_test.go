package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/config"
)

// mm2Fixture is a source and a target (kfake) that a stopped MirrorMaker 2
// left: topic orders, 10 records in each of 2 partitions; MirrorMaker 2
// copied 6 of partition 0 and 4 of partition 1 (identity naming) and
// recorded it in mm2-offsets.A.internal on the target.
type mm2Fixture struct {
	src, dst *kfake.Cluster
	props    string // the MirrorMaker 2 file
	store    string
}

const mm2Topic, mm2Offsets, mm2PerPart = "orders", "mm2-offsets.A.internal", 10

// mm2Copied is how many records of each partition MirrorMaker 2 copied.
var mm2Copied = []int{6, 4}

func newMM2Fixture(t *testing.T) *mm2Fixture {
	t.Helper()
	start := func(topics ...string) *kfake.Cluster {
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(len(mm2Copied)), topics...))
		if err != nil {
			t.Fatalf("start kfake: %v", err)
		}
		t.Cleanup(c.Close)
		return c
	}
	f := &mm2Fixture{src: start(mm2Topic), dst: start(mm2Topic, mm2Offsets)}
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var src, dst []*kgo.Record
	for p := range int32(len(mm2Copied)) {
		for i := range mm2PerPart {
			r := func() *kgo.Record {
				return &kgo.Record{Topic: mm2Topic, Partition: p, Key: fmt.Appendf(nil, "k%d-%d", p, i),
					Value: fmt.Appendf(nil, "v%d-%d", p, i), Timestamp: base.Add(time.Duration(i) * time.Second),
					Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("x")}}}
			}
			src = append(src, r())
			if i < mm2Copied[p] {
				dst = append(dst, r()) // MirrorMaker 2's copy: the same record, no provenance
			}
		}
		dst = append(dst, &kgo.Record{Topic: mm2Offsets, Partition: 0,
			Key:   fmt.Appendf(nil, `["MirrorSourceConnector",{"cluster":"A","partition":%d,"topic":"%s"}]`, p, mm2Topic),
			Value: fmt.Appendf(nil, `{"offset":%d}`, mm2Copied[p]-1)})
	}
	produce(t, f.src, src)
	produce(t, f.dst, dst)
	dir := t.TempDir()
	f.store = "file://" + filepath.Join(dir, "store")
	f.props = filepath.Join(dir, "mm2.properties")
	if err := os.WriteFile(f.props, fmt.Appendf(nil, `clusters = A, B
A.bootstrap.servers = %s
B.bootstrap.servers = %s
A->B.enabled = true
A->B.topics = %s
replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy
replication.factor = 1
emit.heartbeats.enabled = false
`, f.src.ListenAddrs()[0], f.dst.ListenAddrs()[0], mm2Topic), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// mm2 runs catchup mirrormaker2 on the fixture's file and store.
func (f *mm2Fixture) mm2(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return mmCLI(t, append([]string{"mirrormaker2", f.props, "--store", f.store, "--take-over-settle", "1ms"}, args...)...)
}

// TestTakeOverStoreCheckpoints: a checkpoint wins over start_offsets, so a
// take-over against a store that already holds checkpoints of the pipeline
// elsewhere than MirrorMaker 2's positions is refused, naming the pipeline,
// each partition, the store and the commands that fix it. Those commands,
// run as printed, make the take-over agree with the store; it then runs
// and the target holds every source record once.
func TestTakeOverStoreCheckpoints(t *testing.T) {
	f := newMM2Fixture(t)
	code, stdout, stderr := f.mm2(t, "--take-over", "--print-config")
	if code != 0 {
		t.Fatalf("take-over on an empty store: exit %d, want 0:\n%s", code, stderr)
	}
	cfg, err := config.Parse([]byte(stdout), "stdout")
	if err != nil {
		t.Fatalf("the printed YAML: %v\n%s", err, stdout)
	}
	want := map[string]map[int32]int64{mm2Topic: {0: int64(mm2Copied[0]), 1: int64(mm2Copied[1])}}
	if diff := cmp.Diff(want, cfg.Pipelines[0].StartOffsets); diff != "" {
		t.Fatalf("start_offsets (-want +got):\n%s", diff)
	}

	// catchup copied partition 0 once, before MirrorMaker 2 went on: its
	// checkpoint is behind MirrorMaker 2's position.
	dir := filepath.Dir(f.props)
	t.Chdir(dir)
	code, stdout, stderr = f.mm2(t, "--print-config")
	if code != 0 {
		t.Fatalf("print-config: exit %d:\n%s", code, stderr)
	}
	if err := os.WriteFile(filepath.Join(dir, "pipelines.yaml"), []byte(stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	mustCLI(t, 0, "", "reset", "-c", "pipelines.yaml", "--pipeline", "A-to-B", "--topic", mm2Topic, "--partition", "0", "--to", "2", "--yes")

	code, _, stderr = f.mm2(t, "--take-over", "--print-config")
	for _, want := range []string{
		"pipeline A-to-B: --take-over refused; nothing changed: the store " + f.store + " already holds checkpoints of 1 of its partitions",
		"orders/0: checkpoint 2, MirrorMaker 2's position 6",
		"catchup reset -c pipelines.yaml --pipeline A-to-B --topic orders --partition 0 --to 6 --yes",
		"run without --take-over",
	} {
		if code != 2 || !strings.Contains(stderr, want) {
			t.Fatalf("take-over over a checkpoint elsewhere: exit %d, want 2 and stderr saying %q:\n%s", code, want, stderr)
		}
	}

	// The fix, run as printed.
	for _, line := range strings.Split(stderr, "\n") {
		if words := strings.Fields(line); len(words) > 1 && words[0] == "catchup" && words[1] == "reset" {
			mustCLI(t, 0, "", words[1:]...)
		}
	}
	code, _, stderr = f.mm2(t, "--take-over")
	if code != 0 || !strings.Contains(stderr, "already holds checkpoints at MirrorMaker 2's positions for 1 of its partitions") {
		t.Fatalf("take-over after the fix: exit %d, want 0 and a note that the checkpoint agrees:\n%s", code, stderr)
	}
	for p := range int32(len(mm2Copied)) {
		got := readPartition(t, f.dst, catchup.Partition{Topic: mm2Topic, Partition: p})
		seen := map[string]int{}
		for _, r := range got {
			seen[string(r.Key)]++
		}
		for i := range mm2PerPart {
			if k := fmt.Sprintf("k%d-%d", p, i); seen[k] != 1 {
				t.Errorf("target %s/%d holds %s %d times, want once", mm2Topic, p, k, seen[k])
			}
		}
		if len(got) != mm2PerPart {
			t.Errorf("target %s/%d holds %d records, want %d", mm2Topic, p, len(got), mm2PerPart)
		}
	}
}
