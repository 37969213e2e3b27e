package wire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/segmentio/kafka-go/compress"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// testBatch describes a record batch of format v2 to encode.
type testBatch struct {
	base      int64
	lastDelta int32 // -1: count-1
	attrs     int16
	pid       int64
	firstTS   int64
	maxTS     int64
	recs      []testRec
	magic     int8 // 0: 2
}

type testRec struct {
	delta   int64
	tsDelta int64
	key     []byte
	value   []byte
	headers []catchup.Header
}

func appendVarbytes(b, v []byte) []byte {
	if v == nil {
		return binary.AppendVarint(b, -1)
	}
	return append(binary.AppendVarint(b, int64(len(v))), v...)
}

func (tb testBatch) encode() []byte {
	var recs []byte
	for _, r := range tb.recs {
		var body []byte
		body = append(body, 0)
		body = binary.AppendVarint(body, r.tsDelta)
		body = binary.AppendVarint(body, r.delta)
		body = appendVarbytes(body, r.key)
		body = appendVarbytes(body, r.value)
		body = binary.AppendVarint(body, int64(len(r.headers)))
		for _, h := range r.headers {
			body = appendVarbytes(body, []byte(h.Key))
			body = appendVarbytes(body, h.Value)
		}
		recs = binary.AppendVarint(recs, int64(len(body)))
		recs = append(recs, body...)
	}
	last := tb.lastDelta
	if last < 0 {
		last = int32(len(tb.recs) - 1)
	}
	magic := tb.magic
	if magic == 0 {
		magic = 2
	}
	b := binary.BigEndian.AppendUint64(nil, uint64(tb.base))
	b = binary.BigEndian.AppendUint32(b, 0) // length, below
	b = binary.BigEndian.AppendUint32(b, 0) // leader epoch
	b = append(b, byte(magic))
	b = binary.BigEndian.AppendUint32(b, 0) // crc, below
	b = binary.BigEndian.AppendUint16(b, uint16(tb.attrs))
	b = binary.BigEndian.AppendUint32(b, uint32(last))
	b = binary.BigEndian.AppendUint64(b, uint64(tb.firstTS))
	b = binary.BigEndian.AppendUint64(b, uint64(tb.maxTS))
	b = binary.BigEndian.AppendUint64(b, uint64(tb.pid))
	b = binary.BigEndian.AppendUint16(b, 0)
	b = binary.BigEndian.AppendUint32(b, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(len(tb.recs)))
	b = append(b, recs...)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], castagnoli))
	return b
}

// control returns a control batch (abort when commit is false).
func control(base, pid int64, commit bool) testBatch {
	key := []byte{0, 0, 0, 0}
	if commit {
		key[3] = 1
	}
	return testBatch{base: base, lastDelta: -1, attrs: attrTxn | attrControl, pid: pid,
		recs: []testRec{{key: key, value: []byte{0, 0, 0, 0, 0, 0}}}}
}

func data(base int64, pid int64, txn bool, n int) testBatch {
	tb := testBatch{base: base, lastDelta: -1, pid: pid, firstTS: 1000}
	if txn {
		tb.attrs = attrTxn
	}
	for i := range n {
		tb.recs = append(tb.recs, testRec{delta: int64(i), value: []byte{byte(base) + byte(i)}})
	}
	return tb
}

func concat(bs ...testBatch) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b.encode()...)
	}
	return out
}

func offsets(recs []catchup.Record) []int64 {
	var out []int64
	for _, r := range recs {
		out = append(out, r.Offset)
	}
	return out
}

func TestDecodeFidelity(t *testing.T) {
	hdrs := []catchup.Header{{Key: "n", Value: nil}, {Key: "e", Value: []byte{}}, {Key: "v", Value: []byte("x")}}
	tb := testBatch{base: 10, lastDelta: -1, firstTS: 1_700_000_000_000, recs: []testRec{
		{delta: 0, key: nil, value: nil},
		{delta: 1, tsDelta: 5, key: []byte{}, value: []byte{}},
		{delta: 2, tsDelta: 7, key: []byte("k"), value: []byte("v"), headers: hdrs},
	}}
	d, err := Decode(Fetched{Records: tb.encode()}, 10, ReadCommitted)
	if err != nil {
		t.Fatal(err)
	}
	ts := time.UnixMilli(1_700_000_000_000)
	want := []catchup.Record{
		{Offset: 10, Timestamp: ts},
		{Offset: 11, Key: []byte{}, Value: []byte{}, Timestamp: ts.Add(5 * time.Millisecond)},
		{Offset: 12, Key: []byte("k"), Value: []byte("v"), Headers: hdrs, Timestamp: ts.Add(7 * time.Millisecond)},
	}
	if diff := cmp.Diff(want, d.Records); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	// cmp treats nil and empty slices as different, but say it plainly.
	if d.Records[0].Key != nil || d.Records[0].Value != nil || d.Records[1].Key == nil || d.Records[1].Value == nil ||
		d.Records[2].Headers[0].Value != nil || d.Records[2].Headers[1].Value == nil {
		t.Errorf("nil and empty were not kept apart: %#v", d.Records)
	}
	if d.Next != 13 {
		t.Errorf("next = %d, want 13", d.Next)
	}

	tb.attrs = attrLogAppend
	tb.maxTS = 1_800_000_000_000
	d, err = Decode(Fetched{Records: tb.encode()}, 12, ReadCommitted)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Records) != 1 || !d.Records[0].Timestamp.Equal(time.UnixMilli(1_800_000_000_000)) {
		t.Errorf("LogAppendTime batch: records %+v, want one at the batch's max timestamp", d.Records)
	}
}

func TestDecodeNext(t *testing.T) {
	compacted := data(2, -1, false, 1)
	compacted.lastDelta = 4                            // offsets 3..6 were compacted away
	empty := testBatch{base: 7, lastDelta: 2, pid: -1} // a batch emptied by compaction
	whole := concat(data(0, -1, false, 2), compacted, empty)
	partial := data(10, -1, false, 3).encode()[:30]

	for _, tc := range []struct {
		name    string
		records []byte
		from    int64
		want    []int64
		next    int64
	}{
		{"all", whole, 0, []int64{0, 1, 2}, 10},
		{"from inside a batch", whole, 1, []int64{1, 2}, 10},
		{"trailing partial batch ignored", append(append([]byte(nil), whole...), partial...), 0, []int64{0, 1, 2}, 10},
		{"compacted tail", compacted.encode(), 2, []int64{2}, 7},
		{"nothing", nil, 42, nil, 42},
		{"next never below from", data(0, -1, false, 3).encode(), 5, nil, 5},
	} {
		d, err := Decode(Fetched{Records: tc.records}, tc.from, ReadUncommitted)
		if err != nil {
			t.Errorf("%s: decode: %v", tc.name, err)
			continue
		}
		if diff := cmp.Diff(tc.want, offsets(d.Records)); diff != "" || d.Next != tc.next {
			t.Errorf("%s: offsets (-want +got):\n%s next = %d, want %d", tc.name, diff, d.Next, tc.next)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	corrupt := data(0, -1, false, 2).encode()
	corrupt[len(corrupt)-1] ^= 0xff
	old := data(0, -1, false, 1)
	old.magic = 1
	for _, tc := range []struct {
		name    string
		records []byte
		want    string
	}{
		{"crc", corrupt, "CRC mismatch"},
		{"magic", old.encode(), "message format v1"},
		{"only a partial batch", data(0, -1, false, 3).encode()[:40], "part of a record batch"},
	} {
		if _, err := Decode(Fetched{Records: tc.records}, 0, ReadUncommitted); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: decode error = %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestDecodeAborted(t *testing.T) {
	// pid 7 aborts [0,1], pid 8 commits [2,3], pid 7 then writes 6 in a new
	// transaction, pid 9 writes without a transaction, pid 10 aborts a
	// transaction whose marker is beyond this response.
	records := concat(
		data(0, 7, true, 2),
		data(2, 8, true, 2),
		control(4, 7, false),
		control(5, 8, true),
		data(6, 7, true, 1),
		data(7, 9, false, 1),
		data(8, 10, true, 1),
	)
	f := Fetched{Records: records, aborted: []abortedTxn{{producerID: 10, firstOffset: 8}, {producerID: 7, firstOffset: 0}}}

	d, err := Decode(f, 0, ReadCommitted)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int64{2, 3, 6, 7}, offsets(d.Records)); diff != "" || d.Next != 9 {
		t.Errorf("read_committed offsets (-want +got):\n%s next = %d, want 9", diff, d.Next)
	}
	d, err = Decode(f, 0, ReadUncommitted)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int64{0, 1, 2, 3, 6, 7, 8}, offsets(d.Records)); diff != "" || d.Next != 9 {
		t.Errorf("read_uncommitted offsets (-want +got):\n%s next = %d, want 9", diff, d.Next)
	}
}

func TestParseFetch(t *testing.T) {
	p := catchup.Partition{Topic: "t", Partition: 3}
	recs := data(5, -1, false, 1).encode()
	body := binary.BigEndian.AppendUint32(nil, 0) // throttle
	body = binary.BigEndian.AppendUint16(body, 0) // error
	body = binary.BigEndian.AppendUint32(body, 0) // session
	body = binary.BigEndian.AppendUint32(body, 1) // topics
	body = binary.BigEndian.AppendUint16(body, 1)
	body = append(body, 't')
	body = binary.BigEndian.AppendUint32(body, 2) // partitions
	for _, part := range []int32{2, 3} {
		body = binary.BigEndian.AppendUint32(body, uint32(part))
		body = binary.BigEndian.AppendUint16(body, 0)
		body = binary.BigEndian.AppendUint64(body, 9)  // hwm
		body = binary.BigEndian.AppendUint64(body, 8)  // lso
		body = binary.BigEndian.AppendUint64(body, 1)  // log start
		body = binary.BigEndian.AppendUint32(body, 1)  // aborted
		body = binary.BigEndian.AppendUint64(body, 77) // pid
		body = binary.BigEndian.AppendUint64(body, 4)  // first offset
		body = binary.BigEndian.AppendUint32(body, ^uint32(0))
		body = binary.BigEndian.AppendUint32(body, uint32(len(recs)))
		body = append(body, recs...)
	}
	f, err := parseFetch(body, 11, p)
	if err != nil {
		t.Fatal(err)
	}
	want := Fetched{HighWatermark: 9, LastStable: 8, LogStart: 1, aborted: []abortedTxn{{77, 4}}, Records: recs}
	if diff := cmp.Diff(want, f, cmp.AllowUnexported(Fetched{}, abortedTxn{})); diff != "" {
		t.Errorf("parseFetch (-want +got):\n%s", diff)
	}
	if _, err := parseFetch(body[:len(body)-3], 11, p); err == nil {
		t.Errorf("parseFetch of a truncated body: no error")
	}
	if _, err := parseFetch(body, 11, catchup.Partition{Topic: "t", Partition: 4}); err == nil {
		t.Errorf("parseFetch of a missing partition: no error")
	}
}

// BenchmarkDecode measures turning one fetch response's record set (8
// batches of 1000 records, as catchup's encoder writes them, one header
// each) into catchup records: the source half of the hot path.
func BenchmarkDecode(b *testing.B) {
	for _, bc := range []struct {
		size int
		c    compress.Compression
	}{{100, compress.None}, {1024, compress.None}, {1024, compress.Zstd}} {
		size := bc.size
		name := fmt.Sprintf("%dB", size)
		if bc.c != compress.None {
			name += "/" + bc.c.String()
		}
		b.Run(name, func(b *testing.B) {
			recs := make([]catchup.Record, 1000)
			for i := range recs {
				recs[i] = catchup.Record{Offset: int64(i), Key: fmt.Appendf(nil, "key-%d", i), Value: benchValue(i, size),
					Timestamp: time.UnixMilli(1_700_000_000_000 + int64(i)), Headers: []catchup.Header{{Key: "trace", Value: []byte("0af7651916cd43dd")}}}
			}
			var set []byte
			for n := range 8 {
				start := len(set)
				var err error
				if set, err = appendRecordBatch(set, recs, nil, bc.c); err != nil {
					b.Fatal(err)
				}
				binary.BigEndian.PutUint64(set[start:], uint64(n*len(recs))) // base offset
			}
			b.SetBytes(int64(8 * size * len(recs)))
			b.ReportAllocs()
			for b.Loop() {
				d, err := Decode(Fetched{Records: set}, 0, ReadCommitted)
				if err != nil || len(d.Records) != 8*len(recs) {
					b.Fatalf("decoded %d records: %v", len(d.Records), err)
				}
			}
		})
	}
}

// TestReadRecordRejects feeds the record decoder records cut or corrupted
// at each field: every one is an error, none a record with a field read
// out of bounds.
func TestReadRecordRejects(t *testing.T) {
	v := func(n int64) []byte { return binary.AppendVarint(nil, n) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	good := cat([]byte{0}, v(5), v(1), v(1), []byte("k"), v(1), []byte("v"), v(1), v(1), []byte("h"), v(-1))
	tests := []struct {
		name string
		rec  []byte
	}{
		{"empty", nil},
		{"attributes only", []byte{0}},
		{"key longer than the record", cat([]byte{0}, v(5), v(1), v(9), []byte("k"))},
		{"key length below -1", cat([]byte{0}, v(5), v(1), v(-2))},
		{"no header count", cat([]byte{0}, v(5), v(1), v(-1), v(-1))},
		{"more headers than bytes", cat([]byte{0}, v(5), v(1), v(-1), v(-1), v(100))},
		{"negative header count", cat([]byte{0}, v(5), v(1), v(-1), v(-1), v(-3))},
		{"header value cut", good[:len(good)-1]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &recordDecoder{left: 1, maxHeaders: 4}
			if r, err := d.readRecord(tt.rec); err == nil {
				t.Errorf("readRecord(%x) = %+v, want an error", tt.rec, r)
			}
		})
	}
	d := &recordDecoder{left: 1, maxHeaders: 4}
	r, err := d.readRecord(good)
	want := record{timestampDelta: 5, offsetDelta: 1, key: []byte("k"), value: []byte("v"), headers: []catchup.Header{{Key: "h"}}}
	if err != nil || !cmp.Equal(want, r, cmp.AllowUnexported(record{})) {
		t.Errorf("readRecord(good) = %+v, %v; want %+v", r, err, want)
	}
}
