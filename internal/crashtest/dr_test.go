package crashtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/config"
)

// TestDisasterRecoveryReplica: a disaster-recovery replica, through the real
// binary on kfake: a source topic of 5 partitions with two consumer
// groups and a producer writing throughout; `catchup run --every 1s` with
// create_topics, config sync and group sync; meanwhile the source topic's
// retention.ms changes and it grows to 7 partitions, and the groups commit
// further. After SIGTERM (exit 0) the target holds an exact copy in 7
// partitions with the new retention, and a consumer of each group on the
// target starts at exactly the record the group would read next on the
// source, in every partition.
func TestDisasterRecoveryReplica(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	const topic = "dr"
	src, dst := newCluster(t), newCluster(t)
	admin := func(c interface{ ListenAddrs() []string }) *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	scl, dcl := admin(src), admin(dst)
	request := func(what string, req kmsg.Request, codes func(kmsg.Response) []int16) {
		res, err := scl.Request(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for _, c := range codes(res) {
			if err := kerr.ErrorForCode(c); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		}
	}
	ct := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, 5, 1
	ret := "3600000"
	rt.Configs = append(rt.Configs, kmsg.CreateTopicsRequestTopicConfig{Name: "retention.ms", Value: &ret})
	ct.Topics = append(ct.Topics, rt)
	request("create the source topic", ct, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode} })

	// The producer: records to random partitions until stopped.
	var parts sync.Map // current partition count
	parts.Store("n", int32(5))
	stop := make(chan struct{})
	var produced sync.WaitGroup
	produced.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			n, _ := parts.Load("n")
			r := &kgo.Record{Topic: topic, Partition: rand.Int32N(n.(int32)), Key: fmt.Appendf(nil, "k%d", i%17), Value: fmt.Appendf(nil, "v%d", i)}
			if err := scl.ProduceSync(ctx, r).FirstErr(); err != nil {
				// The client learns of the new partitions with its next
				// metadata; until then the record is refused unsent.
				scl.ForceMetadataRefresh()
				if i%100 == 99 || ctx.Err() != nil {
					t.Errorf("produce: %v", err)
					return
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
	})
	commitGroup := func(group string, fraction float64) {
		srcR := newSource(t, config.Cluster{Name: "probe", Brokers: src.ListenAddrs()}, "read_uncommitted")
		n, _ := parts.Load("n")
		var ps []catchup.Partition
		for p := range n.(int32) {
			ps = append(ps, catchup.Partition{Topic: topic, Partition: p})
		}
		marks, err := srcR.ListOffsets(ctx, ps)
		if err != nil {
			t.Fatal(err)
		}
		offs := map[catchup.Partition]int64{}
		for _, m := range marks {
			offs[m.Partition] = int64(float64(m.HighWatermark) * fraction)
		}
		if err := srcR.Cluster().CommitOffsets(ctx, group, offs); err != nil {
			t.Fatalf("commit %s: %v", group, err)
		}
	}
	time.Sleep(300 * time.Millisecond)
	commitGroup("g1", 0.5)
	commitGroup("g2", 0.9)

	dir := t.TempDir()
	cfg := filepath.Join(dir, "dr.yaml")
	yaml := fmt.Sprintf(`store: file://%s
pipelines:
  - name: dr
    source: {name: dr-src, brokers: [%s]}
    target: {name: dr-dst, brokers: [%s]}
    topics: {include: [%s]}
    create_topics: true
    config_sync_interval: 0s
    sync_groups: {include: ["g1", "g2"], interval: 0s}
    commit_interval: 100ms
`, filepath.Join(dir, "store"), src.ListenAddrs()[0], dst.ListenAddrs()[0], topic)
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(catchupBin, "run", "-c", cfg, "--every", "1s", "-v")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	showLog := func() string { b, _ := os.ReadFile(logf.Name()); return string(b) }

	time.Sleep(1500 * time.Millisecond)
	ic := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, topic
	newRet := "7200000"
	res.Configs = append(res.Configs, kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: "retention.ms", Value: &newRet, Op: kmsg.IncrementalAlterConfigOpSet})
	ic.Resources = append(ic.Resources, res)
	request("change the source's retention", ic, func(r kmsg.Response) []int16 {
		return []int16{r.(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode}
	})
	cp := kmsg.NewPtrCreatePartitionsRequest()
	cpt := kmsg.NewCreatePartitionsRequestTopic()
	cpt.Topic, cpt.Count = topic, 7
	cp.Topics = append(cp.Topics, cpt)
	request("grow the source topic", cp, func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.CreatePartitionsResponse).Topics[0].ErrorCode} })
	parts.Store("n", int32(7))
	time.Sleep(1500 * time.Millisecond)
	commitGroup("g1", 0.6) // now on 7 partitions
	time.Sleep(1000 * time.Millisecond)
	close(stop)
	produced.Wait()
	commitGroup("g2", 0.95)

	// Wait until the target has everything and both groups are synced.
	srcR := newSource(t, config.Cluster{Name: "dr-src", Brokers: src.ListenAddrs()}, "read_uncommitted")
	dstR := newSource(t, config.Cluster{Name: "dr-dst", Brokers: dst.ListenAddrs()}, "read_uncommitted")
	var all []catchup.Partition
	for p := range int32(7) {
		all = append(all, catchup.Partition{Topic: topic, Partition: p})
	}
	srcMarks, err := srcR.ListOffsets(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	committed := map[string]map[catchup.Partition]int64{}
	for _, g := range []string{"g1", "g2"} {
		if committed[g], err = srcR.Cluster().CommittedOffsets(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	for {
		if ctx.Err() != nil {
			t.Fatalf("the replica did not catch up:\n%s", showLog())
		}
		time.Sleep(200 * time.Millisecond)
		dstMarks, err := dstR.ListOffsets(ctx, all)
		if err != nil {
			continue // the target topic may not have 7 partitions yet
		}
		caught := true
		for i := range all {
			caught = caught && dstMarks[i].HighWatermark == srcMarks[i].HighWatermark
		}
		for _, g := range []string{"g1", "g2"} {
			got, err := dstR.Cluster().CommittedOffsets(ctx, g)
			caught = caught && err == nil && len(got) == len(committed[g])
		}
		if caught {
			break
		}
	}
	time.Sleep(1500 * time.Millisecond) // one more run, to be stopped
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("catchup run --every after SIGTERM: %v, want exit 0\n%s", err, showLog())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("no exit within 30s of SIGTERM\n%s", showLog())
	}

	// An exact copy, in 7 partitions.
	for i, p := range all {
		want := readRange(ctx, t, srcR, p, 0, srcMarks[i].HighWatermark)
		got := readRange(ctx, t, dstR, p, 0, srcMarks[i].HighWatermark)
		if len(got) != len(want) {
			t.Errorf("%s: %d records in the target, want %d", p, len(got), len(want))
			continue
		}
		for j := range want {
			off, ok := catchup.SourceOffset(&got[j], "dr-src", p)
			if !catchup.SameContent(&want[j], &got[j], true) || !ok || off != want[j].Offset || got[j].Offset != want[j].Offset {
				t.Errorf("%s: target record %d differs from source record %d", p, got[j].Offset, want[j].Offset)
				break
			}
		}
	}
	if len(all) != 7 || srcMarks[6].HighWatermark == 0 {
		t.Errorf("partition 6 of the source got no records: the growth proves nothing")
	}
	// The new retention.
	dc := kmsg.NewPtrDescribeConfigsRequest()
	dr := kmsg.NewDescribeConfigsRequestResource()
	dr.ResourceType, dr.ResourceName = kmsg.ConfigResourceTypeTopic, topic
	dc.Resources = append(dc.Resources, dr)
	dres, err := dc.RequestWith(ctx, dcl)
	if err != nil {
		t.Fatal(err)
	}
	var retention string
	for _, c := range dres.Resources[0].Configs {
		if c.Name == "retention.ms" && c.Value != nil {
			retention = *c.Value
		}
	}
	if retention != newRet {
		t.Errorf("target retention.ms %q, want the source's new %s", retention, newRet)
	}
	// Each group resumes on the target at exactly its next record.
	for _, g := range []string{"g1", "g2"} {
		got, err := dstR.Cluster().CommittedOffsets(ctx, g)
		if err != nil {
			t.Fatal(err)
		}
		for p, off := range committed[g] {
			next := readRange(ctx, t, srcR, p, off, off+1)
			tgt := readRange(ctx, t, dstR, p, got[p], got[p]+1)
			if len(next) != 1 || len(tgt) != 1 || !catchup.SameContent(&next[0], &tgt[0], true) {
				t.Errorf("group %s, %s: committed %d on the source, %d on the target: the target consumer would not resume at the next record", g, p, off, got[p])
			}
		}
	}
	t.Logf("source ends %v; groups g1 %v, g2 %v", srcMarks, committed["g1"], committed["g2"])
}
