package e2e

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/pipeline"
)

// requestCounter counts the requests a kfake cluster receives per API key,
// and the Metadata requests that ask for every topic of the cluster.
type requestCounter struct {
	mu         sync.Mutex
	keys       map[string]int
	allTopics  int // Metadata requests with a null topic list
	namedTopic int // most topics named by one Metadata request
}

func countRequests(c *kfake.Cluster) *requestCounter {
	rc := &requestCounter{keys: map[string]int{}}
	for key := int16(0); key <= kmsg.MaxKey; key++ {
		c.ControlKey(key, func(req kmsg.Request) (kmsg.Response, error, bool) {
			c.KeepControl()
			rc.mu.Lock()
			defer rc.mu.Unlock()
			rc.keys[kmsg.NameForKey(req.Key())]++
			if m, ok := req.(*kmsg.MetadataRequest); ok {
				if m.Topics == nil {
					rc.allTopics++
				}
				rc.namedTopic = max(rc.namedTopic, len(m.Topics))
			}
			return nil, nil, false
		})
	}
	return rc
}

func (rc *requestCounter) reset() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.keys, rc.allTopics, rc.namedTopic = map[string]int{}, 0, 0
}

func (rc *requestCounter) snapshot() (keys map[string]int, allTopics int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	keys = make(map[string]int, len(rc.keys))
	for k, n := range rc.keys {
		keys[k] = n
	}
	return keys, rc.allTopics
}

// TestRequestsGrowWithBrokersAndTopics pins the Kafka requests of a run over
// 200 partitions (8 topics of 25, 3 brokers per cluster) to bounds in
// brokers and topics, so that a return to one request per partition (a
// per-partition ListOffsets for reconciliation, a metadata name per
// partition, a metadata refresh of the whole cluster for as long as the run
// lasts) fails: the first run (every partition reconciles), an idle run, a
// run with 2 of the 200 partitions active (1 %), a run with all active and
// another, in which every partition resumes with a copy in the target and is
// anchor-checked. Fetch and Produce are per active partition by nature and
// are bounded by the active count: the anchor check reads the source record
// from the partition's first data fetch, not with a fetch of its own.
func TestRequestsGrowWithBrokersAndTopics(t *testing.T) {
	requireKfake(t, "count requests per API key")
	const (
		brokers    = 3
		topicCount = 8
		perTopic   = 25
		partitions = topicCount * perTopic
	)
	e := &env{storeDir: t.TempDir(), nonce: "requests"}
	e.src = fakeCluster(t, "source", kfake.NumBrokers(brokers))
	e.dst = fakeCluster(t, "target", kfake.NumBrokers(brokers))
	ctx := testContext(t)
	var topics []string
	for i := range topicCount {
		topics = append(topics, e.topic(t, fmt.Sprint(i)))
	}
	e.createTopics(ctx, t, perTopic, nil, topics...)
	// A topic outside the pipeline: the metadata refresh must not be about it.
	e.src.createTopic(ctx, t, e.topic(t, "other"), perTopic, nil)
	yaml := e.configYAML(topics)
	counters := map[string]*requestCounter{"source": countRequests(e.src.fake), "target": countRequests(e.dst.fake)}

	activate := func(n int) {
		var recs []*kgo.Record
		for i := range n {
			recs = append(recs, &kgo.Record{Topic: topics[i%topicCount], Partition: int32(i / topicCount), Value: []byte("v")})
		}
		e.src.produce(ctx, t, recs...)
	}
	for _, tc := range []struct {
		name   string
		active int // partitions with one new record
	}{
		{name: "first run"},
		{name: "idle"},
		{name: "1% active", active: partitions / 100},
		{name: "all active", active: partitions},
		// Every partition resumed with a copy in the target: each is
		// anchor-checked.
		{name: "all active again", active: partitions},
	} {
		t.Run(tc.name, func(t *testing.T) {
			activate(tc.active)
			for _, c := range counters {
				c.reset()
			}
			start := time.Now()
			rep := mustRun(ctx, t, yaml, pipeline.Options{})
			// kafka-go refreshes metadata in the background, at most a
			// second apart per Transport (two of them at most per run and
			// cluster): those requests grow with the run's length, not its
			// size, and the machine may be slow.
			refreshes := 2 * (int(time.Since(start)/time.Second) + 1)
			var copied int64
			for _, r := range rep.Partitions {
				copied += r.Copied
			}
			if copied != int64(tc.active) {
				t.Fatalf("copied %d records, want %d", copied, tc.active)
			}
			for _, side := range []string{"source", "target"} {
				keys, all := counters[side].snapshot()
				t.Logf("%s: %v; metadata of every topic %d", side, keys, all)
				bounds := map[string]int{
					// Source: earliest, latest and last stable per broker.
					// Target: the end offsets of the partitions to copy,
					// once per broker.
					"ListOffsets": map[string]int{"source": 3 * brokers, "target": brokers}[side],
					// The per-partition regression is 200.
					"Metadata": brokers + topicCount + refreshes,
					// A connection each: one per broker and Transport (two
					// at most), and the ones lent to raw exchanges in
					// flight at once, at most parallelism (8, the default)
					// per broker. The per-partition regression is 200.
					"ApiVersions": brokers * (2 + 8),
					// Source: one fetch per active partition (one new
					// record each), which also reads the anchor (the
					// record before the checkpoint); target: one anchor
					// read-back per resumed partition.
					"Fetch":   tc.active,
					"Produce": tc.active,
					// Target: the leaders' log ends of the partitions
					// without a checkpoint over an empty target (the
					// first run's), once per broker.
					"OffsetForLeaderEpoch": brokers,
				}
				for key, n := range keys {
					bound, ok := bounds[key]
					if !ok {
						bound = 1 // InitProducerID, DescribeConfigs...: once per run
					}
					if n > bound {
						t.Errorf("%s %s requests = %d, want at most %d for %d partitions, %d topics, %d brokers (%d active)",
							side, key, n, bound, partitions, topicCount, brokers, tc.active)
					}
				}
				// The source lists its topics once; kafka-go's refresh
				// names the pipeline's topics only. The target never
				// needs all.
				if maxAll := map[string]int{"source": 1, "target": 0}[side]; all > maxAll {
					t.Errorf("%s: %d metadata requests for every topic of the cluster, want at most %d", side, all, maxAll)
				}
			}
		})
	}
}
