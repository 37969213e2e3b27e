package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/kafkago"
	"github.com/kafka-catchup/catchup/internal/pipeline"
)

// TestSyncGroups runs `catchup run --json` with sync_groups on kfake. The
// source group billing committed 50, 120 (the end) and 10 on the three
// partitions of orders; on the target, billing is at 100 on partition 2
// already, and the group busy (also selected) has a live member there; the
// group audit is excluded. A first run whose windows stop at 30 records
// commits nothing past the copy; the next run, which copies the rest,
// commits billing exactly, leaves partition 2 (never backwards) and skips
// busy, with the reasons in the report.
func TestSyncGroups(t *testing.T) {
	e := newCLIEnv(t)
	ctx, cancel := context.WithTimeout(t.Context(), cliTimeout)
	defer cancel()
	cluster := func(addrs []string) *kafkago.Cluster {
		s, err := pipeline.ConnectReader(config.Cluster{Name: "admin", Brokers: addrs}, "read_uncommitted")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s.Cluster()
	}
	src, dst := cluster(e.src.ListenAddrs()), cluster(e.dst.ListenAddrs())
	p := func(n int32) catchup.Partition { return catchup.Partition{Topic: cliTopic, Partition: n} }
	commit := func(c *kafkago.Cluster, group string, offs map[catchup.Partition]int64) {
		if err := c.CommitOffsets(ctx, group, offs); err != nil {
			t.Fatalf("commit %s: %v", group, err)
		}
	}
	commit(src, "billing", map[catchup.Partition]int64{p(0): 50, p(1): cliPerPart, p(2): 10})
	commit(src, "busy", map[catchup.Partition]int64{p(0): 5})
	commit(src, "audit", map[catchup.Partition]int64{p(0): 7})
	commit(dst, "billing", map[catchup.Partition]int64{p(2): 100})
	member, err := kgo.NewClient(kgo.SeedBrokers(e.dst.ListenAddrs()...), kgo.ConsumerGroup("busy"), kgo.ConsumeTopics(cliTopic))
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	for g, err := dst.DescribeGroup(ctx, "busy"); !g.Active(); g, err = dst.DescribeGroup(ctx, "busy") {
		if err != nil || ctx.Err() != nil {
			t.Fatalf("the member of busy did not join: %v %v", err, ctx.Err())
		}
		pctx, pcancel := context.WithTimeout(ctx, 100*time.Millisecond)
		member.PollFetches(pctx)
		pcancel()
	}

	cfg := func(extra string) string {
		path := filepath.Join(e.dir, "groups.yaml")
		yaml := fmt.Sprintf(`store: file://%s
pipelines:
  - name: %s
    source: {name: %s, brokers: [%s]}
    target: {name: cli-dst, brokers: [%s]}
    topics: {include: [%s]}
    sync_groups: {include: ["billing", "busy"], exclude: [audit], interval: 0s}
%s`, filepath.Join(e.dir, "store"), cliPipeline, cliSrcName, e.src.ListenAddrs()[0], e.dst.ListenAddrs()[0], cliTopic, extra)
		if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	type row struct {
		Group, Status string
		Partition     int32
		Offset        int64
	}
	rows := func(out string) []row {
		doc := decodeDoc[reportJSONT](t, out)
		if len(doc.Pipelines) != 1 {
			t.Fatalf("report of %d pipelines, want 1:\n%s", len(doc.Pipelines), out)
		}
		rep := doc.Pipelines[0]
		var rs []row
		for _, g := range rep.Groups {
			for _, p := range g.Partitions {
				rs = append(rs, row{g.Group, string(p.Status), p.Partition, p.Offset})
			}
		}
		return rs
	}

	out, _ := mustCLI(t, exitFailure, "", "run", "-c", cfg("    window: {max_records: 30}\n"), "--json")
	want := []row{
		{"billing", "skipped", 0, -1}, // the copy is at 30, the group at 50
		{"billing", "skipped", 1, -1},
		{"billing", "skipped", 2, 10}, // the target group is at 100 already
		{"busy", "skipped", 0, -1},
	}
	if diff := cmp.Diff(want, rows(out)); diff != "" {
		t.Errorf("first run, copy at 30: groups (-want +got):\n%s\n%s", diff, out)
	}
	out, _ = mustCLI(t, exitOK, "", "run", "-c", cfg(""), "--json")
	want = []row{
		{"billing", "synced", 0, 50},
		{"billing", "synced", 1, cliPerPart},
		{"billing", "skipped", 2, 10},
		{"busy", "skipped", 0, -1},
	}
	if diff := cmp.Diff(want, rows(out)); diff != "" {
		t.Errorf("second run: groups (-want +got):\n%s\n%s", diff, out)
	}
	got, err := dst.CommittedOffsets(ctx, "billing")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[catchup.Partition]int64{p(0): 50, p(1): cliPerPart, p(2): 100}, got); diff != "" {
		t.Errorf("billing on the target (-want +got):\n%s", diff)
	}
	for _, g := range []string{"busy", "audit"} {
		if got, err := dst.CommittedOffsets(ctx, g); err != nil || len(got) != 0 {
			t.Errorf("%s on the target: %v, %v; want nothing committed", g, got, err)
		}
	}
}
