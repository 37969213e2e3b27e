package pipeline_test

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/kafkago"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// TestPipelineRequestsAreInNeeds runs a pipeline with create_topics,
// the idempotent producer, sync_acls and sync_groups through the paths merged after
// kafkago.Needs was first written, end to end: a run that grows the target
// topic to its grown source topic, syncs the config changed on the source,
// and leaves lag (its time figures read the source's retention); a run
// that takes over unreleased leases (it reads the target leader's log
// end); and group sync as run and the dispatcher call it. Every request
// each cluster receives must be one kafkago.Needs lists for its role,
// always or for those features (TestNeedsCoverTheRequestsSent in
// internal/kafkago holds each feature apart), and each path must have
// sent the request that shows it ran.
func TestPipelineRequestsAreInNeeds(t *testing.T) {
	const partitions = 2
	r := newLeaseRig(t, partitions, 60, `    create_topics: true
    takeover_settle: 10ms
    window: {max_records: 20}
    sync_groups: {include: [billing]}
    sync_acls: true
`)
	// The source topic grown and its retention changed since the target
	// topic was made, and a group with an offset copied by the first run.
	cl, err := kgo.NewClient(kgo.SeedBrokers(r.src.ListenAddrs()...), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	grow := kmsg.NewPtrCreatePartitionsRequest()
	gt := kmsg.NewCreatePartitionsRequestTopic()
	gt.Topic, gt.Count = "events", partitions+1
	grow.Topics = append(grow.Topics, gt)
	alter := kmsg.NewPtrIncrementalAlterConfigsRequest()
	ar := kmsg.NewIncrementalAlterConfigsRequestResource()
	ar.ResourceType, ar.ResourceName = kmsg.ConfigResourceTypeTopic, "events"
	ac := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	ac.Name, ac.Value = "retention.ms", kmsg.StringPtr("3600000")
	ar.Configs = append(ar.Configs, ac)
	alter.Resources = append(alter.Resources, ar)
	if res, err := grow.RequestWith(t.Context(), cl); err != nil || res.Topics[0].ErrorCode != 0 {
		t.Fatalf("grow the source topic: %+v, %v", res, err)
	}
	if res, err := alter.RequestWith(t.Context(), cl); err != nil || res.Resources[0].ErrorCode != 0 {
		t.Fatalf("set retention.ms on the source topic: %+v, %v", res, err)
	}
	cl.Close()
	admin, err := pipeline.ConnectReader(r.file.Pipelines[0].Source, "read_uncommitted")
	if err != nil {
		t.Fatal(err)
	}
	err = admin.Cluster().CommitOffsets(t.Context(), "billing", map[catchup.Partition]int64{{Topic: "events", Partition: 0}: 5})
	admin.Close()
	if err != nil {
		t.Fatal(err)
	}

	sawSrc, sawDst := requestCounts(r.src), requestCounts(r.dst)
	store := r.newStore(time.Now)
	rep, err := r.open(t, "run", store, time.Now).Engine.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(rep.Partitions, func(p replicate.Result) bool { return p.Lag() > 0 }) {
		t.Fatalf("the first run left no lag: %+v", rep.Partitions)
	}
	for p := range int32(partitions + 1) {
		if _, _, err := store.Acquire(t.Context(), "leases", catchup.Partition{Topic: "events", Partition: p}, "dead", 20*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	p := r.open(t, "dead", store, time.Now) // the same owner, restarted: it takes its leases back at once
	if _, err := p.Engine.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	groups, err := p.SyncGroups(t.Context(), &r.file.Pipelines[0])
	if err != nil || len(groups) != 1 || groups[0].Err != nil {
		t.Fatalf("group sync: %+v, %v; want group billing synced", groups, err)
	}

	features := []string{kafkago.FeatureCreateTopics, kafkago.FeatureIdempotent, kafkago.FeatureSyncGroups, kafkago.FeatureSyncACLs}
	for _, c := range []struct {
		role kafkago.Role
		sent map[string]int64
		// shown are the requests that show the new paths ran.
		shown []kmsg.Key
	}{
		{kafkago.RoleSource, sawSrc(), []kmsg.Key{kmsg.DescribeConfigs, kmsg.ListGroups, kmsg.OffsetFetch, kmsg.DescribeACLs}},
		{kafkago.RoleTarget, sawDst(), []kmsg.Key{kmsg.OffsetForLeaderEpoch, kmsg.CreatePartitions,
			kmsg.DescribeConfigs, kmsg.IncrementalAlterConfigs, kmsg.DescribeGroups, kmsg.OffsetFetch, kmsg.OffsetCommit}},
	} {
		listed := map[string]bool{ // the connection's own requests, which no ACL checks
			kmsg.NameForKey(int16(kmsg.ApiVersions)): true, kmsg.NameForKey(int16(kmsg.SASLHandshake)): true,
			kmsg.NameForKey(int16(kmsg.SASLAuthenticate)): true,
		}
		for _, n := range kafkago.Needs() {
			if n.Role == c.role && (n.Feature == kafkago.FeatureAlways || slices.Contains(features, n.Feature)) {
				listed[kmsg.NameForKey(int16(n.API))] = true
			}
		}
		var unlisted, missing []string
		for _, name := range slices.Sorted(maps.Keys(c.sent)) {
			if !listed[name] {
				unlisted = append(unlisted, name)
			}
		}
		for _, k := range c.shown {
			if c.sent[kmsg.NameForKey(int16(k))] == 0 {
				missing = append(missing, kmsg.NameForKey(int16(k)))
			}
		}
		if len(unlisted) > 0 {
			t.Errorf("%s: requests sent that kafkago.Needs does not list for %q: %v", c.role, features, unlisted)
		}
		if len(missing) > 0 {
			t.Errorf("%s: %v never sent: the test did not run its path", c.role, missing)
		}
	}
}
