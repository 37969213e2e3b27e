package main

import (
	"fmt"
	"hash/crc32"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-catchup/catchup/bench/internal/copytest"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestCopyKeepsRecords copies a topic whose partitions hold 0, 1 and many
// records, in batches of one and of many, from a 1-broker cluster to a
// 3-broker one (produce requests routed by leader), with fetch and produce
// limits small enough that fetches cut batches and produce requests are
// split: the target holds the same records at the same offsets, and the
// model counts them.
func TestCopyKeepsRecords(t *testing.T) {
	const topic = "events"
	src, dst := cluster(t, 1, topic), cluster(t, 3, topic)
	cl, err := kgo.NewClient(kgo.SeedBrokers(src.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var want []copytest.Kept
	for p, n := range []int{0, 1, 900} {
		var rs []*kgo.Record
		for i := range n {
			rs = append(rs, &kgo.Record{Topic: topic, Partition: int32(p), Key: fmt.Appendf(nil, "k%d", i),
				Value:     []byte(strings.Repeat(string(rune('a'+i%26)), 1+i%200)),
				Headers:   []kgo.RecordHeader{{Key: "h", Value: fmt.Appendf(nil, "%d", i)}},
				Timestamp: time.UnixMilli(1_600_000_000_000 + int64(i))})
		}
		// the first half one record a batch, the rest in batches of many
		for i, r := range rs {
			if i < n/2 {
				if err := cl.ProduceSync(t.Context(), r).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := cl.ProduceSync(t.Context(), rs[n/2:]...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			want = append(want, copytest.Keep(r))
		}
	}
	res, err := copyTopic(t.Context(), options{from: src.ListenAddrs(), to: dst.ListenAddrs(), topic: topic,
		fetchBytes: 4096, produceBytes: 3000, fetchBuffers: 2, inFlight: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Records != int64(len(want)) || res.Bytes <= 0 {
		t.Errorf("copyTopic: %d records, %d bytes; want %d records", res.Records, res.Bytes, len(want))
	}
	if diff := cmp.Diff(want, copytest.ReadAll(t, dst, topic, len(want), 3)); diff != "" {
		t.Errorf("target (-want +got):\n%s", diff)
	}
}

// TestVerifyRefusesABadCRC: a batch whose bytes do not match its CRC-32C
// ends the copy with the partition and offset; two good batches merge into
// one batch whose CRC-32C matches its bytes.
func TestVerifyRefusesABadCRC(t *testing.T) {
	good := append(batch(t, 40), batch(t, 42)...)
	f := &fetcher{topic: "t", next: map[int32]int64{0: 40}, end: map[int32]int64{0: 100}, produceBytes: 1 << 20,
		records: new(atomic.Int64), bytes: new(atomic.Int64)}
	ps, err := f.verify(0, good)
	if err != nil || len(ps) != 1 || f.next[0] != 44 || f.records.Load() != 4 {
		t.Fatalf("verify(good): %d pieces, next %d, %d records, %v; want 1 piece, next 44, 4 records", len(ps), f.next[0], f.records.Load(), err)
	}
	merged := appendBatch(nil, ps[0].batches)
	var rb kmsg.RecordBatch
	if err := rb.ReadFrom(merged); err != nil {
		t.Fatal(err)
	}
	if got := crc32.Checksum(merged[attributesAt:], castagnoli); int32(got) != rb.CRC || rb.NumRecords != 4 || rb.LastOffsetDelta != 3 || rb.Length != int32(len(merged)-12) {
		t.Errorf("merged batch: CRC-32C %08x (says %08x), %d records, last delta %d, length %d of %d bytes; want a matching CRC, 4 records, delta 3",
			got, uint32(rb.CRC), rb.NumRecords, rb.LastOffsetDelta, rb.Length, len(merged))
	}
	bad := batch(t, 44)
	bad[len(bad)-1] ^= 1
	_, err = f.verify(0, bad)
	if err == nil || !strings.Contains(err.Error(), "t/0: batch at offset 44: CRC-32C") {
		t.Errorf("verify(bad CRC) = %v; want an error naming t/0 and offset 44", err)
	}
}

// batch is an uncompressed v2 batch of two records at base.
func batch(t *testing.T, base int64) []byte {
	t.Helper()
	var recs []byte
	for i := range 2 {
		r := kmsg.NewRecord()
		r.OffsetDelta = int32(i)
		r.Value = []byte("value")
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		recs = r.AppendTo(recs)
	}
	b := kmsg.NewRecordBatch()
	b.FirstOffset, b.Magic, b.LastOffsetDelta, b.NumRecords, b.Records = base, 2, 1, 2, recs
	b.ProducerID, b.ProducerEpoch, b.FirstSequence = -1, -1, -1
	raw := b.AppendTo(nil)
	b.Length = int32(len(raw) - 12)
	raw = b.AppendTo(nil)
	b.CRC = int32(crc32.Checksum(raw[attributesAt:], castagnoli))
	return b.AppendTo(nil)
}

func cluster(t *testing.T, brokers int, topic string) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(brokers), kfake.SeedTopics(3, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}
