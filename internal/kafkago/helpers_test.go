package kafkago_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/kafkago"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

var (
	_ replicate.Source = (*kafkago.Source)(nil)
	_ replicate.Target = (*kafkago.Target)(nil)
)

// testTimeout bounds every test's context; a hung request fails the test.
const testTimeout = 30 * time.Second

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func newCluster(t *testing.T, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func clusterConfig(name string, c *kfake.Cluster) kafkago.Settings {
	return kafkago.Settings{Name: name, Brokers: c.ListenAddrs(), ClientID: "catchup"}
}

func newSource(t *testing.T, c *kfake.Cluster, isolation string) *kafkago.Source {
	t.Helper()
	s, err := kafkago.NewSource(clusterConfig("src", c), isolation)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// newTarget returns a Target on c producing as p says, its zero fields at
// the configuration's defaults (config.Producer.SetDefaults), as
// pipeline.Connect passes them.
func newTarget(t *testing.T, c *kfake.Cluster, p config.Producer) *kafkago.Target {
	t.Helper()
	p.SetDefaults()
	tg, err := kafkago.NewTarget(clusterConfig("dst", c), pipeline.ProducerSettings(p))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tg.Close)
	return tg
}

// newProducer returns a franz-go client that writes to the partitions the
// records name, flushing every ProduceSync as its own batch.
func newProducer(t *testing.T, c *kfake.Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(c.ListenAddrs()...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// namedCodec is a compression codec of franz-go's producer and its name,
// which tests use as a topic or subtest name.
type namedCodec struct {
	name  string
	codec kgo.CompressionCodec
}

// compressions returns the codecs Kafka compresses record batches with.
func compressions() []namedCodec {
	return []namedCodec{
		{"gzip", kgo.GzipCompression()},
		{"snappy", kgo.SnappyCompression()},
		{"lz4", kgo.Lz4Compression()},
		{"zstd", kgo.ZstdCompression()},
	}
}

// fetchBatch fetches p from offset from, one batch (the broker returns a
// first batch larger than the byte limit whole).
func fetchBatch(ctx context.Context, t *testing.T, s *kafkago.Source, p catchup.Partition, from int64) catchup.Fetched {
	t.Helper()
	f, err := s.Fetch(ctx, p, from, 1)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func produceSync(ctx context.Context, t *testing.T, cl *kgo.Client, recs ...*kgo.Record) {
	t.Helper()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// inTxn writes recs in one transaction and commits or aborts it.
func inTxn(ctx context.Context, t *testing.T, cl *kgo.Client, commit bool, recs ...*kgo.Record) {
	t.Helper()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produceSync(ctx, t, cl, recs...)
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatal(err)
	}
}

func values(topic string, partition int32, vs ...string) []*kgo.Record {
	var out []*kgo.Record
	for _, v := range vs {
		out = append(out, &kgo.Record{Topic: topic, Partition: partition, Value: []byte(v)})
	}
	return out
}

// consumeAll reads every record of p with franz-go, uncommitted data
// included, until n records arrived.
func consumeAll(ctx context.Context, t *testing.T, c *kfake.Cluster, p catchup.Partition, n int) []catchup.Record {
	t.Helper()
	cl := newProducer(t, c,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{p.Topic: {p.Partition: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
	var out []catchup.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consume %s: %d of %d records: %v", p, len(out), n, err)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("consume %s: %v", p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			rec := catchup.Record{Offset: r.Offset, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp}
			for _, h := range r.Headers {
				rec.Headers = append(rec.Headers, catchup.Header{Key: h.Key, Value: h.Value})
			}
			out = append(out, rec)
		})
	}
	return out
}

// deleteRecords moves the log start of p to offset.
func deleteRecords(ctx context.Context, t *testing.T, c *kfake.Cluster, p catchup.Partition, offset int64) {
	t.Helper()
	cl := newProducer(t, c)
	req := kmsg.NewPtrDeleteRecordsRequest()
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = p.Topic
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Partition, rp.Offset = p.Partition, offset
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 5000
	res, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if code := res.Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("delete records of %s below %d: error code %d", p, offset, code)
	}
}

// countRequests counts the requests of key that c receives from now on.
func countRequests(c *kfake.Cluster, key kmsg.Key) *atomic.Int32 {
	var n atomic.Int32
	c.ControlKey(int16(key), func(kmsg.Request) (kmsg.Response, error, bool) {
		n.Add(1)
		return nil, nil, false // observe only; the cluster answers
	})
	return &n
}

// fetchAll fetches p from from until Next reaches to.
func fetchAll(ctx context.Context, t *testing.T, s *kafkago.Source, p catchup.Partition, from, to int64) []catchup.Record {
	t.Helper()
	var out []catchup.Record
	for from < to {
		f, err := s.Fetch(ctx, p, from, 1<<20)
		if err != nil {
			t.Fatalf("Fetch(%s, %d): %v", p, from, err)
		}
		if f.Next <= from {
			t.Fatalf("Fetch(%s, %d): Next %d does not advance below %d", p, from, f.Next, to)
		}
		out = append(out, f.Records...)
		from = f.Next
	}
	return out
}

// produceAll produces recs with as many Produce calls (one request each) as
// it takes, and returns the records acknowledged and the last end offset.
func produceAll(ctx context.Context, tg *kafkago.Target, p catchup.Partition, recs []catchup.Record) (acked int, end int64, err error) {
	end = -1
	for acked < len(recs) {
		n, e, err := tg.Produce(ctx, p, recs[acked:], nil)
		if err != nil {
			return acked, end, err
		}
		acked, end = acked+n, e
	}
	return acked, end, nil
}
