package kafkago_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/kafkago"
)

// fidelityRecords covers null versus empty keys, values and header values,
// and explicit timestamps.
func fidelityRecords(topic string, partition int32, base time.Time) []*kgo.Record {
	return []*kgo.Record{
		{Key: nil, Value: []byte("nil key")},
		{Key: []byte{}, Value: []byte("empty key")},
		{Key: []byte("tombstone"), Value: nil},
		{Key: []byte("empty value"), Value: []byte{}},
		{Key: []byte("headers"), Value: []byte("v"), Headers: []kgo.RecordHeader{
			{Key: "nil", Value: nil}, {Key: "empty", Value: []byte{}}, {Key: "dup", Value: []byte("1")}, {Key: "dup", Value: []byte("2")},
		}},
		{Key: []byte("binary"), Value: []byte{0, 0xff, 0, 0x80}},
	}
}

func wantRecords(recs []*kgo.Record, first int64, base time.Time) []catchup.Record {
	var out []catchup.Record
	for i, r := range recs {
		c := catchup.Record{Offset: first + int64(i), Key: r.Key, Value: r.Value, Timestamp: base.Add(time.Duration(i) * time.Second)}
		for _, h := range r.Headers {
			c.Headers = append(c.Headers, catchup.Header{Key: h.Key, Value: h.Value})
		}
		out = append(out, c)
	}
	return out
}

func TestFetchFidelity(t *testing.T) {
	ctx := testContext(t)
	c := newCluster(t, kfake.SeedTopics(1, "plain", "gzip", "snappy", "lz4", "zstd"))
	base := time.UnixMilli(1_700_000_000_123)
	for _, tc := range append([]namedCodec{{"plain", kgo.NoCompression()}}, compressions()...) {
		prod := newProducer(t, c, kgo.ProducerBatchCompression(tc.codec))
		recs := fidelityRecords(tc.name, 0, base)
		for i, r := range recs {
			r.Topic, r.Timestamp = tc.name, base.Add(time.Duration(i)*time.Second)
		}
		// Two batches: three records, then the rest.
		produceSync(ctx, t, prod, recs[:3]...)
		produceSync(ctx, t, prod, recs[3:]...)

		s := newSource(t, c, "read_committed")
		p := catchup.Partition{Topic: tc.name}
		for _, from := range []int64{0, 1, 4} {
			f, err := s.Fetch(ctx, p, from, 1<<20)
			if err != nil {
				t.Fatalf("%s: Fetch(%d): %v", tc.name, from, err)
			}
			if diff := cmp.Diff(wantRecords(recs, 0, base)[from:], f.Records); diff != "" {
				t.Errorf("%s: Fetch(%d) records (-want +got):\n%s", tc.name, from, diff)
			}
			want := catchup.Offsets{Partition: p, LogStart: 0, HighWatermark: 6, LastStable: 6}
			if f.Next != 6 || f.Offsets != want {
				t.Errorf("%s: Fetch(%d) Next %d, Offsets %+v; want 6, %+v", tc.name, from, f.Next, f.Offsets, want)
			}
		}
	}
}

func TestFetchTransactions(t *testing.T) {
	ctx := testContext(t)
	c := newCluster(t, kfake.SeedTopics(1, "mixed", "commit-last", "abort-last"))
	plain := newProducer(t, c)
	txn := newProducer(t, c, kgo.TransactionalID("catchup-test"))

	// mixed: 0-1 plain, 2-4 committed, 5 marker, 6-7 aborted, 8 marker, 9 plain.
	produceSync(ctx, t, plain, values("mixed", 0, "p0", "p1")...)
	inTxn(ctx, t, txn, true, values("mixed", 0, "c2", "c3", "c4")...)
	inTxn(ctx, t, txn, false, values("mixed", 0, "a6", "a7")...)
	produceSync(ctx, t, plain, values("mixed", 0, "p9")...)
	// commit-last: 0-1 committed, 2 marker. abort-last: 0-1 aborted, 2 marker.
	inTxn(ctx, t, txn, true, values("commit-last", 0, "c0", "c1")...)
	inTxn(ctx, t, txn, false, values("abort-last", 0, "a0", "a1")...)

	committed := newSource(t, c, "read_committed")
	uncommitted := newSource(t, c, "read_uncommitted")
	vals := func(recs []catchup.Record) []string {
		var out []string
		for _, r := range recs {
			out = append(out, string(r.Value))
		}
		return out
	}
	offs := func(recs []catchup.Record) []int64 {
		var out []int64
		for _, r := range recs {
			out = append(out, r.Offset)
		}
		return out
	}

	mixed := catchup.Partition{Topic: "mixed"}
	got := fetchAll(ctx, t, committed, mixed, 0, 10)
	if diff := cmp.Diff([]string{"p0", "p1", "c2", "c3", "c4", "p9"}, vals(got)); diff != "" {
		t.Errorf("read_committed values (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int64{0, 1, 2, 3, 4, 9}, offs(got)); diff != "" {
		t.Errorf("read_committed offsets (-want +got):\n%s", diff)
	}
	got = fetchAll(ctx, t, uncommitted, mixed, 0, 10)
	if diff := cmp.Diff([]string{"p0", "p1", "c2", "c3", "c4", "a6", "a7", "p9"}, vals(got)); diff != "" {
		t.Errorf("read_uncommitted values (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		name  string
		s     *kafkago.Source
		topic string
		from  int64
		want  []string
	}{
		{"committed, from 0", committed, "commit-last", 0, []string{"c0", "c1"}},
		{"committed, at the marker", committed, "commit-last", 2, nil},
		{"aborted, from 0", committed, "abort-last", 0, nil},
		{"aborted, uncommitted", uncommitted, "abort-last", 0, []string{"a0", "a1"}},
	} {
		f, err := tc.s.Fetch(ctx, catchup.Partition{Topic: tc.topic}, tc.from, 1<<20)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if diff := cmp.Diff(tc.want, vals(f.Records)); diff != "" || f.Next != 3 || f.Offsets.HighWatermark != 3 {
			t.Errorf("%s: values (-want +got):\n%s Next %d, HWM %d; want Next = HWM = 3", tc.name, diff, f.Next, f.Offsets.HighWatermark)
		}
	}
}

func TestFetchAtHighWatermark(t *testing.T) {
	ctx := testContext(t)
	c := newCluster(t, kfake.SeedTopics(1, "t"))
	produceSync(ctx, t, newProducer(t, c), values("t", 0, "a", "b")...)
	s := newSource(t, c, "read_committed")

	start := time.Now()
	f, err := s.Fetch(ctx, catchup.Partition{Topic: "t"}, 2, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("Fetch at the high watermark took %v", elapsed)
	}
	if len(f.Records) != 0 || f.Next != 2 || f.Offsets.HighWatermark != 2 {
		t.Errorf("Fetch at the high watermark = %d records, Next %d, HWM %d; want 0, 2, 2", len(f.Records), f.Next, f.Offsets.HighWatermark)
	}
}

func TestFetchOutOfRange(t *testing.T) {
	ctx := testContext(t)
	c := newCluster(t, kfake.SeedTopics(1, "t"))
	produceSync(ctx, t, newProducer(t, c), values("t", 0, "0", "1", "2", "3", "4", "5", "6", "7")...)
	p := catchup.Partition{Topic: "t"}
	deleteRecords(ctx, t, c, p, 5)
	s := newSource(t, c, "read_committed")

	_, err := s.Fetch(ctx, p, 2, 1<<20)
	var gap *catchup.GapError
	if !errors.As(err, &gap) || *gap != (catchup.GapError{Partition: p, From: 2, To: 5}) {
		t.Errorf("Fetch below the log start = %v, want GapError [2,5)", err)
	}
	_, err = s.Fetch(ctx, p, 20, 1<<20)
	if !errors.Is(err, catchup.ErrTopicRecreated) {
		t.Errorf("Fetch above the log end = %v, want ErrTopicRecreated", err)
	}
	f, err := s.Fetch(ctx, p, 5, 1<<20)
	if err != nil || len(f.Records) != 3 || f.Offsets.LogStart != 5 {
		t.Errorf("Fetch at the log start = %d records, log start %d, %v; want 3, 5, nil", len(f.Records), f.Offsets.LogStart, err)
	}
}

func TestFetchUnknownPartitionIsRetriable(t *testing.T) {
	ctx := testContext(t)
	c := newCluster(t, kfake.SeedTopics(1, "t"))
	s := newSource(t, c, "read_committed")
	_, err := s.Fetch(ctx, catchup.Partition{Topic: "nope"}, 0, 1<<20)
	if !errors.Is(err, catchup.ErrRetriable) {
		t.Errorf("Fetch of a missing topic = %v, want ErrRetriable", err)
	}
	f := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: "t", Err: kerr.NotLeaderForPartition})
	_, err = s.Fetch(ctx, catchup.Partition{Topic: "t"}, 0, 1<<20)
	if !errors.Is(err, catchup.ErrRetriable) || f.Hits() != 1 {
		t.Errorf("Fetch from a broker that lost leadership = %v (fault hits %d), want ErrRetriable", err, f.Hits())
	}
}

func TestPartitions(t *testing.T) {
	ctx := testContext(t)
	c := newCluster(t, kfake.SeedTopics(3, "b"), kfake.SeedTopics(2, "a"), kfake.SeedTopics(1, "skip", "__internal"))
	s := newSource(t, c, "read_committed")
	got, err := s.Partitions(ctx, func(topic string) bool { return topic != "skip" })
	if err != nil {
		t.Fatal(err)
	}
	want := []catchup.Partition{{Topic: "a", Partition: 0}, {Topic: "a", Partition: 1}, {Topic: "b", Partition: 0}, {Topic: "b", Partition: 1}, {Topic: "b", Partition: 2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Partitions (-want +got):\n%s", diff)
	}
}

func TestListOffsets(t *testing.T) {
	ctx := testContext(t)
	c := newCluster(t, kfake.SeedTopics(2, "a"), kfake.SeedTopics(1, "b"))
	prod := newProducer(t, c)
	produceSync(ctx, t, prod, values("a", 0, "0", "1", "2", "3")...)
	produceSync(ctx, t, prod, values("a", 1, "0")...)
	produceSync(ctx, t, prod, values("b", 0, "0", "1")...)
	deleteRecords(ctx, t, c, catchup.Partition{Topic: "a", Partition: 0}, 1)
	// An open transaction holds the last stable offset of b/0 at 2.
	txn := newProducer(t, c, kgo.TransactionalID("open"))
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produceSync(ctx, t, txn, values("b", 0, "t2", "t3")...)

	s := newSource(t, c, "read_committed")
	ps := []catchup.Partition{{Topic: "b", Partition: 0}, {Topic: "a", Partition: 1}, {Topic: "a", Partition: 0}}
	got, err := s.ListOffsets(ctx, ps)
	if err != nil {
		t.Fatal(err)
	}
	want := []catchup.Offsets{
		{Partition: ps[0], LogStart: 0, HighWatermark: 4, LastStable: 2},
		{Partition: ps[1], LogStart: 0, HighWatermark: 1, LastStable: 1},
		{Partition: ps[2], LogStart: 1, HighWatermark: 4, LastStable: 4},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ListOffsets (-want +got):\n%s", diff)
	}
	if _, err := s.ListOffsets(ctx, []catchup.Partition{{Topic: "a", Partition: 7}}); !errors.Is(err, catchup.ErrRetriable) {
		t.Errorf("ListOffsets of a missing partition = %v, want ErrRetriable", err)
	}
}

func TestListOffsetsOneRequestPerBroker(t *testing.T) {
	ctx := testContext(t)
	c := newCluster(t, kfake.NumBrokers(2), kfake.SeedTopics(6, "t"))
	s := newSource(t, c, "read_committed")
	var ps []catchup.Partition
	for i := range int32(6) {
		ps = append(ps, catchup.Partition{Topic: "t", Partition: i})
	}
	leaders := make(map[int32]bool)
	for _, p := range ps {
		leaders[c.LeaderFor(p.Topic, p.Partition)] = true
	}
	requests := countRequests(c, kmsg.ListOffsets)
	if _, err := s.ListOffsets(ctx, ps); err != nil {
		t.Fatal(err)
	}
	// Three requests (earliest, latest, latest committed) per leader.
	if want := 3 * len(leaders); int(requests.Load()) != want {
		t.Errorf("ListOffsets of %d partitions on %d leaders sent %d requests, want %d", len(ps), len(leaders), requests.Load(), want)
	}
}

func TestOffsetsForTime(t *testing.T) {
	ctx := testContext(t)
	c := newCluster(t, kfake.SeedTopics(2, "t"))
	base := time.UnixMilli(1_700_000_000_000)
	var recs []*kgo.Record
	for i := range 3 {
		recs = append(recs, &kgo.Record{Topic: "t", Value: []byte{byte(i)}, Timestamp: base.Add(time.Duration(i) * 10 * time.Second)})
	}
	produceSync(ctx, t, newProducer(t, c), recs...)
	s := newSource(t, c, "read_committed")
	p0, p1 := catchup.Partition{Topic: "t", Partition: 0}, catchup.Partition{Topic: "t", Partition: 1}
	for _, tc := range []struct {
		at   time.Time
		want map[catchup.Partition]int64
	}{
		{base.Add(-time.Hour), map[catchup.Partition]int64{p0: 0, p1: 0}},
		{base.Add(5 * time.Second), map[catchup.Partition]int64{p0: 1, p1: 0}},
		{base.Add(20 * time.Second), map[catchup.Partition]int64{p0: 2, p1: 0}},
		{base.Add(time.Hour), map[catchup.Partition]int64{p0: 3, p1: 0}},
	} {
		got, err := s.OffsetsForTime(ctx, []catchup.Partition{p0, p1}, tc.at)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("OffsetsForTime(%v) (-want +got):\n%s", tc.at.Sub(base), diff)
		}
	}
}

func TestFetchCompacted(t *testing.T) {
	ctx := testContext(t)
	c := newCluster(t)
	prod := newProducer(t, c)
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "compacted", 1, 1
	policy := "compact"
	rt.Configs = append(rt.Configs, kmsg.CreateTopicsRequestTopicConfig{Name: "cleanup.policy", Value: &policy})
	req.Topics = append(req.Topics, rt)
	if res, err := req.RequestWith(ctx, prod); err != nil || res.Topics[0].ErrorCode != 0 {
		t.Fatalf("create topic: %v %+v", err, res)
	}
	// Offsets 0-3, one batch each, keys x a a b: compaction removes 1.
	for _, k := range []string{"x", "a", "a", "b"} {
		produceSync(ctx, t, prod, &kgo.Record{Topic: "compacted", Key: []byte(k), Value: []byte(k)})
	}
	c.Compact()
	s := newSource(t, c, "read_committed")
	p := catchup.Partition{Topic: "compacted"}
	marks, err := s.ListOffsets(ctx, []catchup.Partition{p})
	if err != nil {
		t.Fatal(err)
	}
	got := fetchAll(ctx, t, s, p, marks[0].LogStart, marks[0].HighWatermark)
	var offs []int64
	for _, r := range got {
		offs = append(offs, r.Offset)
	}
	if diff := cmp.Diff([]int64{0, 2, 3}, offs); diff != "" {
		t.Errorf("offsets after compaction (-want +got):\n%s", diff)
	}
}

// TestFetchRelease checks the recycling of fetch memory: a fetch that was
// not released keeps its records while later fetches are made, and a
// released one's memory serves the next fetch.
func TestFetchRelease(t *testing.T) {
	ctx := testContext(t)
	c := newCluster(t, kfake.SeedTopics(1, "t"))
	prod := newProducer(t, c)
	p := catchup.Partition{Topic: "t"}
	for i := range 3 {
		// Separate batches, so that three fetches of one batch each.
		produceSync(ctx, t, prod, values("t", 0, fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i))...)
	}
	s := newSource(t, c, "read_committed")
	fetch := func(from int64) catchup.Fetched {
		t.Helper()
		f := fetchBatch(ctx, t, s, p, from)
		if len(f.Records) != 2 || f.Records[0].Offset != from || f.Release == nil {
			t.Fatalf("fetch at %d: %d records, release %v", from, len(f.Records), f.Release != nil)
		}
		return f
	}
	first := fetch(0)
	second := fetch(2) // first is not released: its memory is not reused
	if got := string(first.Records[0].Value) + string(first.Records[1].Value); got != "a0b0" {
		t.Fatalf("an unreleased fetch changed under a later one: %q", got)
	}
	if &first.Records[:1][0] == &second.Records[:1][0] {
		t.Fatal("two unreleased fetches share their record slice")
	}
	first.Release()
	third := fetch(4)
	if got := string(third.Records[0].Value) + string(third.Records[1].Value); got != "a2b2" {
		t.Fatalf("third fetch: %q", got)
	}
	if &first.Records[:1][0] != &third.Records[:1][0] {
		t.Error("a released fetch's record slice was not reused by the next fetch")
	}
	if got := string(second.Records[0].Value) + string(second.Records[1].Value); got != "a1b1" {
		t.Fatalf("an unreleased fetch changed under a later one: %q", got)
	}
}

// TestFetchReleaseRecyclesDecompression checks the recycling of the buffer
// compressed batches are decompressed into: a released fetch's buffer
// serves the next fetch (allocated per fetch, it was 92% of what a zstd
// copy allocated, and the garbage collector let peak RSS reach 170 MiB),
// and a fetch not released keeps its records while later fetches are made.
func TestFetchReleaseRecyclesDecompression(t *testing.T) {
	for _, tc := range compressions() {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			c := newCluster(t, kfake.SeedTopics(1, "t"))
			prod := newProducer(t, c, kgo.ProducerBatchCompression(tc.codec))
			p := catchup.Partition{Topic: "t"}
			// Half random, half repeated: compressed to about half, within
			// the decoder's guess of the ratio, as real data is.
			value := func(i int) string {
				r := rand.New(rand.NewPCG(1, uint64(i)))
				b := make([]byte, 500)
				for j := range b {
					b[j] = byte(r.Uint32())
				}
				return fmt.Sprintf("%d%s%s", i, b, strings.Repeat("x", 500))
			}
			for i := range 3 {
				produceSync(ctx, t, prod, values("t", 0, value(i))...) // one batch each
			}
			s := newSource(t, c, "read_committed")
			fetch := func(from int64) catchup.Fetched {
				t.Helper()
				f := fetchBatch(ctx, t, s, p, from)
				if len(f.Records) != 1 || string(f.Records[0].Value) != value(int(from)) {
					t.Fatalf("fetch at %d: %d records", from, len(f.Records))
				}
				return f
			}
			first := fetch(0)
			second := fetch(1) // first is not released: its buffer is not reused
			if got := string(first.Records[0].Value); got != value(0) {
				t.Fatalf("an unreleased fetch changed under a later one: %.8q", got)
			}
			if unsafe.SliceData(first.Records[0].Value) == unsafe.SliceData(second.Records[0].Value) {
				t.Fatal("two unreleased fetches share their decompression buffer")
			}
			buf := unsafe.SliceData(first.Records[0].Value) // before the release: the record slice is recycled too
			first.Release()
			third := fetch(2)
			if buf != unsafe.SliceData(third.Records[0].Value) {
				t.Error("a released fetch's decompression buffer was not reused by the next fetch")
			}
			if got := string(second.Records[0].Value); got != value(1) {
				t.Fatalf("an unreleased fetch changed under a later one: %.8q", got)
			}
		})
	}
}

// TestFetchOutsideTheListedTopics: once Partitions has limited the
// metadata refresh to the topics it selected, a fetch of another topic
// still finds its leader (the refresh widens to it), as it did before the
// refresh was limited.
func TestFetchOutsideTheListedTopics(t *testing.T) {
	ctx := testContext(t)
	c := newCluster(t, kfake.SeedTopics(1, "listed", "other"))
	produceSync(ctx, t, newProducer(t, c), values("other", 0, "x")...)
	s := newSource(t, c, "read_uncommitted")
	if _, err := s.Partitions(ctx, func(topic string) bool { return topic == "listed" }); err != nil {
		t.Fatal(err)
	}
	f, err := s.Fetch(ctx, catchup.Partition{Topic: "other"}, 0, 1<<20)
	if err != nil || len(f.Records) != 1 {
		t.Fatalf("Fetch of a topic not listed = %d records, %v; want 1", len(f.Records), err)
	}
}

// TestCompressedFetchesHoldFetchBytes: fetch_bytes bounds what a fetch
// holds once decompressed, not the compressed bytes it asks for: batches
// of repetitive text decompress to many times their size, so a fetch
// sized by the bytes on the wire held many times fetch_bytes. The first fetch of a topic decodes up to
// fetch_bytes and leaves the rest to the next, which asks for less by the
// ratio it saw; an uncompressed topic is fetched whole.
func TestCompressedFetchesHoldFetchBytes(t *testing.T) {
	const maxBytes = 256 << 10
	for _, tc := range compressions() {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			c := newCluster(t, kfake.SeedTopics(1, "t", "plain"))
			prod := newProducer(t, c, kgo.ProducerBatchCompression(tc.codec), kgo.ProducerBatchMaxBytes(64<<10))
			plain := newProducer(t, c, kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(64<<10))
			value := func(i int) string { return fmt.Sprintf("%08d%s", i, strings.Repeat("catchup ", 124)) } // 1 KiB
			var recs, plainRecs []*kgo.Record
			for i := range 8 << 10 { // 8 MiB
				recs = append(recs, values("t", 0, value(i))...)
				plainRecs = append(plainRecs, values("plain", 0, value(i))...)
			}
			produceSync(ctx, t, prod, recs...)
			produceSync(ctx, t, plain, plainRecs...)
			s := newSource(t, c, "read_uncommitted")
			held := func(topic string) (sizes []int) {
				p := catchup.Partition{Topic: topic}
				for from := int64(0); from < int64(len(recs)); {
					f, err := s.Fetch(ctx, p, from, maxBytes)
					if err != nil {
						t.Fatal(err)
					}
					n := 0
					for i, r := range f.Records {
						if string(r.Value) != value(int(from)+i) {
							t.Fatalf("%s: record %d: %.12q", topic, from+int64(i), r.Value)
						}
						n += len(r.Value)
					}
					sizes = append(sizes, n)
					from = f.Next
					f.Release()
				}
				return sizes
			}
			sizes := held("t")
			// Each answer may end a batch (64 KiB, decompressed) past the limit.
			for i, n := range sizes {
				if n > maxBytes+64<<10 {
					t.Errorf("fetch %d of %d held %d bytes of values decompressed; want at most %d (fetch_bytes %d and a batch)", i+1, len(sizes), n, maxBytes+64<<10, maxBytes)
				}
			}
			if want := 8 << 20 / maxBytes; len(sizes) > 3*want {
				t.Errorf("%d fetches for 8 MiB; want about %d: fetches sized by the ratio seen, not by the largest", len(sizes), want)
			}
			if got := held("plain"); len(got) > 8<<20/maxBytes+1 {
				t.Errorf("%d fetches of an uncompressed topic beside it; want %d: %v", len(got), 8<<20/maxBytes+1, got)
			}
			t.Logf("%d fetches: %v", len(sizes), sizes)
		})
	}
}
