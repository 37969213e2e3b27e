package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/pipeline"
)

// commitGroup commits offs (partition of topic → offset) for group on the
// cluster, as an administrator does.
func commitGroup(t *testing.T, c *kfake.Cluster, group, topic string, offs map[int32]int64) {
	t.Helper()
	// Kafka 3.9 versions: OffsetCommit v10 names topics by id.
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.MaxVersions(kversion.V3_9_0()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation = group, -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	for p, off := range offs {
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = p, off
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	res, err := req.RequestWith(t.Context(), cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range res.Topics {
		for _, p := range tt.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				t.Fatalf("commit %s/%d for group %s: %v", tt.Topic, p.Partition, group, err)
			}
		}
	}
}

// groupOffsets returns the offsets group has committed on the cluster.
func groupOffsets(t *testing.T, c *kfake.Cluster, group string) map[catchup.Partition]int64 {
	t.Helper()
	s, err := pipeline.ConnectReader(config.Cluster{Name: "read", Brokers: c.ListenAddrs()}, "read_committed")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	offs, err := s.Cluster().CommittedOffsets(t.Context(), group)
	if err != nil {
		t.Fatal(err)
	}
	return offs
}

func TestTranslateAndApplyResumeAConsumerOnTheTarget(t *testing.T) {
	e := newXEnv(t, nil, `orders`, "")
	if err := e.src.CreateTopic("orders", 5, map[string]string{"cleanup.policy": "compact"}); err != nil {
		t.Fatal(err)
	}
	if err := e.src.CreateTopic("audit", 1, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.dst.CreateTopic("orders", 5, nil); err != nil {
		t.Fatal(err)
	}
	rec := func(p int32, key string, i int) *kgo.Record {
		return &kgo.Record{Topic: "orders", Partition: p, Key: []byte(key), Value: []byte(fmt.Sprintf("%d/%d", p, i))}
	}
	// The target already holds 7 records of its own in every partition,
	// so target and source offsets differ.
	var foreign []*kgo.Record
	for p := range int32(5) {
		for i := range 7 {
			foreign = append(foreign, &kgo.Record{Topic: "orders", Partition: p, Value: []byte(fmt.Sprintf("local %d", i))})
		}
	}
	produce(t, e.dst, foreign)
	// 60 records per source partition. In partition 1, keys k3 and k4 are
	// written again at offsets 10 and 11, so compaction removes offsets 3
	// and 4 before the copy.
	var recs []*kgo.Record
	for p := range int32(5) {
		if p == 1 {
			continue
		}
		for i := range 60 {
			recs = append(recs, rec(p, fmt.Sprintf("k%d", i), i))
		}
	}
	produce(t, e.src, recs)
	p1 := func(keys ...int) (out []*kgo.Record) {
		for _, k := range keys {
			out = append(out, rec(1, fmt.Sprintf("k%d", k), k))
		}
		return out
	}
	produce(t, e.src, p1(0, 1, 2, 3, 4, 5, 6, 7, 8, 9))
	produce(t, e.src, p1(3, 4))
	var rest []int
	for k := 10; k < 58; k++ {
		rest = append(rest, k)
	}
	produce(t, e.src, p1(rest...))
	e.src.Compact()
	if got := readPartition(t, e.src, catchup.Partition{Topic: "orders", Partition: 1}); len(got) != 58 || got[3].Offset != 5 {
		t.Fatalf("source orders/1 after compaction: %d records, the fourth at %d; want 58, offsets 3 and 4 gone", len(got), got[3].Offset)
	}

	mustX(t, exitOK, "run", "-c", e.cfg)
	// Partition 3 gets 10 records more that are not copied yet.
	var more []*kgo.Record
	for i := 60; i < 70; i++ {
		more = append(more, rec(3, fmt.Sprintf("k%d", i), i))
	}
	produce(t, e.src, more)

	// The group's positions on the source: the middle, a compacted gap,
	// the log end, beyond what was copied, and partition 4 never committed.
	commitGroup(t, e.src, "app", "orders", map[int32]int64{0: 40, 1: 3, 2: 60, 3: 70})
	commitGroup(t, e.src, "app", "audit", map[int32]int64{0: 0})

	tr := decodeOne[translation](t, mustX(t, exitOK, "translate", "-c", e.cfg, "--group", "app", "--json"), "translate")
	i64 := func(v int64) *int64 { return &v }
	want := translation{Pipeline: "x", Group: "app", Unselected: []string{"audit"}, Partitions: []translatedRow{
		{Topic: "orders", Partition: 0, Committed: i64(40), TargetTopic: "orders", TargetOffset: i64(47), Status: "exact", SourceOffset: i64(40)},
		{Topic: "orders", Partition: 1, Committed: i64(3), TargetTopic: "orders", TargetOffset: i64(10), Status: "exact", SourceOffset: i64(5)},
		{Topic: "orders", Partition: 2, Committed: i64(60), TargetTopic: "orders", TargetOffset: i64(67), Status: "end", LastCopied: i64(59)},
		{Topic: "orders", Partition: 3, Committed: i64(70), TargetTopic: "orders", TargetOffset: i64(67), Status: "lagging", LastCopied: i64(59), Lag: 10},
		{Topic: "orders", Partition: 4, TargetTopic: "orders", Status: "no_commit"},
	}}
	for i := range tr.Partitions {
		tr.Partitions[i].Note = ""
	}
	if diff := cmp.Diff(want, tr); diff != "" {
		t.Errorf("translate --json (-want +got):\n%s", diff)
	}

	// --apply refuses while the group has a member on the target.
	consumer := func() *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(e.dst.ListenAddrs()...), kgo.ConsumerGroup("app"), kgo.ConsumeTopics("orders"),
			kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()))
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	live := consumer()
	dst, err := pipeline.ConnectReader(config.Cluster{Name: "x-dst", Brokers: e.dst.ListenAddrs()}, "read_committed")
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	ctx, cancel := context.WithTimeout(t.Context(), xTimeout)
	defer cancel()
	for {
		g, err := dst.Cluster().DescribeGroup(ctx, "app")
		if err != nil {
			t.Fatal(err)
		}
		if len(g.Members) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	code, _, stderr := xCLI(ctx, "translate", "-c", e.cfg, "--group", "app", "--apply")
	if code != exitFailure || !strings.Contains(stderr, "1 active member on target cluster \"x-dst\"") {
		t.Errorf("translate --apply with a live consumer: exit code %d, stderr %q; want %d and a refusal", code, stderr, exitFailure)
	}
	if offs := groupOffsets(t, e.dst, "app"); len(offs) != 0 {
		t.Errorf("the refused --apply committed %v", offs)
	}
	live.Close() // leaves the group

	stdout := mustX(t, exitOK, "translate", "-c", e.cfg, "--group", "app", "--apply")
	if !strings.Contains(stdout, "committed 4 offsets for group app on target cluster x-dst") {
		t.Errorf("translate --apply output:\n%s", stdout)
	}
	wantOffs := map[catchup.Partition]int64{{Topic: "orders", Partition: 0}: 47, {Topic: "orders", Partition: 1}: 10,
		{Topic: "orders", Partition: 2}: 67, {Topic: "orders", Partition: 3}: 67}
	if diff := cmp.Diff(wantOffs, groupOffsets(t, e.dst, "app")); diff != "" {
		t.Errorf("target offsets of group app (-want +got):\n%s", diff)
	}

	// The copy goes on: partition 2 gets a new record, partition 3's ten.
	produce(t, e.src, []*kgo.Record{rec(2, "k60", 60)})
	mustX(t, exitOK, "run", "-c", e.cfg)

	// A consumer of the group on the target starts at the right records.
	cl := consumer()
	defer cl.Close()
	first := map[int32]int64{}
	for len(first) < 4 && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			if _, ok := first[r.Partition]; ok {
				return
			}
			var off int64 = -1
			for _, h := range r.Headers {
				if h.Key == catchup.ProvenanceHeader {
					pv, err := catchup.ParseProvenance(h.Value)
					if err == nil {
						off = pv.Offset
					}
				}
			}
			first[r.Partition] = off
		})
	}
	// 40: where it stopped; 5: the record after the compacted gap; 60: the
	// first new record; 60 on partition 3: the lagging records again.
	if diff := cmp.Diff(map[int32]int64{0: 40, 1: 5, 2: 60, 3: 60}, first); diff != "" {
		t.Errorf("source offsets of the first records the consumer read on the target (-want +got):\n%s", diff)
	}
}

func TestTranslateUsage(t *testing.T) {
	e := newXEnv(t, map[string]int32{"orders": 1}, `orders`, "    provenance: false\n")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "--group"},
		{[]string{"--group", "g"}, "provenance header"},
	} {
		args := append([]string{"translate", "-c", e.cfg}, tt.args...)
		code, _, stderr := xCLI(t.Context(), args...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("catchup %v: exit code %d, stderr %q; want %d and %q", args, code, stderr, exitUsage, tt.want)
		}
	}
}
