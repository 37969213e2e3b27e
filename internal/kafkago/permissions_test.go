package kafkago_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/kafkago"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// observeKeys records the API key of every request c handles, except
// those of the connection itself (ApiVersions, SASL), which no ACL checks.
func observeKeys(c *kfake.Cluster) func() []protocol.ApiKey {
	var mu sync.Mutex
	seen := map[protocol.ApiKey]bool{}
	c.Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
		switch kmsg.Key(req.Key()) {
		case kmsg.ApiVersions, kmsg.SASLHandshake, kmsg.SASLAuthenticate:
		default:
			mu.Lock()
			seen[protocol.ApiKey(req.Key())] = true
			mu.Unlock()
		}
		return nil, nil, false // observe only: the control stays, the cluster answers
	})
	return func() []protocol.ApiKey {
		mu.Lock()
		defer mu.Unlock()
		var out []protocol.ApiKey
		for k := range seen {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
}

// TestNeedsCoverTheRequestsSent calls every method of Source, Target and
// Cluster that sends requests, the way run (with create_topics and the
// idempotent producer: a target topic created, then grown to a grown
// source topic and its configs synced; a takeover of an unreleased lease,
// which reads the target leader's log end; time figures for the lag it
// leaves), plan, verify, translate and group sync (sync_groups, in run
// and the dispatcher) do, against two clusters that record the requests
// they receive. The API keys each
// cluster received must be exactly those kafkago.Needs lists for its role:
// a request added to the code without its permission, or a permission
// listed for a request the code no longer sends, fails here, and with it
// the template's grants and docs/permissions.md, which follow Needs.
func TestNeedsCoverTheRequestsSent(t *testing.T) {
	ctx := testContext(t)
	srcC := newCluster(t, kfake.SeedTopics(2, "orders"))
	dstC := newCluster(t)
	src, dst := newSource(t, srcC, ""), newTarget(t, dstC, config.Producer{})
	p := catchup.Partition{Topic: "orders", Partition: 0}
	pr := newProducer(t, srcC)
	if err := pr.ProduceSync(ctx, &kgo.Record{Topic: "orders", Partition: 0, Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	sawSrc, sawDst := observeKeys(srcC), observeKeys(dstC)

	// run: list, watermarks, create the target topic, copy, read back.
	if _, err := src.Partitions(ctx, func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if _, err := src.ListOffsets(ctx, []catchup.Partition{p}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.OffsetsForTime(ctx, []catchup.Partition{p}, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	specs, err := src.DescribeTopics(ctx, []string{"orders"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Cluster().TopicConfigs(ctx, []string{"orders"}); err != nil { // plan
		t.Fatal(err)
	}
	if _, err := src.TopicConfigValues(ctx, []string{"orders"}); err != nil { // time figures of a run leaving lag
		t.Fatal(err)
	}
	short := specs["orders"]
	short.Partitions-- // the target created before the source grew
	if err := dst.CreateTopics(ctx, []replicate.TopicSpec{short}); err != nil {
		t.Fatal(err)
	}
	if err := dst.AddPartitions(ctx, map[string]int{"orders": specs["orders"].Partitions}); err != nil {
		t.Fatal(err)
	}
	// config sync: the source's retention changed since the target was created.
	if _, err := dst.ExplicitConfigs(ctx, []string{"orders"}); err != nil {
		t.Fatal(err)
	}
	if err := dst.AlterConfigs(ctx, map[string]map[string]string{"orders": {"retention.ms": "3600000"}}); err != nil {
		t.Fatal(err)
	}
	// takeover of an unreleased lease: the target leader's log end.
	if _, err := dst.LogEnd(ctx, p); err != nil {
		t.Fatal(err)
	}
	f, err := src.Fetch(ctx, p, 0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dst.PartitionCounts(ctx, []string{"orders"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := produceAll(ctx, dst, p, f.Records); err != nil {
		t.Fatal(err)
	}
	ends, err := dst.EndOffsets(ctx, []catchup.Partition{p})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := dst.ReadBack(ctx, p, ends[p]); err != nil {
		t.Fatal(err)
	}
	// translate: the group's offsets on the source, its state and a commit on the target.
	if _, err := src.Cluster().CommittedOffsets(ctx, "billing"); err != nil {
		t.Fatal(err)
	}
	if _, err := dst.Cluster().DescribeGroup(ctx, "billing"); err != nil {
		t.Fatal(err)
	}
	if err := dst.Cluster().CommitOffsets(ctx, "billing", map[catchup.Partition]int64{p: 1}); err != nil {
		t.Fatal(err)
	}
	// sync_groups (groupsync.Sync through internal/pipeline): the source's
	// groups and their offsets; on the target, the group's state, its
	// copies read (translate.Find: Metadata, ListOffsets, Fetch, above), its
	// current offsets and a commit.
	if _, err := src.Cluster().ListGroups(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := dst.Cluster().CommittedOffsets(ctx, "billing"); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		role kafkago.Role
		got  []protocol.ApiKey
	}{{kafkago.RoleSource, sawSrc()}, {kafkago.RoleTarget, sawDst()}} {
		var want []protocol.ApiKey
		for _, n := range kafkago.Needs() {
			if n.Role == c.role && !slices.Contains(want, n.API) {
				want = append(want, n.API)
			}
		}
		slices.Sort(want)
		name := func(ks []protocol.ApiKey) []string {
			var out []string
			for _, k := range ks {
				out = append(out, k.String())
			}
			return out
		}
		if diff := cmp.Diff(name(want), name(c.got)); diff != "" {
			t.Errorf("%s: requests, kafkago.Needs (-) vs sent (+):\n%s", c.role, diff)
		}
	}
}
