package pipeline_test

// Leases and fencing through the whole stack: the kafka-go adapters on
// in-process kfake clusters, the engine, and the DynamoDB store on dynalite.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/replicate"
	"github.com/kafka-catchup/catchup/internal/verify"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// leaseRig is a source backlog, an empty target and a DynamoDB table.
type leaseRig struct {
	src, dst *kfake.Cluster
	file     *config.File
	table    string
	records  int
	newStore func(now func() time.Time) *dynamostore.Store
}

func newLeaseRig(t *testing.T, partitions int32, perPartition int, yamlExtra string) *leaseRig {
	t.Helper()
	const topic = "events"
	src, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	dst, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dst.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(src.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for p := range partitions {
		for i := range perPartition {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Key: []byte(fmt.Sprint(i)),
				Value: []byte(strings.Repeat("x", 200)), Headers: []kgo.RecordHeader{{Key: "i", Value: []byte(fmt.Sprint(i))}}})
		}
	}
	// Small source batches: a fetch returns whole batches, and the engine
	// checks its lease once per fetched batch.
	for i := 0; i < len(recs); i += 10 {
		if err := cl.ProduceSync(t.Context(), recs[i:min(i+10, len(recs))]...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	endpoint := dynamotest.Endpoint(t)
	client := dynamotest.Client(t, endpoint)
	table := dynamotest.Table(t, client)
	f, err := config.Parse([]byte(fmt.Sprintf(`store: dynamodb://%s
pipelines:
  - name: leases
    source: {name: src, brokers: [%s]}
    target: {name: dst, brokers: [%s]}
    topics: {include: [%s]}
    producer: {batch_records: 20}
    fetch_bytes: 4096
%s`, table, src.ListenAddrs()[0], dst.ListenAddrs()[0], topic, yamlExtra)), "leases.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return &leaseRig{src: src, dst: dst, file: f, table: table, records: int(partitions) * perPartition,
		newStore: func(now func() time.Time) *dynamostore.Store {
			return dynamostore.New(client, table, dynamostore.WithNow(now))
		}}
}

func (r *leaseRig) open(t *testing.T, owner string, store checkpoint.Store, now func() time.Time) *pipeline.Pipeline {
	t.Helper()
	p, err := pipeline.Open(t.Context(), r.file, &r.file.Pipelines[0], pipeline.Options{Owner: owner, Store: store, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// checkExact verifies every partition of the target against the source.
func (r *leaseRig) checkExact(t *testing.T) {
	t.Helper()
	pc := r.file.Pipelines[0]
	src, err := pipeline.ConnectReader(pc.Source, "read_uncommitted")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := pipeline.ConnectReader(pc.Target, "read_uncommitted")
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	parts, err := src.Partitions(t.Context(), pc.Topics.Match)
	if err != nil {
		t.Fatal(err)
	}
	marks, err := src.ListOffsets(t.Context(), parts)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range marks {
		res, err := verify.Partition(t.Context(), src, dst, m.Partition, m.Partition, m.LogStart, m.HighWatermark, verify.Options{Cluster: "src"})
		if err != nil {
			t.Fatal(err)
		}
		if !res.OK() || res.Matched != m.HighWatermark {
			t.Errorf("%s: %+v; want all %d records matched exactly", m.Partition, res, m.HighWatermark)
		}
	}
}

// TestFencedRunStopsProducing: a run whose lease expires and is taken over
// by another run has its next write refused with ErrFenced and copies
// nothing more; a later run completes an exact copy.
func TestFencedRunStopsProducing(t *testing.T) {
	r := newLeaseRig(t, 1, 600, "")
	var mu sync.Mutex
	zombieNow := time.Now()
	zombieClock := func() time.Time { mu.Lock(); defer mu.Unlock(); return zombieNow }
	p := catchup.Partition{Topic: "events", Partition: 0}

	// After the 5th produce request reaches the target, the zombie's clock
	// jumps past its lease and another run takes the partition over.
	var produces, afterTakeover atomic.Int64
	var taken atomic.Bool
	r.dst.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		if taken.Load() {
			afterTakeover.Add(1)
		}
		if produces.Add(1) == 5 {
			mu.Lock()
			zombieNow = zombieNow.Add(21 * time.Minute)
			mu.Unlock()
			usurper := r.newStore(func() time.Time { return time.Now().Add(21 * time.Minute) })
			if _, _, err := usurper.Acquire(context.Background(), "leases", p, "usurper", 20*time.Minute); err != nil {
				t.Errorf("usurper Acquire: %v", err)
			}
			taken.Store(true)
		}
		r.dst.KeepControl()
		return nil, nil, false
	})
	zombie := r.open(t, "zombie", r.newStore(zombieClock), zombieClock)
	rep, err := zombie.Engine.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	res := rep.Partitions[0]
	if res.Status != replicate.StatusFenced || !errors.Is(res.Err, checkpoint.ErrFenced) {
		t.Fatalf("zombie: status %s err %v; want fenced with checkpoint.ErrFenced", res.Status, res.Err)
	}
	// The produce in flight when the clock jumped may complete; no other may follow.
	if n := afterTakeover.Load(); n > 0 {
		t.Errorf("zombie sent %d produce requests after it lost its lease; want 0", n)
	}
	t.Logf("zombie copied %d of %d records before it was fenced", res.Copied, r.records)

	heirClock := func() time.Time { return time.Now().Add(42 * time.Minute) } // the usurper's lease has expired unused
	heir := r.open(t, "heir", r.newStore(heirClock), heirClock)
	rep, err = heir.Engine.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if res := rep.Partitions[0]; res.Status != replicate.StatusDone {
		t.Errorf("heir: status %s err %v; want done", res.Status, res.Err)
	}
	r.checkExact(t)
}

// TestConcurrentRunsShareWithoutOverlap: eight runs of one pipeline started
// at once split the partitions between them; each partition is copied by one
// run at a time and the target is an exact copy.
func TestConcurrentRunsShareWithoutOverlap(t *testing.T) {
	const partitions, per = 8, 500
	r := newLeaseRig(t, partitions, per, "    parallelism: 2\n")
	start := make(chan struct{})
	reports := make([]*replicate.Report, 8)
	stores := make([]*dynamostore.Store, 8)
	var wg sync.WaitGroup
	for i := range reports {
		stores[i] = r.newStore(time.Now)
		p := r.open(t, fmt.Sprintf("run-%d", i), stores[i], nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			rep, err := p.Engine.Run(t.Context())
			if err != nil {
				t.Errorf("run-%d: %v", i, err)
				return
			}
			reports[i] = rep
		}()
	}
	close(start)
	wg.Wait()
	copied := map[catchup.Partition]int64{}
	var requests, bytes int64
	for i, rep := range reports {
		if rep == nil {
			continue
		}
		requests += stores[i].Requests()
		for _, res := range rep.Partitions {
			copied[res.Partition] += res.Copied
			bytes += res.Bytes
			if res.Status != replicate.StatusDone && res.Status != replicate.StatusLeased {
				t.Errorf("run-%d %s: status %s err %v; want done or leased", i, res.Partition, res.Status, res.Err)
			}
		}
	}
	for p := range int32(partitions) {
		if n := copied[catchup.Partition{Topic: "events", Partition: p}]; n != per {
			t.Errorf("events/%d: the runs copied %d records together; want exactly %d (once each)", p, n, per)
		}
	}
	r.checkExact(t)
	t.Logf("8 concurrent runs: %d DynamoDB requests for %d bytes copied (%.0f requests per GB at the default 30s commit interval, dominated by the per-run acquire/commit/release of every partition)",
		requests, bytes, float64(requests)/(float64(bytes)/1e9))
}

// TestDynamoDBRequestsPerRun measures what one run costs in DynamoDB
// requests at the default commit interval (30s with a DynamoDB store).
func TestDynamoDBRequestsPerRun(t *testing.T) {
	const partitions, per = 8, 2000 // about 4 MB of 200-byte values
	r := newLeaseRig(t, partitions, per, "")
	store := r.newStore(time.Now)
	p := r.open(t, "one-run", store, nil)
	rep, err := p.Engine.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	copied, bytes, failed := rep.Totals()
	if failed != 0 || copied != partitions*per {
		t.Fatalf("copied %d records with %d failed partitions; want %d and 0", copied, failed, partitions*per)
	}
	// One Query to plan; per partition: acquire, the commit before the first
	// produce, and the final commit, which releases the lease too; no
	// periodic commit in a run shorter than 30s.
	if rep.StoreRequests != store.Requests() || rep.StoreRequests != 1+3*partitions {
		t.Errorf("report shows %d DynamoDB requests, the store counted %d; want them equal and %d",
			rep.StoreRequests, store.Requests(), 1+3*partitions)
	}
	t.Logf("one run of %d partitions: %d DynamoDB requests for %d bytes; a 1 GB window over %d partitions costs the same %d writes, and one more per partition every 30s of copying",
		partitions, rep.StoreRequests, bytes, partitions, rep.StoreRequests)
	r.checkExact(t)

	// A second run on the same store (as in run --every or a warm Lambda)
	// reports its own requests, not the store's total: one Query, nothing
	// to copy.
	before := store.Requests()
	rep2, err := p.Engine.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := store.Requests() - before; rep2.StoreRequests != got || rep2.StoreRequests != 1 {
		t.Errorf("second run reports %d DynamoDB requests, the store counted %d during it; want them equal and 1", rep2.StoreRequests, got)
	}
}
