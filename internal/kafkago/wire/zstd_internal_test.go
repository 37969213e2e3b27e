package wire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"
	"github.com/segmentio/kafka-go/compress"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// TestZstdWindow wants a zstd batch written as one frame with a window of
// at most zstdWindow: the window sizes the encoder's (and any consumer's
// decoder's) history, and kafka-go's streaming writer used 8 MiB.
func TestZstdWindow(t *testing.T) {
	recs := make([]catchup.Record, 512) // 512 KiB of values: more than a window
	for i := range recs {
		recs[i] = catchup.Record{Offset: int64(i), Value: bytes.Repeat([]byte{byte(i)}, 1024), Timestamp: time.UnixMilli(1_700_000_000_000)}
	}
	b, err := appendRecordBatch(nil, recs, nil, compress.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	var h zstd.Header
	if err := h.Decode(b[batchHeaderLen:]); err != nil {
		t.Fatalf("zstd frame header: %v", err)
	}
	if h.SingleSegment || h.WindowSize > zstdWindow {
		t.Errorf("zstd frame: single segment %t, window %d bytes; want a window of at most %d", h.SingleSegment, h.WindowSize, zstdWindow)
	}
}

// TestZstdDecodeBound wants a zstd batch that inflates beyond zstdMaxBatch
// refused with an error naming its offset and the bound, not decoded into
// an allocation as large as the producer made it.
func TestZstdDecodeBound(t *testing.T) {
	b, err := appendRecordBatch(nil, []catchup.Record{{Value: []byte("v")}}, nil, compress.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	b = enc.EncodeAll(make([]byte, zstdMaxBatch+1), b[:batchHeaderLen]) // a zip bomb for records
	binary.BigEndian.PutUint64(b, 1234)                                 // base offset
	binary.BigEndian.PutUint32(b[batchLengthAt:], uint32(len(b)-batchLogOverlap))
	binary.BigEndian.PutUint32(b[batchCRCAt:], crc32.Checksum(b[batchCRCFrom:], castagnoli))
	_, err = Decode(Fetched{Records: b}, 0, ReadUncommitted)
	if err == nil || !strings.Contains(err.Error(), "offset 1234") || !strings.Contains(err.Error(), "128 MiB") {
		t.Errorf("decode of a batch of %d MiB decompressed: error %v, want one naming offset 1234 and the 128 MiB bound", (zstdMaxBatch+1)>>20, err)
	}
}

// benchValue is the value of record i of a benchmark: size random upper
// case letters drawn anew for every record, as Kafka's ProducerPerformance
// writes them (docs/benchmarks.md seeds with it), so that a codec sees what
// it sees in the real-broker runs rather than one repeated byte.
func benchValue(i, size int) []byte {
	r := rand.New(rand.NewPCG(uint64(i), 1))
	v := make([]byte, size)
	for j := range v {
		v[j] = byte('A' + r.IntN(26))
	}
	return v
}

// TestDecodeSizesInflateByRatio: a fetch of compressed batches of random
// letters (which gzip compresses to 60 %, and the others hardly) reserves
// decompression room by the ratio it sees, not by a fixed guess of 4: the
// first fetch of a topic, with no ratio known, plans for its first batch
// at twice its size; it reports the ratio it saw (in sixteenths, rounded
// up, plus one), and a fetch given that ratio reserves room for the whole
// fetch once. A guess of 4 made each fetch in flight hold four times its
// response, and an integer ratio planned 1.3 as 2.
func TestDecodeSizesInflateByRatio(t *testing.T) {
	for _, c := range []compress.Compression{compress.Snappy, compress.Zstd, compress.Gzip, compress.Lz4} {
		t.Run(c.String(), func(t *testing.T) {
			var records []byte
			var plain, lo int // lo: the ratio of the most compressed batch (a codec may leave one as it is)
			for i := range 8 {
				recs := make([]catchup.Record, 64)
				for j := range recs {
					recs[j] = catchup.Record{Offset: int64(i*64 + j), Value: benchValue(i*64+j, 1024)}
					plain += 1024
				}
				b, err := appendRecordBatch(nil, recs, nil, c)
				if err != nil {
					t.Fatal(err)
				}
				binary.BigEndian.PutUint64(b, uint64(i*64)) // base offset
				records = append(records, b...)
				lo = max(lo, ratioUnit*64*1024/len(b)+1)
			}
			first, err := Decode(Fetched{Records: records}, 0, ReadUncommitted)
			if err != nil || len(first.Records) != 8*64 {
				t.Fatalf("decode: %d records, %v", len(first.Records), err)
			}
			// Each record's framing decompresses too: up to two units more.
			if first.Ratio < lo || first.Ratio > lo+2 {
				t.Errorf("ratio seen: %d/%d; want %d/%d to %d/%d (%d bytes of values in %d compressed)",
					first.Ratio, ratioUnit, lo, ratioUnit, lo+2, ratioUnit, plain, len(records))
			}
			// The first batch at twice its size, then the rest of the
			// fetch at the ratio seen: well under 4 times the fetch.
			if got, limit := cap(first.Inflate), 3*len(records); got > limit {
				t.Errorf("first fetch: a decompression buffer of %d bytes; want at most %d (3 times the fetch of %d)", got, limit, len(records))
			}
			next, err := Decode(Fetched{Records: records, Ratio: first.Ratio}, 0, ReadUncommitted)
			if err != nil || len(next.Records) != 8*64 {
				t.Fatalf("decode: %d records, %v", len(next.Records), err)
			}
			if got, limit := cap(next.Inflate), inflated(len(records), first.Ratio)+smallInflateUnit; got > limit || got < plain {
				t.Errorf("next fetch: a decompression buffer of %d bytes; want one for the whole fetch, %d to %d", got, plain, limit)
			}
		})
	}
}

// TestFetchLimit: a fetch asks for fetch_bytes over the ratio its topic's
// batches decompress at, all of it when nothing is known, and never 0.
func TestFetchLimit(t *testing.T) {
	for _, c := range []struct {
		max   int32
		ratio int
		want  int32
	}{
		{1 << 20, 0, 1 << 20},                   // nothing known: all of it; Decode stops at the budget
		{1 << 20, Uncompressed, 1 << 20},        // not compressed
		{1 << 20, 21, 1 << 20 * 16 / 21},        // 1.3125
		{1 << 20, 10 * ratioUnit, 1 << 20 / 10}, // ten times
		{1 << 20, 1 << 30, 1 << 20 * 16 / 4096}, // a batch of zeros: bounded
		{1, 10 * ratioUnit, 1},                  // never 0
		{64 << 20, 2 * ratioUnit, 32 << 20},     // no overflow
	} {
		if got := FetchLimit(c.max, c.ratio); got != c.want {
			t.Errorf("FetchLimit(%d, %d/%d) = %d, want %d", c.max, c.ratio, ratioUnit, got, c.want)
		}
	}
}

// TestDecodeBodyFree: the response buffer may go back before the records
// are produced only when no record shares it: every record kept came from
// a compressed batch. Overwriting the response must leave such records as
// they were, and a fetch with one uncompressed batch must not say so.
func TestDecodeBodyFree(t *testing.T) {
	batch := func(base int, c compress.Compression) ([]byte, []catchup.Record) {
		recs := make([]catchup.Record, 32)
		for j := range recs {
			recs[j] = catchup.Record{Offset: int64(base + j), Key: []byte(fmt.Sprint("k", base+j)), Value: benchValue(base+j, 256),
				Headers: []catchup.Header{{Key: "h", Value: []byte("v")}}, Timestamp: time.UnixMilli(1_700_000_000_000)}
		}
		b, err := appendRecordBatch(nil, recs, nil, c)
		if err != nil {
			t.Fatal(err)
		}
		binary.BigEndian.PutUint64(b, uint64(base)) // base offset
		return b, recs
	}
	zstd0, recs0 := batch(0, compress.Zstd)
	gzip1, recs1 := batch(32, compress.Gzip)
	plain1, _ := batch(32, compress.None)
	plain0, _ := batch(0, compress.None)
	zstd1, _ := batch(32, compress.Zstd)
	for _, tc := range []struct {
		name    string
		records []byte
		from    int64
		free    bool
	}{
		{"compressed", slices.Concat(zstd0, gzip1), 0, true},
		{"one batch uncompressed", slices.Concat(zstd0, plain1), 0, false},
		{"the uncompressed batch below from", slices.Concat(plain0, zstd1), 32, true},
		{"nothing kept", zstd0, 100, true},
	} {
		body := slices.Clone(tc.records)
		d, err := Decode(Fetched{Records: body}, tc.from, ReadUncommitted)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if d.BodyFree != tc.free {
			t.Errorf("%s: BodyFree = %t, want %t", tc.name, d.BodyFree, tc.free)
		}
		if !d.BodyFree {
			continue
		}
		want := cloneRecords(d.Records)
		for i := range body {
			body[i] = 0xff // the next fetch's response
		}
		if diff := cmp.Diff(want, d.Records); diff != "" {
			t.Errorf("%s: records changed with the response buffer (-before +after):\n%s", tc.name, diff)
		}
	}
	// And they are the records encoded.
	d, err := Decode(Fetched{Records: slices.Concat(zstd0, gzip1)}, 0, ReadUncommitted)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(slices.Concat(recs0, recs1), d.Records); diff != "" {
		t.Errorf("records (-encoded +decoded):\n%s", diff)
	}
}

// cloneRecords copies recs and everything they point to.
func cloneRecords(recs []catchup.Record) []catchup.Record {
	if recs == nil {
		return nil
	}
	out := make([]catchup.Record, len(recs))
	for i, r := range recs {
		r.Key, r.Value = bytes.Clone(r.Key), bytes.Clone(r.Value)
		hs := make([]catchup.Header, len(r.Headers))
		for j, h := range r.Headers {
			hs[j] = catchup.Header{Key: strings.Clone(h.Key), Value: bytes.Clone(h.Value)}
		}
		r.Headers = hs
		out[i] = r
	}
	return out
}

// TestCompressedFramesHoldWhatTheySend: the frame of a compressed produce
// request is kept in flight until the broker answers, for every partition
// copied at once, so it is sized by the batch compressed rather than by its
// records uncompressed; and the buffer the records are encoded into before
// they are compressed goes to a list of its own, not to the frames'.
func TestCompressedFramesHoldWhatTheySend(t *testing.T) {
	for range len(frames) { // frames an earlier test left
		<-frames
	}
	recs := make([]catchup.Record, 1000)
	for i := range recs {
		recs[i] = catchup.Record{Offset: int64(i), Value: bytes.Repeat([]byte{byte('a' + i%26)}, 1024),
			Timestamp: time.UnixMilli(1_700_000_000_000)}
	}
	stamp := &catchup.Provenance{Cluster: "source", Partition: catchup.Partition{Topic: "orders", Partition: 1}}
	st := newStamper(stamp)
	raw := recordsCap(recs, &st)
	for _, c := range []compress.Compression{compress.Zstd, compress.Gzip, compress.Snappy, compress.Lz4} {
		r := ProduceRequest{Acks: -1, TimeoutMillis: 30_000, Compression: c, Batches: []ProduceBatch{{Partition: stamp.Partition, Records: recs, Stamp: stamp}}}
		for round := range 2 { // a new frame, then one from the free list
			f, err := EncodeRequest(&r, 8, 1, "catchup")
			if err != nil {
				t.Fatal(err)
			}
			if got := cap(f.Bytes()); got > raw/2 {
				t.Errorf("%s, round %d: a frame of %d bytes for a request of %d; want at most %d, half the records uncompressed (%d)",
					c, round, got, len(f.Bytes()), raw/2, raw)
			}
			f.Release()
			// The frame alone went back to the frames' list.
			if n := len(frames); n != 1 {
				t.Fatalf("%s, round %d: the frames' free list holds %d buffers after one request, want 1", c, round, n)
			}
			g := <-frames
			if cap(g.buf) > raw/2 {
				t.Errorf("%s, round %d: the frames' free list holds a buffer of %d bytes", c, round, cap(g.buf))
			}
			frames <- g
		}
		for range len(frames) {
			<-frames
		}
	}
}

// TestCompressTurns has more partitions compress at once than there are
// scratch buffers, each on a P of its own: a batch waits for a buffer of
// the free list instead of taking a fresh one that is garbage once its
// batch is compressed (a copy of 1 GB of zstd batches allocated 180 to
// 350 MiB of them).
func TestCompressTurns(t *testing.T) {
	recs := make([]catchup.Record, 1024) // 1 MiB of values, a request at the defaults
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range recs {
		v := fmt.Appendf(nil, `{"order":%d,"sku":"%08x","qty":%d}`, i, rng.Uint32(), rng.IntN(9))
		recs[i] = catchup.Record{Offset: int64(i), Value: append(v, bytes.Repeat([]byte{' '}, 1024-len(v))...),
			Timestamp: time.UnixMilli(1_700_000_000_000)}
	}
	// The encoders, built before GOMAXPROCS is raised, are as many as the
	// turns: a batch without a turn would wait for one holding a buffer.
	if _, err := zstdEncoders[zstdLevel(0)](); err != nil {
		t.Fatal(err)
	}
	partitions := 4 * cap(scratch)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(partitions))
	const batches = 8 // a partition's, one after the other
	outs := make([][]byte, partitions)
	for i := range outs {
		outs[i] = make([]byte, 0, 2<<20)
	}
	copyAll := func() {
		var wg sync.WaitGroup
		for i := range partitions {
			wg.Go(func() {
				for range batches {
					st := newStamper(nil)
					if _, _, err := appendCompressed(outs[i][:0], recs, 0, &st, compress.Zstd, 0); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
	}
	copyAll() // the free list's buffers, made once
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	copyAll()
	runtime.ReadMemStats(&after)
	st := newStamper(nil)
	if got, want := after.TotalAlloc-before.TotalAlloc, uint64(recordsCap(recs, &st)); got >= want {
		t.Errorf("%d partitions compressing %d batches each allocated %d KiB, want under %d KiB (one scratch buffer): "+
			"the %d scratch buffers were not reused", partitions, batches, got>>10, want>>10, cap(scratch))
	}
}

// TestFrameRounded: a request a little longer than the one before takes
// the same buffer, rounded up when it was made, not a new one; a small
// request's frame is not rounded.
func TestFrameRounded(t *testing.T) {
	list := make(chan *Frame, 1)
	f := getFrame(list, 1_000_000)
	made := cap(f.buf)
	f.Release()
	if f = getFrame(list, 1_001_000); cap(f.buf) != made {
		t.Errorf("a frame for 1,001,000 bytes after one for 1,000,000: a new buffer of %d bytes, want the first one's %d", cap(f.buf), made)
	}
	if f = getFrame(make(chan *Frame, 1), 300); cap(f.buf) != 300 {
		t.Errorf("a frame for 300 bytes holds %d, want 300", cap(f.buf))
	}
}
