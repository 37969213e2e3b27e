package replicate

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/compress"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/kafkago/wire"
)

// BenchmarkDropLooped measures loop prevention on a batch with no looped record.
func BenchmarkDropLooped(b *testing.B) {
	e, err := New(Options{Pipeline: "p", Owner: "o", Cluster: "onprem", Provenance: true, LoopCluster: "dr",
		Source: &fakeCluster{}, Target: &fakeCluster{}, Store: checkpoint.NewMemStore(nil),
		CommitInterval: time.Second, Parallelism: 1, FetchBytes: 1, LeaseTTL: time.Minute, BatchRecords: 1, RetryBackoff: time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	pc := &partitionCopy{e: e, p: catchup.Partition{Topic: "orders"}, res: &Result{}}
	recs := make([]catchup.Record, 1000)
	for i := range recs {
		recs[i].Headers = []catchup.Header{{Key: catchup.ProvenanceHeader, Value: []byte("v1:east:orders:0:12345")}}
	}
	b.ReportAllocs()
	for b.Loop() {
		if n := len(pc.dropLooped(recs)); n != len(recs) {
			b.Fatalf("dropLooped kept %d of %d", n, len(recs))
		}
	}
}

// BenchmarkCopyPath measures what the copy does to one fetch of 1 MiB of
// 1 KiB records between the source's response and the target's request,
// with provenance and loop prevention on: decoding the fetch (64 batches of
// 16 records, each record with one header), dropping looped records, cutting
// and encoding the produce requests and counting what was copied. Brokers
// and connections are left out.
func BenchmarkCopyPath(b *testing.B) {
	for _, c := range []compress.Compression{compress.None, compress.Snappy} {
		b.Run(c.String(), func(b *testing.B) {
			benchCopyPath(b, c)
		})
	}
}

func benchCopyPath(b *testing.B, c compress.Compression) {
	const batches, perBatch, size = 64, 16, 1024
	e, err := New(Options{Pipeline: "p", Owner: "o", Cluster: "onprem", Provenance: true, LoopCluster: "dr",
		Source: &fakeCluster{}, Target: &fakeCluster{}, Store: checkpoint.NewMemStore(nil),
		CommitInterval: time.Second, Parallelism: 1, FetchBytes: 1 << 20, LeaseTTL: time.Minute, BatchRecords: 1 << 20, RetryBackoff: time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	p := catchup.Partition{Topic: "orders", Partition: 3}
	pc := &partitionCopy{e: e, p: p, res: &Result{}}
	var set []byte
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range batches {
		recs := make([]catchup.Record, perBatch)
		for i := range recs {
			v := make([]byte, size)
			for j := range v {
				v[j] = byte('A' + rng.IntN(26))
			}
			off := int64(1_000_000 + n*perBatch + i)
			recs[i] = catchup.Record{Offset: off, Key: fmt.Appendf(nil, "key-%d", off), Value: v,
				Timestamp: time.UnixMilli(1_700_000_000_000 + off), Headers: []catchup.Header{{Key: "trace", Value: []byte("0af7651916cd43dd")}}}
		}
		req := wire.ProduceRequest{Compression: c, Batches: []wire.ProduceBatch{{Partition: p, Records: recs}}}
		frame, err := req.AppendTo(nil, 8)
		if err != nil {
			b.Fatal(err)
		}
		at := 2 + 2 + 4 + 4 + 2 + len(p.Topic) + 4 + 4 // the records field's size
		batch := frame[at+4 : at+4+int(binary.BigEndian.Uint32(frame[at:]))]
		binary.BigEndian.PutUint64(batch, uint64(recs[0].Offset)) // base offset
		set = append(set, batch...)
	}
	stamp := pc.stamp()
	b.SetBytes(batches * perBatch * size)
	b.ReportAllocs()
	var spare []catchup.Record
	var inflate []byte
	for b.Loop() {
		// The record slice and the decompression buffer are reused, as
		// the source's recycler reuses them.
		d, err := wire.Decode(wire.Fetched{Records: set, Spare: spare, Inflate: inflate}, 0, wire.ReadUncommitted)
		if err != nil || len(d.Records) != batches*perBatch {
			b.Fatalf("decoded %d records: %v", len(d.Records), err)
		}
		spare, inflate = d.Records[:0], d.Inflate[:0]
		recs := pc.dropLooped(d.Records)
		for len(recs) > 0 {
			n := pc.requestLen(recs)
			r := wire.ProduceRequest{Acks: -1, TimeoutMillis: 30_000, Compression: c, Batches: []wire.ProduceBatch{{Partition: p, Records: recs[:n], Stamp: stamp}}}
			f, err := wire.EncodeRequest(&r, 8, 1, "catchup")
			if err != nil {
				b.Fatal(err)
			}
			f.Release()
			pc.countCopied(recs[:n])
			recs = recs[n:]
		}
	}
}
