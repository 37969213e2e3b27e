package fanout

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/kafkago"
	"github.com/kafka-catchup/catchup/internal/kafkago/kafkagotest"
	"github.com/kafka-catchup/catchup/internal/metrics"
	"github.com/kafka-catchup/catchup/internal/metrics/emftest"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/worker"
)

// recorder is an Invoker that records payloads and the most calls in flight.
type recorder struct {
	mu       sync.Mutex
	payloads [][]byte
	inFlight atomic.Int32
	most     atomic.Int32
	fail     bool
}

func (r *recorder) Invoke(_ context.Context, payload []byte) error {
	n := r.inFlight.Add(1)
	defer r.inFlight.Add(-1)
	for m := r.most.Load(); n > m && !r.most.CompareAndSwap(m, n); m = r.most.Load() {
	}
	time.Sleep(5 * time.Millisecond) // let calls overlap
	if r.fail {
		return errors.New("TooManyRequestsException")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.payloads = append(r.payloads, payload)
	return nil
}

// rig is a source with records in 12 partitions of topic t, an empty
// target and a memory store.
func rig(t *testing.T) (*config.File, *checkpoint.MemStore) {
	t.Helper()
	f, store, _ := rigClusters(t)
	return f, store
}

// rigClusters is rig, with its source and target clusters.
func rigClusters(t *testing.T) (*config.File, *checkpoint.MemStore, [2]*kfake.Cluster) {
	t.Helper()
	var (
		addrs    [2]string
		clusters [2]*kfake.Cluster
	)
	for i := range addrs {
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(12, "t"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		addrs[i], clusters[i] = c.ListenAddrs()[0], c
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs[0]), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for p := range int32(12) {
		for i := range 10 * (p + 1) {
			recs = append(recs, &kgo.Record{Topic: "t", Partition: p, Value: bytes.Repeat([]byte{'x'}, 100+int(i))})
		}
	}
	if err := cl.ProduceSync(t.Context(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	f, err := config.Parse(fmt.Appendf(nil, "pipelines:\n  - name: p\n    source: {brokers: [%s]}\n    target: {brokers: [%s]}\n    topics: {include: [t]}\n",
		addrs[0], addrs[1]), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return f, checkpoint.NewMemStore(nil), clusters
}

func TestDispatch(t *testing.T) {
	f, store := rig(t)
	// Partition 0 is leased by a live worker, partition 1 by a dead one.
	now := time.Now()
	if _, _, err := store.Acquire(t.Context(), "p", catchup.Partition{Topic: "t", Partition: 0}, "live", time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.Acquire(t.Context(), "p", catchup.Partition{Topic: "t", Partition: 1}, "dead", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	inv := &recorder{}
	var out bytes.Buffer
	d, err := New(Options{File: f, Store: store, Invoker: inv, Concurrency: 2,
		Limits:  Limits{MaxShards: 3, MaxPartitions: 3, PartitionCeiling: 3, MaxBytes: 1 << 30},
		Metrics: metrics.New(&out, "catchup", nil), Service: "test", TopicMetrics: true,
		Now: func() time.Time { return now.Add(time.Second) }})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := d.Handle(t.Context(), json.RawMessage(`{}`))
	if err != nil {
		t.Fatalf("Handle: %v", err)
	}
	ps := sum.Pipelines[0]
	if sum.Shards != 3 || sum.Invoked != 3 || ps.Lagging != 12 || ps.Leased != 1 || ps.Deferred != 2 || sum.ETATicks != 2 {
		t.Errorf("summary %+v, pipeline %+v; want 12 lagging, 1 leased, 3 shards of 3 partitions, 2 deferred, 2 ticks", sum, ps)
	}
	if most := inv.most.Load(); most > 2 {
		t.Errorf("%d Invoke calls in flight at once, want at most 2", most)
	}
	seen := map[catchup.Partition]bool{}
	for _, p := range inv.payloads {
		ev, err := worker.DecodeEvent(p)
		if err != nil {
			t.Fatalf("payload %s is not a worker event: %v", p, err)
		}
		for _, wp := range ev.Partitions {
			part := catchup.Partition{Topic: wp.Topic, Partition: wp.Partition}
			if seen[part] || part.Partition == 0 {
				t.Errorf("%s sent twice, or while leased", part)
			}
			seen[part] = true
		}
	}
	if !seen[catchup.Partition{Topic: "t", Partition: 11}] || seen[catchup.Partition{Topic: "t", Partition: 2}] {
		t.Errorf("sent %v; want the largest backlogs (t/3 to t/11) first, t/1 and t/2 deferred", seen)
	}
	docs, err := emftest.Lines(out.Bytes())
	if err != nil || len(docs) != 3 {
		t.Fatalf("EMF: %d documents, %v; want a topic line, a pipeline line and the ETA", len(docs), err)
	}
	if got := docs[1].Values[metrics.LagRecords]; got != 780 {
		t.Errorf("LagRecords = %v, want 780 (10+20+...+120)", got)
	}
	if got := docs[2].Values[metrics.ETATicks]; got != 2 {
		t.Errorf("ETATicks = %v, want 2", got)
	}

	inv.fail = true
	if _, err := d.Handle(t.Context(), nil); err == nil || !strings.Contains(err.Error(), "TooManyRequestsException") {
		t.Errorf("Handle with failing invokes = %v, want the Invoke error (Lambda retries the dispatch)", err)
	}
	if s, err := d.Handle(t.Context(), json.RawMessage(`{"pipelines":["nope"]}`)); err != nil || s.Error == "" {
		t.Errorf("Handle of an unknown pipeline = %+v, %v; want a summary with an error", s, err)
	}
}

type fakeLambda struct{ in *lambda.InvokeInput }

func (f *fakeLambda) Invoke(_ context.Context, in *lambda.InvokeInput, _ ...func(*lambda.Options)) (*lambda.InvokeOutput, error) {
	f.in = in
	return &lambda.InvokeOutput{StatusCode: 202}, nil
}

func TestLambdaInvokerIsAsynchronous(t *testing.T) {
	api := &fakeLambda{}
	if err := (LambdaInvoker{Client: api, Function: "catchup-replicate"}).Invoke(t.Context(), []byte(`{"pipeline":"p"}`)); err != nil {
		t.Fatal(err)
	}
	if *api.in.FunctionName != "catchup-replicate" || api.in.InvocationType != types.InvocationTypeEvent || string(api.in.Payload) != `{"pipeline":"p"}` {
		t.Errorf("Invoke input %+v, want an Event invocation of catchup-replicate", api.in)
	}
}

func TestDecodeEvent(t *testing.T) {
	for _, tt := range []struct {
		payload string
		want    int // pipelines named; -1 for an error
	}{{``, 0}, {`{}`, 0}, {`{"pipelines":["a","b"]}`, 2}, {`{"pipeline":"a"}`, -1}, {`[]`, -1}} {
		ev, err := DecodeEvent([]byte(tt.payload))
		if got := len(ev.Pipelines); (err != nil) != (tt.want < 0) || (err == nil && got != tt.want) {
			t.Errorf("DecodeEvent(%q) = %v, %v; want %d pipelines", tt.payload, ev, err, tt.want)
		}
	}
}

// TestDispatchMetricsPerTopicOptIn: without TopicMetrics no document has a
// topic dimension (each topic would be CloudWatch custom metrics of its
// own), and the pipeline and service figures the alarms read are there.
func TestDispatchMetricsPerTopicOptIn(t *testing.T) {
	f, store := rig(t)
	for _, perTopic := range []bool{false, true} {
		var out bytes.Buffer
		d, err := New(Options{File: f, Store: store, Invoker: &recorder{}, TopicMetrics: perTopic,
			Metrics: metrics.New(&out, "catchup", nil), Service: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Handle(t.Context(), nil); err != nil {
			t.Fatalf("Handle: %v", err)
		}
		docs, err := emftest.Lines(out.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		topics, pipelineLag := 0, 0.0
		for _, doc := range docs {
			if doc.Members[metrics.DimTopic] != nil {
				topics++
				continue
			}
			if slices.ContainsFunc(doc.Dimensions, func(set []string) bool { return slices.Equal(set, []string{metrics.DimService}) }) {
				pipelineLag += doc.Values[metrics.LagRecords]
			}
		}
		if want := map[bool]int{false: 0, true: 1}[perTopic]; topics != want {
			t.Errorf("TopicMetrics %v: %d documents with a topic dimension, want %d", perTopic, topics, want)
		}
		if pipelineLag != 780 {
			t.Errorf("TopicMetrics %v: LagRecords per service %v, want 780", perTopic, pipelineLag)
		}
	}
}

// TestDispatchSyncsGroups: with sync_groups, a dispatch commits the
// selected source group's translated offsets on the target once the copy
// has reached them, reports them per group and partition in its summary
// and counts them in its metrics; within the interval it does not sync again.
// It sends each cluster only the requests template.yaml grants the dispatch
// function: kafkago.DispatchReads and those of sync_groups.
func TestDispatchSyncsGroups(t *testing.T) {
	f, store, clusters := rigClusters(t)
	pc := &f.Pipelines[0]
	src, dst := pc.Source.Brokers[0], pc.Target.Brokers[0]
	f, err := config.Parse(fmt.Appendf(nil, "pipelines:\n  - name: p\n    source: {brokers: [%s]}\n    target: {brokers: [%s]}\n    topics: {include: [t]}\n"+
		"    create_topics: true\n    sync_groups: {include: [g], interval: 1h}\n", src, dst), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pc = &f.Pipelines[0]
	p, err := pipeline.Open(t.Context(), f, pc, pipeline.Options{Owner: "worker", Store: store})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Engine.Run(t.Context()); err != nil {
		t.Fatalf("copy: %v", err)
	}
	part := func(n int32) catchup.Partition { return catchup.Partition{Topic: "t", Partition: n} }
	if err := p.Source.Cluster().CommitOffsets(t.Context(), "g", map[catchup.Partition]int64{part(0): 5, part(3): 40}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	d, err := New(Options{File: f, Store: store, Invoker: &recorder{}, Metrics: metrics.New(&out, "catchup", nil), Service: "test"})
	if err != nil {
		t.Fatal(err)
	}
	sawSrc, sawDst := kafkagotest.Record(clusters[0]), kafkagotest.Record(clusters[1])
	sum, err := d.Handle(t.Context(), json.RawMessage(`{}`))
	if err != nil {
		t.Fatalf("Handle: %v", err)
	}
	for role, sent := range map[kafkago.Role][]protocol.ApiKey{kafkago.RoleSource: sawSrc(), kafkago.RoleTarget: sawDst()} {
		for _, k := range sent {
			if !slices.Contains(kafkago.DispatchReads(), k) && !slices.ContainsFunc(kafkago.Needs(), func(n kafkago.Need) bool {
				return n.Role == role && n.API == k && n.Feature == kafkago.FeatureSyncGroups
			}) {
				t.Errorf("the dispatch sent %s to the %s, which the template does not grant the dispatch function", k, role)
			}
		}
	}
	ps := sum.Pipelines[0]
	if ps.GroupsSynced != 2 || ps.GroupsSkipped != 0 || len(ps.Groups) != 1 || ps.Groups[0].Group != "g" {
		t.Fatalf("pipeline summary %+v; want group g, 2 partitions synced", ps)
	}
	got, err := p.Target.Cluster().CommittedOffsets(t.Context(), "g")
	if err != nil || got[part(0)] != 5 || got[part(3)] != 40 || len(got) != 2 {
		t.Errorf("g on the target: %v, %v; want t/0 at 5, t/3 at 40", got, err)
	}
	docs, err := emftest.Lines(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	synced := 0.0
	for _, doc := range docs {
		if slices.ContainsFunc(doc.Dimensions, func(set []string) bool { return slices.Contains(set, metrics.DimPipeline) }) {
			synced += doc.Values[metrics.GroupOffsetsSynced]
		}
	}
	if synced != 2 {
		t.Errorf("GroupOffsetsSynced per pipeline = %v, want 2", synced)
	}
	if sum, err = d.Handle(t.Context(), json.RawMessage(`{}`)); err != nil || sum.Pipelines[0].Groups != nil {
		t.Errorf("a second dispatch within the interval: %+v, %v; want no group sync", sum, err)
	}
}

// TestDispatchUnderLatest: under start: latest the dispatcher's survey
// begins the pipeline's topics (stores their begins), so that the records
// written after it show as lag in the next survey and are handed to
// workers; without it every window of a new pipeline is its latest, empty,
// survey after survey, and nothing is ever copied.
func TestDispatchUnderLatest(t *testing.T) {
	_, store, clusters := rigClusters(t)
	f, err := config.Parse(fmt.Appendf(nil, "pipelines:\n  - name: p\n    source: {brokers: [%s]}\n    target: {brokers: [%s]}\n    topics: {include: [t]}\n    start: latest\n",
		clusters[0].ListenAddrs()[0], clusters[1].ListenAddrs()[0]), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	inv := &recorder{}
	d, err := New(Options{File: f, Store: store, Invoker: inv, Service: "test"})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := d.Handle(t.Context(), json.RawMessage(`{}`))
	if err != nil {
		t.Fatalf("Handle: %v", err)
	}
	if ps := sum.Pipelines[0]; ps.Lagging != 0 || sum.Invoked != 0 {
		t.Fatalf("first dispatch: %d lagging, %d invoked; want none (latest: nothing to copy yet)", ps.Lagging, sum.Invoked)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(clusters[0].ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for range 5 {
		if err := cl.ProduceSync(t.Context(), &kgo.Record{Topic: "t", Partition: 3, Value: []byte("after")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	sum, err = d.Handle(t.Context(), json.RawMessage(`{}`))
	if err != nil {
		t.Fatalf("Handle: %v", err)
	}
	if ps := sum.Pipelines[0]; ps.Lagging != 1 || ps.LagRecords != 5 || sum.Invoked != 1 {
		t.Errorf("second dispatch: %d lagging partitions, %d records, %d invoked; want t/3's 5 records written since the first, handed to a worker",
			ps.Lagging, ps.LagRecords, sum.Invoked)
	}
}
