package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// Environment variables that select real brokers instead of kfake.
const (
	envSource  = "CATCHUP_IT_SOURCE"        // source broker list, comma separated
	envTarget  = "CATCHUP_IT_TARGET"        // target broker list, comma separated
	envVersion = "CATCHUP_IT_KAFKA_VERSION" // the brokers' Kafka version, for the log
	envRequire = "CATCHUP_REQUIRE_KAFKA"    // "1": fail instead of falling back to kfake
)

// testTimeout bounds every test; a hung request fails the test instead of
// the package.
const testTimeout = 90 * time.Second

// srcName is the source cluster name in the pipeline configuration, and so
// in every provenance header.
const srcName = "src"

// env is the pair of clusters one test copies between, and its store.
type env struct {
	src, dst *cluster
	storeDir string
	nonce    string // makes topic names unique on shared real brokers
	real     bool
}

// cluster is one side of an env, with a franz-go client for seeding,
// administration and reading.
type cluster struct {
	role  string // "source" or "target"
	addrs []string
	fake  *kfake.Cluster // nil on real brokers
	cl    *kgo.Client    // produces to the partition each record names
}

// realBrokers reports whether the environment names real brokers.
func realBrokers(t *testing.T) bool {
	t.Helper()
	src, dst := os.Getenv(envSource), os.Getenv(envTarget)
	if (src == "") != (dst == "") {
		t.Fatalf("set both %s and %s (real brokers) or neither (kfake); got %s=%q %s=%q",
			envSource, envTarget, envSource, src, envTarget, dst)
	}
	if src == "" && os.Getenv(envRequire) == "1" {
		t.Fatalf("%s=1 but %s and %s are not set: run test/kafka/it.sh, or load the env file of test/kafka/cluster.sh up",
			envRequire, envSource, envTarget)
	}
	return src != ""
}

// testContext is the test's context, bounded by testTimeout.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// newEnv returns the clusters of one test: two new kfake clusters (dstOpts
// are added to the target's options), or the real brokers of the
// environment. It logs what the clusters are.
func newEnv(t *testing.T, dstOpts ...kfake.Opt) *env {
	t.Helper()
	e := &env{storeDir: t.TempDir(), real: realBrokers(t)}
	var b [4]byte
	_, _ = rand.Read(b[:])
	e.nonce = hex.EncodeToString(b[:])
	if e.real {
		e.src = realCluster(t, "source", os.Getenv(envSource))
		e.dst = realCluster(t, "target", os.Getenv(envTarget))
	} else {
		e.src = fakeCluster(t, "source")
		e.dst = fakeCluster(t, "target", dstOpts...)
	}
	ctx := testContext(t)
	t.Logf("brokers: source %s; target %s", e.src.describe(ctx, t), e.dst.describe(ctx, t))
	return e
}

func fakeCluster(t *testing.T, role string, opts ...kfake.Opt) *cluster {
	t.Helper()
	fc, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatalf("start kfake %s cluster: %v", role, err)
	}
	t.Cleanup(fc.Close)
	c := &cluster{role: role, addrs: fc.ListenAddrs(), fake: fc}
	c.cl = newClient(t, c)
	return c
}

func realCluster(t *testing.T, role, brokers string) *cluster {
	t.Helper()
	c := &cluster{role: role, addrs: strings.Split(brokers, ",")}
	c.cl = newClient(t, c)
	return c
}

// newClient returns a franz-go client of c that writes each record to the
// partition it names; opts add to or override that.
func newClient(t *testing.T, c *cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(c.addrs...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(0),
	}, opts...)...)
	if err != nil {
		t.Fatalf("franz-go client of the %s cluster: %v", c.role, err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// describe names the broker kind and version, from the environment and an
// ApiVersions request.
func (c *cluster) describe(ctx context.Context, t *testing.T) string {
	t.Helper()
	api := "ApiVersions failed"
	res, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, c.cl)
	if err == nil {
		err = kerr.ErrorForCode(res.ErrorCode)
	}
	if err != nil {
		api += ": " + err.Error()
	} else {
		vs := kversion.FromApiVersionsResponse(res)
		produce, _ := vs.LookupMaxKeyVersion(int16(kmsg.Produce))
		fetch, _ := vs.LookupMaxKeyVersion(int16(kmsg.Fetch))
		api = fmt.Sprintf("%d API keys, Produce v%d, Fetch v%d", len(res.ApiKeys), produce, fetch)
		if c.fake == nil {
			api = "API versions of Kafka " + vs.VersionGuess() + "; " + api
		}
	}
	if c.fake != nil {
		return fmt.Sprintf("kfake in process at %s (%s)", strings.Join(c.addrs, ","), api)
	}
	v := os.Getenv(envVersion)
	if v == "" {
		v = "(" + envVersion + " not set)"
	}
	return fmt.Sprintf("Apache Kafka %s at %s (%s)", v, strings.Join(c.addrs, ","), api)
}

// requireKfake skips the test on real brokers: it needs kfake's fault
// injection or control, which real brokers do not have.
func requireKfake(t *testing.T, why string) {
	t.Helper()
	if realBrokers(t) {
		t.Skipf("skipped on real brokers: needs kfake to %s", why)
	}
}

// topic returns a topic name for base, unique to this test and run.
func (e *env) topic(t *testing.T, base string) string {
	name := regexp.MustCompile(`[^a-zA-Z0-9._-]+`).ReplaceAllString(t.Name(), "_")
	if len(name) > 80 {
		name = name[len(name)-80:]
	}
	return fmt.Sprintf("e2e.%s.%s.%s", name, base, e.nonce)
}

// topicConfigs are given to every topic the tests create: the records carry
// old timestamps, which time-based retention would delete.
var topicConfigs = map[string]string{"retention.ms": "-1"}

// createTopic creates topic with partitions on c (with topicConfigs plus
// configs) and waits until every partition has a leader.
func (c *cluster) createTopic(ctx context.Context, t *testing.T, topic string, partitions int32, configs map[string]string) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, partitions, 1
	all := maps.Clone(topicConfigs)
	maps.Copy(all, configs)
	for _, k := range slices.Sorted(maps.Keys(all)) {
		cfg := kmsg.NewCreateTopicsRequestTopicConfig()
		cfg.Name, cfg.Value = k, kmsg.StringPtr(all[k])
		rt.Configs = append(rt.Configs, cfg)
	}
	req.Topics = append(req.Topics, rt)
	res, err := req.RequestWith(ctx, c.cl)
	if err != nil {
		t.Fatalf("create topic %s on the %s: %v", topic, c.role, err)
	}
	if err := kerr.ErrorForCode(res.Topics[0].ErrorCode); err != nil {
		t.Fatalf("create topic %s on the %s: %v", topic, c.role, err)
	}
	c.waitLeaders(ctx, t, topic, partitions)
}

// waitLeaders polls metadata until topic has n partitions with leaders:
// real brokers create topics asynchronously.
func (c *cluster) waitLeaders(ctx context.Context, t *testing.T, topic string, n int32) {
	t.Helper()
	for {
		req := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, rt)
		res, err := req.RequestWith(ctx, c.cl)
		if err == nil && len(res.Topics) == 1 && res.Topics[0].ErrorCode == 0 && int32(len(res.Topics[0].Partitions)) == n &&
			!slices.ContainsFunc(res.Topics[0].Partitions, func(p kmsg.MetadataResponseTopicPartition) bool {
				return p.ErrorCode != 0 || p.Leader < 0
			}) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("topic %s on the %s: no leader for all %d partitions before the deadline (last error %v)", topic, c.role, n, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// createTopics creates each topic with the same partition count on the
// source and the target.
func (e *env) createTopics(ctx context.Context, t *testing.T, partitions int32, configs map[string]string, topics ...string) {
	t.Helper()
	for _, topic := range topics {
		e.src.createTopic(ctx, t, topic, partitions, configs)
		e.dst.createTopic(ctx, t, topic, partitions, configs)
	}
}

// produce writes recs synchronously and returns them with their offsets.
func (c *cluster) produce(ctx context.Context, t *testing.T, recs ...*kgo.Record) []*kgo.Record {
	t.Helper()
	if err := c.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce %d records to the %s: %v", len(recs), c.role, err)
	}
	return recs
}

// offsets returns the log start, high watermark and last stable offset of
// every partition of topics.
func (c *cluster) offsets(ctx context.Context, t *testing.T, topics ...string) map[catchup.Partition]catchup.Offsets {
	t.Helper()
	parts := c.partitions(ctx, t, topics...)
	out := make(map[catchup.Partition]catchup.Offsets, len(parts))
	for _, p := range parts {
		out[p] = catchup.Offsets{Partition: p}
	}
	for _, q := range []struct {
		ts        int64
		isolation int8
		set       func(*catchup.Offsets, int64)
	}{
		{-2, 0, func(o *catchup.Offsets, v int64) { o.LogStart = v }},
		{-1, 0, func(o *catchup.Offsets, v int64) { o.HighWatermark = v }},
		{-1, 1, func(o *catchup.Offsets, v int64) { o.LastStable = v }},
	} {
		for p, v := range c.listOffsets(ctx, t, parts, q.ts, q.isolation) {
			o := out[p]
			q.set(&o, v)
			out[p] = o
		}
	}
	return out
}

// listOffsets sends one ListOffsets request (franz-go splits it by leader)
// for timestamp ts (-2 earliest, -1 latest) under isolation.
func (c *cluster) listOffsets(ctx context.Context, t *testing.T, parts []catchup.Partition, ts int64, isolation int8) map[catchup.Partition]int64 {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID, req.IsolationLevel = -1, isolation
	byTopic := map[string][]int32{}
	for _, p := range parts {
		byTopic[p.Topic] = append(byTopic[p.Topic], p.Partition)
	}
	for _, topic := range slices.Sorted(maps.Keys(byTopic)) {
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = topic
		for _, n := range byTopic[topic] {
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = n, ts, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	res, err := req.RequestWith(ctx, c.cl)
	if err != nil {
		t.Fatalf("list offsets of the %s: %v", c.role, err)
	}
	out := map[catchup.Partition]int64{}
	for _, rt := range res.Topics {
		for _, rp := range rt.Partitions {
			if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
				t.Fatalf("list offsets of %s/%d on the %s: %v", rt.Topic, rp.Partition, c.role, err)
			}
			out[catchup.Partition{Topic: rt.Topic, Partition: rp.Partition}] = rp.Offset
		}
	}
	return out
}

// partitions lists the partitions of topics on c, sorted; a topic that does
// not exist has none.
func (c *cluster) partitions(ctx context.Context, t *testing.T, topics ...string) []catchup.Partition {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	for _, topic := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, rt)
	}
	res, err := req.RequestWith(ctx, c.cl)
	if err != nil {
		t.Fatalf("metadata of the %s: %v", c.role, err)
	}
	var out []catchup.Partition
	for _, rt := range res.Topics {
		switch err := kerr.ErrorForCode(rt.ErrorCode); err {
		case nil:
		case kerr.UnknownTopicOrPartition:
			continue
		default:
			t.Fatalf("metadata of %s on the %s: %v", *rt.Topic, c.role, err)
		}
		for _, rp := range rt.Partitions {
			out = append(out, catchup.Partition{Topic: *rt.Topic, Partition: rp.Partition})
		}
	}
	slices.SortFunc(out, catchup.Partition.Compare)
	return out
}

// deleteRecords moves the log start of p to offset, as retention would.
func (c *cluster) deleteRecords(ctx context.Context, t *testing.T, p catchup.Partition, offset int64) {
	t.Helper()
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.TimeoutMillis = 30000
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = p.Topic
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Partition, rp.Offset = p.Partition, offset
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	res, err := req.RequestWith(ctx, c.cl)
	if err != nil {
		t.Fatalf("delete records of %s below %d: %v", p, offset, err)
	}
	got := res.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(got.ErrorCode); err != nil {
		t.Fatalf("delete records of %s below %d: %v", p, offset, err)
	}
	if got.LowWatermark != offset {
		t.Fatalf("delete records of %s below %d: log start is %d", p, offset, got.LowWatermark)
	}
}
