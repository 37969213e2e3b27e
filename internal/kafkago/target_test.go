package kafkago_test

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/kafkago"
	"github.com/kafka-catchup/catchup/internal/pipeline"
)

// copyRecords returns n records that exercise every field; their Offset is
// the position, standing for a source offset.
func copyRecords(n int, base time.Time) []catchup.Record {
	shapes := []catchup.Record{
		{Key: nil, Value: []byte("nil key")},
		{Key: []byte{}, Value: []byte("empty key")},
		{Key: []byte("tombstone"), Value: nil},
		{Key: []byte("empty value"), Value: []byte{}},
		{Key: []byte("headers"), Value: []byte("v"), Headers: []catchup.Header{
			{Key: "nil", Value: nil}, {Key: "empty", Value: []byte{}}, {Key: catchup.ProvenanceHeader, Value: []byte("v1:src:t:0:1")},
		}},
	}
	out := make([]catchup.Record, n)
	for i := range out {
		out[i] = shapes[i%len(shapes)]
		out[i].Offset = int64(100 + i)
		out[i].Timestamp = base.Add(time.Duration(i) * time.Millisecond)
	}
	return out
}

// atTarget gives recs the offsets they get when appended at first.
func atTarget(recs []catchup.Record, first int64) []catchup.Record {
	out := make([]catchup.Record, len(recs))
	for i, r := range recs {
		r.Offset = first + int64(i)
		out[i] = r
	}
	return out
}

func TestProduceRoundTrip(t *testing.T) {
	ctx := testContext(t)
	base := time.UnixMilli(1_700_000_000_000)
	for _, compression := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		c := newCluster(t, kfake.SeedTopics(2, "t"))
		tg := newTarget(t, c, config.Producer{Compression: compression})
		p := catchup.Partition{Topic: "t", Partition: 1}
		recs := copyRecords(12, base)

		acked, end, err := produceAll(ctx, tg, p, recs)
		if err != nil || acked != 12 || end != 12 {
			t.Fatalf("%s: Produce = %d, %d, %v; want 12, 12, nil", compression, acked, end, err)
		}
		acked, end, err = produceAll(ctx, tg, p, recs[:3])
		if err != nil || acked != 3 || end != 15 {
			t.Fatalf("%s: second Produce = %d, %d, %v; want 3, 15, nil", compression, acked, end, err)
		}
		want := append(atTarget(recs, 0), atTarget(recs[:3], 12)...)
		if diff := cmp.Diff(want, consumeAll(ctx, t, c, p, 15)); diff != "" {
			t.Errorf("%s: records read back by franz-go (-want +got):\n%s", compression, diff)
		}
		ends, err := tg.EndOffsets(ctx, []catchup.Partition{p, {Topic: "t"}})
		if diff := cmp.Diff(map[catchup.Partition]int64{p: 15, {Topic: "t"}: 0}, ends); diff != "" || err != nil {
			t.Errorf("%s: EndOffsets (-want +got):\n%s%v", compression, diff, err)
		}
	}
}

// TestProduceCompressionLevel: producer.compression_level reaches the
// batches the target receives (each level its own encoding, the smallest
// batch at the highest level), which the broker and franz-go read back
// whole; and a level for a codec without levels is refused when the Target
// is made.
func TestProduceCompressionLevel(t *testing.T) {
	ctx := testContext(t)
	recs := make([]catchup.Record, 2000)
	for i := range recs { // text with repeats at many distances, as JSON has: levels differ on it
		recs[i] = catchup.Record{Offset: int64(i), Timestamp: time.UnixMilli(1_700_000_000_000),
			Value: fmt.Appendf(nil, `{"order":%d,"customer":"c-%d","sku":"s-%d","qty":%d,"note":"%s"}`,
				i, i*7919%1000, i*104729%500, i%9, strings.Repeat(strconv.Itoa(i%13), i%40))}
	}
	p := catchup.Partition{Topic: "t"}
	for _, tc := range []struct {
		codec       string
		fast, small int
	}{{"gzip", 1, 9}, {"zstd", 1, 19}} {
		size := map[int]int{}
		for _, level := range []int{tc.fast, 0, tc.small} {
			c := newCluster(t, kfake.SeedTopics(1, "t"))
			batch := 0 // control functions run serially
			c.ControlKey(int16(kmsg.Produce), func(r kmsg.Request) (kmsg.Response, error, bool) {
				c.KeepControl()
				for _, rt := range r.(*kmsg.ProduceRequest).Topics {
					for _, rp := range rt.Partitions {
						batch += len(rp.Records)
					}
				}
				return nil, nil, false
			})
			tg := newTarget(t, c, config.Producer{Compression: tc.codec, CompressionLevel: level, BatchRecords: len(recs)})
			if acked, _, err := produceAll(ctx, tg, p, recs); err != nil || acked != len(recs) {
				t.Fatalf("%s level %d: Produce = %d, %v", tc.codec, level, acked, err)
			}
			if got := consumeAll(ctx, t, c, p, len(recs)); len(got) != len(recs) || !bytes.Equal(got[len(got)-1].Value, recs[len(recs)-1].Value) {
				t.Fatalf("%s level %d: %d records read back", tc.codec, level, len(got))
			}
			size[level] = batch
		}
		// Each level its own encoding, and the smallest level's the
		// smallest batch. (zstd's fastest level may beat its default on
		// some data: klauspost's encoders differ in more than effort.)
		if size[tc.fast] == size[0] || size[tc.small] >= size[0] || size[tc.small] >= size[tc.fast] {
			t.Errorf("%s: batches of %d bytes at level %d, %d at the default, %d at level %d; want three sizes, level %d's the smallest",
				tc.codec, size[tc.fast], tc.fast, size[0], size[tc.small], tc.small, tc.small)
		}
	}
	c := newCluster(t, kfake.SeedTopics(1, "t"))
	p0 := config.Producer{Compression: "lz4", CompressionLevel: 9}
	p0.SetDefaults()
	if _, err := kafkago.NewTarget(clusterConfig("dst", c), pipeline.ProducerSettings(p0)); err == nil ||
		!strings.Contains(err.Error(), "lz4 takes no level") {
		t.Errorf("NewTarget with lz4 at level 9: %v; want an error saying lz4 takes no level", err)
	}
	// The adapter takes every level the configuration accepts, and no other.
	for codec, most := range map[string]int{"gzip": config.MaxGzipLevel, "zstd": config.MaxZstdLevel} {
		for _, level := range []int{1, most, most + 1} {
			p := config.Producer{Compression: codec, CompressionLevel: level}
			p.SetDefaults()
			tg, err := kafkago.NewTarget(clusterConfig("dst", c), pipeline.ProducerSettings(p))
			if ok := level <= most; (err == nil) != ok {
				t.Errorf("NewTarget with %s at level %d: %v; the configuration accepts 1 to %d", codec, level, err, most)
			}
			if err == nil {
				tg.Close()
			}
		}
	}
}

func TestProduceAcks(t *testing.T) {
	ctx := testContext(t)
	c := newCluster(t, kfake.SeedTopics(1, "t"))
	p := catchup.Partition{Topic: "t"}
	recs := copyRecords(4, time.UnixMilli(1_700_000_000_000))
	leader := newTarget(t, c, config.Producer{Acks: "leader"})
	if acked, end, err := produceAll(ctx, leader, p, recs); err != nil || acked != 4 || end != 4 {
		t.Errorf("Produce with acks leader = %d, %d, %v; want 4, 4, nil", acked, end, err)
	}
	none := newTarget(t, c, config.Producer{Acks: "none"})
	if acked, end, err := produceAll(ctx, none, p, recs); err != nil || acked != 4 || end != -1 {
		t.Errorf("Produce with acks none = %d, %d, %v; want 4, -1, nil", acked, end, err)
	}
	if got := consumeAll(ctx, t, c, p, 8); len(got) != 8 {
		t.Errorf("read back %d records, want 8", len(got))
	}
}

func TestProduceBatching(t *testing.T) {
	ctx := testContext(t)
	big := bytes.Repeat([]byte("x"), 1000)
	for _, tc := range []struct {
		name     string
		producer config.Producer
		values   []int // value sizes
		requests int
	}{
		{"by records", config.Producer{BatchRecords: 3}, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 4},
		// 189+1 overhead, 1070 per record: two fit in 2500 bytes.
		{"by bytes", config.Producer{BatchBytes: 2500}, []int{1000, 1000, 1000, 1000, 1000}, 3},
		{"a large record goes alone", config.Producer{BatchBytes: 2500}, []int{10, 5000, 10, 10}, 3},
		// [10 10 10] by records, [10 1000] by bytes (a second 1000 makes 2410), [1000].
		{"both", config.Producer{BatchRecords: 3, BatchBytes: 2000}, []int{10, 10, 10, 10, 1000, 1000}, 3},
	} {
		c := newCluster(t, kfake.SeedTopics(1, "t"))
		tg := newTarget(t, c, tc.producer)
		p := catchup.Partition{Topic: "t"}
		var recs []catchup.Record
		for i, n := range tc.values {
			recs = append(recs, catchup.Record{Offset: int64(i), Value: bytes.Repeat(big[:1], n), Timestamp: time.UnixMilli(1)})
		}
		requests := countRequests(c, kmsg.Produce)
		acked, end, err := produceAll(ctx, tg, p, recs)
		if err != nil || acked != len(recs) || end != int64(len(recs)) {
			t.Errorf("%s: Produce = %d, %d, %v; want %d, %d, nil", tc.name, acked, end, err, len(recs), len(recs))
		}
		if got := requests.Load(); int(got) != tc.requests {
			t.Errorf("%s: %d produce requests, want %d", tc.name, got, tc.requests)
		}
	}
}

func TestProduceFaults(t *testing.T) {
	recs := copyRecords(5, time.UnixMilli(1_700_000_000_000))
	p := catchup.Partition{Topic: "t"}
	for _, tc := range []struct {
		name    string
		fault   func(c *kfake.Cluster)
		want    error // ErrRetriable, ErrUnknownOutcome or nil for a plain error
		written int64 // records in the partition afterwards
		text    string
	}{
		{"not leader", func(c *kfake.Cluster) {
			c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "t", Err: kerr.NotLeaderForPartition})
		}, catchup.ErrRetriable, 0, "not appended"},
		{"not enough replicas", func(c *kfake.Cluster) {
			c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "t", Err: kerr.NotEnoughReplicas})
		}, catchup.ErrRetriable, 0, "NOT_ENOUGH_REPLICAS"},
		{"timed out after the append", func(c *kfake.Cluster) {
			c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "t", Err: kerr.RequestTimedOut})
		}, catchup.ErrUnknownOutcome, 5, "outcome unknown"},
		{"not enough replicas after the append", func(c *kfake.Cluster) {
			c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "t", Err: kerr.NotEnoughReplicasAfterAppend})
		}, catchup.ErrUnknownOutcome, 5, "outcome unknown"},
		{"connection dropped after the request", func(c *kfake.Cluster) {
			c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
				return nil, errors.New("drop the connection"), true
			})
		}, catchup.ErrUnknownOutcome, 0, "outcome unknown"},
		{"message too large", func(c *kfake.Cluster) {
			c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "t", Err: kerr.MessageTooLarge})
		}, nil, 0, "producer.batch_bytes"},
		{"invalid record", func(c *kfake.Cluster) {
			c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "t", Err: kerr.InvalidRecord})
		}, nil, 0, "cleanup.policy"},
		{"topic authorization", func(c *kfake.Cluster) {
			c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "t", Err: kerr.TopicAuthorizationFailed})
		}, nil, 0, "grant"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			c := newCluster(t, kfake.SeedTopics(1, "t"))
			// Not idempotent: the outcome classes of one request
			// (TestIdempotentProduce: what idempotence makes of them).
			tg := newTarget(t, c, config.Producer{Idempotent: new(false)})
			tc.fault(c)
			acked, end, err := produceAll(ctx, tg, p, recs)
			if acked != 0 || end != -1 || err == nil {
				t.Fatalf("Produce = %d, %d, %v; want 0, -1 and an error", acked, end, err)
			}
			isRetriable, isUnknown := errors.Is(err, catchup.ErrRetriable), errors.Is(err, catchup.ErrUnknownOutcome)
			switch {
			case tc.want == nil && (isRetriable || isUnknown):
				t.Errorf("Produce error %q is retriable or of unknown outcome, want a plain error", err)
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Errorf("Produce error %q does not wrap %v", err, tc.want)
			case isRetriable && isUnknown:
				t.Errorf("Produce error %q is both retriable and of unknown outcome", err)
			}
			if !strings.Contains(err.Error(), tc.text) || !strings.Contains(err.Error(), "t/0") || !strings.Contains(err.Error(), "source offset") {
				t.Errorf("Produce error %q lacks %q, the partition or the source offsets", err, tc.text)
			}
			ends, lerr := tg.EndOffsets(ctx, []catchup.Partition{p})
			if lerr != nil || ends[p] != tc.written {
				t.Errorf("after the fault the partition holds %d records (%v), want %d", ends[p], lerr, tc.written)
			}
		})
	}
}

func TestProduceFaultOnSecondRequest(t *testing.T) {
	ctx := testContext(t)
	c := newCluster(t, kfake.SeedTopics(1, "t"))
	tg := newTarget(t, c, config.Producer{BatchRecords: 2, Idempotent: new(false)})
	p := catchup.Partition{Topic: "t"}
	produced := 0 // control functions run serially
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		if produced++; produced == 2 {
			c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "t", Err: kerr.RequestTimedOut})
			c.DropControl()
		}
		return nil, nil, false
	})
	acked, end, err := produceAll(ctx, tg, p, copyRecords(5, time.UnixMilli(1)))
	if acked != 2 || end != 2 || !errors.Is(err, catchup.ErrUnknownOutcome) {
		t.Errorf("Produce = %d, %d, %v; want 2, 2 and ErrUnknownOutcome", acked, end, err)
	}
	if err != nil && !strings.Contains(err.Error(), "records 0 to 1 (source offsets 102 to 103)") {
		t.Errorf("Produce error %q does not name records 2 to 3", err)
	}
}

func TestProduceUnreachable(t *testing.T) {
	ctx := testContext(t)
	c := newCluster(t, kfake.SeedTopics(1, "t"))
	cfg := clusterConfig("dst", c)
	c.Close()
	tg, err := kafkago.NewTarget(cfg, pipeline.ProducerSettings(config.DefaultProducer()))
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	_, _, err = tg.Produce(ctx, catchup.Partition{Topic: "t"}, copyRecords(1, time.UnixMilli(1)), nil)
	if !errors.Is(err, catchup.ErrRetriable) {
		t.Errorf("Produce to a cluster that refuses connections = %v, want ErrRetriable", err)
	}
}

func TestPartitionCounts(t *testing.T) {
	ctx := testContext(t)
	c := newCluster(t, kfake.SeedTopics(3, "a"), kfake.SeedTopics(1, "b"))
	tg := newTarget(t, c, config.Producer{})
	got, err := tg.PartitionCounts(ctx, []string{"a", "b", "missing"})
	if diff := cmp.Diff(map[string]int{"a": 3, "b": 1}, got); diff != "" || err != nil {
		t.Errorf("PartitionCounts (-want +got):\n%s%v", diff, err)
	}
}

func TestReadBack(t *testing.T) {
	ctx := testContext(t)
	c := newCluster(t, kfake.SeedTopics(1, "t"))
	tg := newTarget(t, c, config.Producer{BatchRecords: 3})
	p := catchup.Partition{Topic: "t"}
	recs := copyRecords(8, time.UnixMilli(1_700_000_000_000))

	// 0-2 and 3-4 by Produce, 5-6 in a transaction with its marker at 7,
	// 8-10 by Produce.
	if _, _, err := produceAll(ctx, tg, p, recs[:5]); err != nil {
		t.Fatal(err)
	}
	txn := newProducer(t, c, kgo.TransactionalID("rb"))
	inTxn(ctx, t, txn, true, values("t", 0, "x5", "x6")...)
	if _, _, err := produceAll(ctx, tg, p, recs[5:8]); err != nil {
		t.Fatal(err)
	}

	type step struct {
		base    int64
		offsets []int64
	}
	var got []step
	for end := int64(11); ; {
		rs, base, err := tg.ReadBack(ctx, p, end)
		if err != nil {
			t.Fatalf("ReadBack(%d): %v", end, err)
		}
		var offs []int64
		for _, r := range rs {
			offs = append(offs, r.Offset)
		}
		got = append(got, step{base, offs})
		if base >= end {
			break
		}
		end = base
	}
	want := []step{{8, []int64{8, 9, 10}}, {7, nil}, {5, []int64{5, 6}}, {3, []int64{3, 4}}, {0, []int64{0, 1, 2}}, {0, nil}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(step{})); diff != "" {
		t.Errorf("ReadBack walk (-want +got):\n%s", diff)
	}

	// The records come back whole.
	rs, _, err := tg.ReadBack(ctx, p, 5)
	if diff := cmp.Diff(atTarget(recs[3:5], 3), rs); diff != "" || err != nil {
		t.Errorf("ReadBack(5) records (-want +got):\n%s%v", diff, err)
	}
	// Inside a batch: the whole batch.
	if rs, base, err := tg.ReadBack(ctx, p, 2); len(rs) != 3 || base != 0 || err != nil {
		t.Errorf("ReadBack(2) = %d records, base %d, %v; want 3, 0, nil", len(rs), base, err)
	}

	deleteRecords(ctx, t, c, p, 3)
	if rs, base, err := tg.ReadBack(ctx, p, 3); len(rs) != 0 || base != 3 || err != nil {
		t.Errorf("ReadBack at the log start = %d records, base %d, %v; want 0, 3, nil", len(rs), base, err)
	}
}

// TestOversizeRecordHint produces one record that a topic with the source's
// max.message.bytes accepts as it is, but not with the provenance header:
// the error says that producer.batch_bytes cannot help and names the
// target max.message.bytes that fixes it, and a target topic set to it
// takes the record.
func TestOversizeRecordHint(t *testing.T) {
	ctx := testContext(t)
	c := newCluster(t)
	tg := newTarget(t, c, config.Producer{})
	// A record with a null key, a 1000-byte value and no header is, in a
	// batch of its own, 61 (batch header) + 2 (length) + 1 (attributes) +
	// 1 (timestamp delta) + 1 (offset delta) + 1 (null key) + 2 + 1000
	// (value) + 1 (header count) bytes.
	const limit = 61 + 2 + 1 + 1 + 1 + 1 + 2 + 1000 + 1
	rec := catchup.Record{Offset: 41, Value: bytes.Repeat([]byte{'v'}, 1000), Timestamp: time.UnixMilli(1_700_000_000_000)}
	create := func(topic string, maxBytes int) catchup.Partition {
		t.Helper()
		spec := catchup.TopicSpec{Topic: topic, Partitions: 1, ReplicationFactor: -1,
			Configs: map[string]string{"max.message.bytes": strconv.Itoa(maxBytes)}}
		if err := tg.CreateTopics(ctx, []catchup.TopicSpec{spec}); err != nil {
			t.Fatalf("create %s: %v", topic, err)
		}
		return catchup.Partition{Topic: topic}
	}
	stamp := &catchup.Provenance{Cluster: "onprem-east", Partition: catchup.Partition{Topic: "orders", Partition: 7}}
	if _, _, err := tg.Produce(ctx, create("source-like", limit), []catchup.Record{rec}, nil); err != nil {
		t.Fatalf("the record without provenance under max.message.bytes %d: %v", limit, err)
	}
	_, _, err := tg.Produce(ctx, create("same-limit", limit), []catchup.Record{rec}, stamp)
	if err == nil {
		t.Fatalf("the record with provenance under max.message.bytes %d was accepted", limit)
	}
	m := regexp.MustCompile(`is (\d+) bytes as a batch of its own.* at least (\d+), or to the source topic's max\.message\.bytes .* plus (\d+),`).
		FindStringSubmatch(err.Error())
	if m == nil || !strings.Contains(err.Error(), "producer.batch_bytes cannot help") || !strings.Contains(err.Error(), "source offset 41") {
		t.Fatalf("error %q: want the record's size, that producer.batch_bytes cannot help, and the max.message.bytes that fixes it", err)
	}
	size, _ := strconv.Atoi(m[1])
	plus, _ := strconv.Atoi(m[3])
	if m[1] != m[2] || size <= limit || size > limit+plus {
		t.Errorf("error %q: size %s, at least %s, plus %d; want a size over %d that the source's limit plus the margin covers", err, m[1], m[2], plus, limit)
	}
	for _, max := range []int{size, limit + plus} {
		if _, _, err := tg.Produce(ctx, create(fmt.Sprintf("fixed-%d", max), max), []catchup.Record{rec}, stamp); err != nil {
			t.Errorf("the record with provenance under max.message.bytes %d, as the hint says: %v", max, err)
		}
	}
}
