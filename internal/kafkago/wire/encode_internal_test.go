package wire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/segmentio/kafka-go/compress"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// encodeRecords are records that exercise every field the encoder writes.
func encodeRecords() []catchup.Record {
	return []catchup.Record{
		{Offset: 7, Key: []byte("k"), Value: []byte("v"), Timestamp: time.UnixMilli(1_700_000_000_000)},
		{Offset: 8, Key: nil, Value: nil, Timestamp: time.UnixMilli(0)},                           // nulls, the Unix epoch
		{Offset: 9, Key: []byte{}, Value: []byte{}, Timestamp: time.UnixMilli(1_600_000_000_000)}, // empties, earlier than the first
		{Offset: 12, Value: bytes.Repeat([]byte("x"), 300), Timestamp: time.UnixMilli(1_800_000_000_000), Headers: []catchup.Header{
			{Key: "a", Value: []byte("1")}, {Key: "null", Value: nil}, {Key: "empty", Value: []byte{}}, {Key: "", Value: []byte("no key")},
		}},
		{Offset: 13, Key: bytes.Repeat([]byte{0}, 70_000), Value: []byte("long key"), Timestamp: time.UnixMilli(-1)},
	}
}

// decodeProduce decodes a produce frame with franz-go's kmsg, independently
// of catchup's decoder, and returns the request and its one batch's records.
func decodeProduce(t *testing.T, frame []byte, version int16) (kmsg.ProduceRequest, kmsg.RecordBatch, []kmsg.Record) {
	t.Helper()
	if got := int(binary.BigEndian.Uint32(frame)); got != len(frame)-4 {
		t.Fatalf("size prefix %d, frame holds %d", got, len(frame)-4)
	}
	h := frame[4:]
	if key, v := int16(binary.BigEndian.Uint16(h)), int16(binary.BigEndian.Uint16(h[2:])); key != 0 || v != version {
		t.Fatalf("header: api key %d version %d, want 0 and %d", key, v, version)
	}
	if corr := int32(binary.BigEndian.Uint32(h[4:])); corr != 42 {
		t.Fatalf("correlation id %d, want 42", corr)
	}
	n := int(binary.BigEndian.Uint16(h[8:]))
	if id := string(h[10 : 10+n]); id != "client-x" {
		t.Fatalf("client id %q", id)
	}
	req := kmsg.ProduceRequest{Version: version}
	if err := req.ReadFrom(h[10+n:]); err != nil {
		t.Fatalf("kmsg cannot read the request: %v", err)
	}
	if len(req.Topics) != 1 || len(req.Topics[0].Partitions) != 1 {
		t.Fatalf("request has %d topics", len(req.Topics))
	}
	raw := req.Topics[0].Partitions[0].Records
	var b kmsg.RecordBatch
	if err := b.ReadFrom(raw); err != nil {
		t.Fatalf("kmsg cannot read the batch: %v", err)
	}
	if len(raw) != int(b.Length)+batchLogOverlap {
		t.Fatalf("records field %d bytes, batch length says %d", len(raw), int(b.Length)+batchLogOverlap)
	}
	if want := crc32.Checksum(raw[batchCRCFrom:], castagnoli); uint32(b.CRC) != want {
		t.Fatalf("CRC %08x, want %08x", uint32(b.CRC), want)
	}
	data := b.Records
	if c := compress.Compression(b.Attributes & attrCompression); c != compress.None {
		r := c.Codec().NewReader(bytes.NewReader(data))
		var err error
		if data, err = io.ReadAll(r); err != nil {
			t.Fatalf("decompress %s: %v", c, err)
		}
		r.Close()
	}
	var recs []kmsg.Record
	for len(data) > 0 {
		l, used := binary.Varint(data)
		end := used + int(l)
		var r kmsg.Record
		if err := r.ReadFrom(data[:end]); err != nil {
			t.Fatalf("kmsg cannot read record %d: %v", len(recs), err)
		}
		recs = append(recs, r)
		data = data[end:]
	}
	return req, b, recs
}

func TestEncodeProduce(t *testing.T) {
	in := encodeRecords()
	for _, c := range []compress.Compression{compress.None, compress.Gzip, compress.Snappy, compress.Lz4, compress.Zstd} {
		for _, version := range []int16{3, 8} {
			for _, stamp := range []*catchup.Provenance{nil, {Cluster: "eu-prod", Partition: catchup.Partition{Topic: "orders.src", Partition: 11}}} {
				t.Run(fmt.Sprintf("%s/v%d/stamp=%t", c, version, stamp != nil), func(t *testing.T) {
					testEncodeProduce(t, in, c, version, stamp)
				})
			}
		}
	}
}

func testEncodeProduce(t *testing.T, in []catchup.Record, c compress.Compression, version int16, stamp *catchup.Provenance) {
	sent := in // as the target must hold them
	if stamp != nil {
		sent = make([]catchup.Record, len(in))
		for i, r := range in {
			pv := *stamp
			pv.Offset = r.Offset
			r.Headers = append(slices.Clone(r.Headers), catchup.Header{Key: catchup.ProvenanceHeader, Value: catchup.AppendProvenance(nil, pv)})
			sent[i] = r
		}
	}
	r := ProduceRequest{Acks: -1, TimeoutMillis: 30_000, Compression: c,
		Batches: []ProduceBatch{{Partition: catchup.Partition{Topic: "orders", Partition: 5}, Records: in, Stamp: stamp}}}
	f, err := EncodeRequest(&r, version, 42, "client-x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release()
	want := produceHeaderLen + len("client-x") + len(r.Batches[0].Partition.Topic) + batchHeaderLen + recordsLen(in, stamp)
	if c == compress.None && len(f.buf) != want {
		t.Errorf("frame of %d bytes, want %d", len(f.buf), want)
	}
	if st := newStamper(stamp); recordsCap(in, &st) < recordsLen(in, stamp) {
		bound := recordsCap(in, &st)
		t.Errorf("recordsCap = %d, below the %d bytes the records take: the frame grows while encoding", bound, recordsLen(in, stamp))
	}
	req, b, recs := decodeProduce(t, f.buf, version)
	if req.TransactionID != nil || req.Acks != -1 || req.TimeoutMillis != 30_000 ||
		req.Topics[0].Topic != "orders" || req.Topics[0].Partitions[0].Partition != 5 {
		t.Errorf("request fields: txn %v acks %d timeout %d topic %q partition %d", req.TransactionID,
			req.Acks, req.TimeoutMillis, req.Topics[0].Topic, req.Topics[0].Partitions[0].Partition)
	}
	if b.Magic != 2 || b.FirstOffset != 0 || b.PartitionLeaderEpoch != -1 || b.ProducerID != -1 ||
		b.ProducerEpoch != -1 || b.FirstSequence != -1 || b.Attributes != int16(c) ||
		b.LastOffsetDelta != int32(len(in)-1) || b.NumRecords != int32(len(in)) {
		t.Errorf("batch header: %+v", b)
	}
	if want := in[0].Timestamp.UnixMilli(); b.FirstTimestamp != want {
		t.Errorf("first timestamp %d, want %d", b.FirstTimestamp, want)
	}
	if want := int64(1_800_000_000_000); b.MaxTimestamp != want {
		t.Errorf("max timestamp %d, want %d", b.MaxTimestamp, want)
	}
	if len(recs) != len(in) {
		t.Fatalf("%d records, want %d", len(recs), len(in))
	}
	for i, r := range recs {
		got := catchup.Record{Offset: sent[i].Offset, Key: r.Key, Value: r.Value,
			Timestamp: time.UnixMilli(b.FirstTimestamp + r.TimestampDelta64)}
		for _, h := range r.Headers {
			got.Headers = append(got.Headers, catchup.Header{Key: h.Key, Value: h.Value})
		}
		if r.OffsetDelta != int32(i) {
			t.Errorf("record %d: offset delta %d", i, r.OffsetDelta)
		}
		// Null and empty stay apart, hence Equal on the nil-ness too.
		if diff := cmp.Diff(sent[i], got); diff != "" || (sent[i].Key == nil) != (got.Key == nil) || (sent[i].Value == nil) != (got.Value == nil) {
			t.Errorf("record %d (-sent +decoded):\n%s", i, diff)
		}
		for j, h := range got.Headers {
			if (h.Value == nil) != (sent[i].Headers[j].Value == nil) {
				t.Errorf("record %d header %q: null %v, sent null %v", i, h.Key, h.Value == nil, sent[i].Headers[j].Value == nil)
			}
		}
	}
}

// TestEncodeRoundTrip reads what the encoder wrote with catchup's own
// decoder, the path the target's read-back and verify take.
func TestEncodeRoundTrip(t *testing.T) {
	in := encodeRecords()
	b, err := appendRecordBatch(nil, in, nil, compress.None)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Decode(Fetched{Records: b}, 0, ReadUncommitted)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Records) != len(in) || d.Next != int64(len(in)) {
		t.Fatalf("decoded %d records, next %d", len(d.Records), d.Next)
	}
	for i, r := range d.Records {
		r.Offset = in[i].Offset
		r.Headers = r.Headers[:len(r.Headers):len(r.Headers)]
		if diff := cmp.Diff(in[i], r); diff != "" {
			t.Errorf("record %d (-sent +decoded):\n%s", i, diff)
		}
	}
}

func TestVarintLen(t *testing.T) {
	for _, x := range []int64{0, 1, -1, 63, 64, -64, -65, 1 << 20, math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64} {
		if got, want := varintLen(x), len(binary.AppendVarint(nil, x)); got != want {
			t.Errorf("varintLen(%d) = %d, want %d", x, got, want)
		}
	}
}

// recordsLen is the exact size of recs encoded (uncompressed) in a batch,
// computed apart from the encoder, from the formatted header value.
func recordsLen(recs []catchup.Record, stamp *catchup.Provenance) int {
	n := 0
	for i := range recs {
		sl := -1
		if stamp != nil {
			pv := *stamp
			pv.Offset = recs[i].Offset
			sl = len(catchup.AppendProvenance(nil, pv))
		}
		l := recordLen(&recs[i], i, recs[0].Timestamp.UnixMilli(), sl)
		n += varintLen(int64(l)) + l
	}
	return n
}

func TestEncodeEmpty(t *testing.T) {
	r := ProduceRequest{Batches: []ProduceBatch{{Partition: catchup.Partition{Topic: "t"}}}}
	if _, err := EncodeRequest(&r, 3, 1, "c"); err == nil {
		t.Fatal("a request without records encoded")
	}
}

func BenchmarkEncodeProduce(b *testing.B) {
	// Unstamped zstd: the benchmark's random letters hold no repeat but
	// the provenance header, so zstd stores the unstamped batch raw, fast,
	// and compresses the stamped one at many times the CPU: why the
	// 1k-zstd shape of docs/benchmarks.md copies JSON orders instead.
	// zstd level 1 (producer.compression_level): klauspost's fastest encoder.
	for _, bc := range []struct {
		size      int
		c         compress.Compression
		unstamped bool
		level     int
	}{{100, compress.None, false, 0}, {1024, compress.None, false, 0}, {1024, compress.Zstd, false, 0}, {1024, compress.Zstd, true, 0},
		{1024, compress.Zstd, false, 1}} {
		size := bc.size
		name := fmt.Sprintf("%dB", size)
		if bc.c != compress.None {
			name += "/" + bc.c.String()
		}
		if bc.unstamped {
			name += "/unstamped"
		}
		if bc.level != 0 {
			name += fmt.Sprintf("/level%d", bc.level)
		}
		b.Run(name, func(b *testing.B) {
			recs := make([]catchup.Record, 1000)
			for i := range recs {
				recs[i] = catchup.Record{Offset: int64(i), Value: benchValue(i, size),
					Timestamp: time.UnixMilli(1_700_000_000_000 + int64(i)),
				}
			}
			// Stamped with the provenance header, as catchup writes.
			r := ProduceRequest{Acks: -1, TimeoutMillis: 30000, Compression: bc.c, Level: bc.level, Batches: []ProduceBatch{{Partition: catchup.Partition{Topic: "orders"}, Records: recs,
				Stamp: &catchup.Provenance{Cluster: "source", Partition: catchup.Partition{Topic: "orders", Partition: 5}}}}}
			if bc.unstamped {
				r.Batches[0].Stamp = nil
			}
			b.SetBytes(int64(size * len(recs)))
			b.ReportAllocs()
			for b.Loop() {
				f, err := EncodeRequest(&r, 8, 1, "catchup")
				if err != nil {
					b.Fatal(err)
				}
				f.Release()
			}
		})
	}
}

// TestStamperOffset wants stamper.offset to give strconv's digits for runs
// of offsets that follow one another across every decimal length, for
// jumps, for offsets going back and for the ends of int64.
func TestStamperOffset(t *testing.T) {
	var offs []int64
	for o := int64(-3); o < 1_100_000; o++ {
		offs = append(offs, o)
	}
	for p := int64(10); p <= math.MaxInt64/10; p *= 10 {
		offs = append(offs, p*10-2, p*10-1, p*10, p*10+1, p-1, p, 3*p-1, 3*p)
	}
	offs = append(offs, math.MaxInt64-2, math.MaxInt64-1, math.MaxInt64, math.MinInt64, math.MinInt64+1, 0, 0, 1, 1, 0, -1, 0)
	st := stamper{prefix: []byte("v1:c:t:0:")}
	for _, o := range offs {
		if got, want := string(st.offset(o)), strconv.FormatInt(o, 10); got != want {
			t.Fatalf("offset(%d) after %d = %q, want %q", o, st.last, got, want)
		}
	}
}

// TestEncodeMatchesReference encodes random batches, stamped and not, in
// every codec, and wants the frame that refProducerBatch, which formats
// each record's provenance header whole and prefixes each record with the
// length of its encoded body, writes.
func TestEncodeMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	stamp := &catchup.Provenance{Cluster: "src", Partition: catchup.Partition{Topic: "orders", Partition: 7}}
	off := int64(0)
	for round := range 300 {
		recs := make([]catchup.Record, 1+r.IntN(40))
		for i := range recs {
			switch r.IntN(10) {
			case 0:
				off += int64(r.IntN(1_000_000)) // a compacted hole
			case 1:
				off = int64(r.IntN(100)) * 9_999 // elsewhere
			default:
				off++
			}
			rec := catchup.Record{Offset: off, Timestamp: time.UnixMilli(1_700_000_000_000 + r.Int64N(1<<20) - 1<<19)}
			if r.IntN(3) > 0 {
				rec.Key = benchValue(round*100+i, r.IntN(20))
			}
			if r.IntN(8) > 0 {
				rec.Value = benchValue(round*100+i, []int{0, 30, 60, 64, 200, 8150, 8192}[r.IntN(7)]+r.IntN(40))
			}
			for range r.IntN(3) {
				rec.Headers = append(rec.Headers, catchup.Header{Key: "h", Value: benchValue(i, r.IntN(70))})
			}
			recs[i] = rec
		}
		c := []compress.Compression{compress.None, compress.Gzip, compress.Snappy, compress.Lz4, compress.Zstd}[round%5]
		st := stamp
		if round%2 == 1 {
			st = nil
		}
		seq := ProducerSeq{}
		if round%3 == 0 {
			seq = ProducerSeq{On: true, ID: int64(round), Epoch: 1, Base: int32(round * 7)}
		}
		got, err := appendProducerBatch(nil, recs, st, c, 0, seq)
		if err != nil {
			t.Fatal(err)
		}
		want, err := refProducerBatch(recs, st, c, seq)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("round %d (%s, stamped %t, %d records): the batch differs from the reference's", round, c, st != nil, len(recs))
		}
	}
}

// refProducerBatch is appendProducerBatch written independently of the
// encoder's sizing: each record's body is encoded on its own and then
// prefixed with its length, its provenance header value formatted whole.
// Compression goes through the encoder's own appendCompressedRaw.
func refProducerBatch(recs []catchup.Record, stamp *catchup.Provenance, c compress.Compression, seq ProducerSeq) ([]byte, error) {
	first := recs[0].Timestamp.UnixMilli()
	maxTS := first
	var raw []byte
	for i := range recs {
		rec := &recs[i]
		maxTS = max(maxTS, rec.Timestamp.UnixMilli())
		body := []byte{0}
		body = binary.AppendVarint(body, rec.Timestamp.UnixMilli()-first)
		body = binary.AppendVarint(body, int64(i))
		body = appendBytes(body, rec.Key)
		body = appendBytes(body, rec.Value)
		hs := rec.Headers
		if stamp != nil {
			pv := *stamp
			pv.Offset = rec.Offset
			hs = append(slices.Clone(hs), catchup.Header{Key: catchup.ProvenanceHeader, Value: catchup.AppendProvenance(nil, pv)})
		}
		body = binary.AppendVarint(body, int64(len(hs)))
		for _, h := range hs {
			body = binary.AppendVarint(body, int64(len(h.Key)))
			body = append(body, h.Key...)
			body = appendBytes(body, h.Value)
		}
		raw = binary.AppendVarint(raw, int64(len(body)))
		raw = append(raw, body...)
	}
	if !seq.On {
		seq = ProducerSeq{ID: -1, Epoch: -1, Base: -1}
	}
	b := binary.BigEndian.AppendUint64(nil, 0)
	b = binary.BigEndian.AppendUint32(b, 0)
	b = binary.BigEndian.AppendUint32(b, 0xffffffff)
	b = append(b, 2)
	b = binary.BigEndian.AppendUint32(b, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(c))
	b = binary.BigEndian.AppendUint32(b, uint32(len(recs)-1))
	b = binary.BigEndian.AppendUint64(b, uint64(first))
	b = binary.BigEndian.AppendUint64(b, uint64(maxTS))
	b = binary.BigEndian.AppendUint64(b, uint64(seq.ID))
	b = binary.BigEndian.AppendUint16(b, uint16(seq.Epoch))
	b = binary.BigEndian.AppendUint32(b, uint32(seq.Base))
	b = binary.BigEndian.AppendUint32(b, uint32(len(recs)))
	if c == compress.None {
		b = append(b, raw...)
	} else {
		var err error
		if b, err = appendCompressedRaw(b, raw, c, 0); err != nil {
			return nil, err
		}
	}
	binary.BigEndian.PutUint32(b[batchLengthAt:], uint32(len(b)-batchLogOverlap))
	binary.BigEndian.PutUint32(b[batchCRCAt:], crc32.Checksum(b[batchCRCFrom:], castagnoli))
	return b, nil
}

// A request of several partitions writes each topic once, with its
// partitions in the order given, each with its own batch, sequence and
// provenance, and its frame within the bound EncodeRequest sizes it by.
func TestEncodeProduceBatches(t *testing.T) {
	recs := encodeRecords()
	a, b := catchup.Partition{Topic: "orders", Partition: 5}, catchup.Partition{Topic: "orders", Partition: 2}
	c := catchup.Partition{Topic: "payments", Partition: 0}
	r := ProduceRequest{Acks: -1, TimeoutMillis: 30_000, Batches: []ProduceBatch{
		{Partition: a, Records: recs[:2], Seq: ProducerSeq{On: true, ID: 9, Epoch: 1, Base: 40}},
		{Partition: b, Records: recs[2:3], Stamp: &catchup.Provenance{Cluster: "src", Partition: b}},
		{Partition: c, Records: recs[3:]},
	}}
	f, err := EncodeRequest(&r, 8, 42, "client-x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release()
	if limit := requestHeaderLen + len("client-x") + r.bodyCap(); len(f.buf) > limit {
		t.Errorf("frame of %d bytes, over its bound %d", len(f.buf), limit)
	}
	h := f.buf[4+10+len("client-x"):]
	req := kmsg.ProduceRequest{Version: 8}
	if err := req.ReadFrom(h); err != nil {
		t.Fatalf("kmsg cannot read the request: %v", err)
	}
	type part struct {
		topic     string
		partition int32
		records   int32
		producer  int64
		seq       int32
		headers   int
	}
	var got []part
	for _, tp := range req.Topics {
		for _, p := range tp.Partitions {
			var rb kmsg.RecordBatch
			if err := rb.ReadFrom(p.Records); err != nil {
				t.Fatalf("%s %d: kmsg cannot read the batch: %v", tp.Topic, p.Partition, err)
			}
			if want := crc32.Checksum(p.Records[batchCRCFrom:], castagnoli); uint32(rb.CRC) != want {
				t.Fatalf("%s %d: CRC %08x, want %08x", tp.Topic, p.Partition, uint32(rb.CRC), want)
			}
			var first kmsg.Record
			l, used := binary.Varint(rb.Records)
			if err := first.ReadFrom(rb.Records[:used+int(l)]); err != nil {
				t.Fatal(err)
			}
			got = append(got, part{tp.Topic, p.Partition, rb.NumRecords, rb.ProducerID, rb.FirstSequence, len(first.Headers)})
		}
	}
	want := []part{
		{"orders", 5, 2, 9, 40, 0},
		{"orders", 2, 1, -1, -1, 1}, // the provenance header
		{"payments", 0, 2, -1, -1, 4},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(part{})); diff != "" {
		t.Errorf("topics and partitions (-want +got):\n%s", diff)
	}
	if len(req.Topics) != 2 {
		t.Errorf("%d topic entries, want 2: a topic's partitions go under one entry", len(req.Topics))
	}
}
