package wire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/bits"
	"runtime"
	"strconv"

	"github.com/segmentio/kafka-go/compress"
	"github.com/segmentio/kafka-go/compress/gzip"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// Produce requests are encoded here, straight into one pooled buffer (a
// Frame), and
// written to the connection with one Write: kafka-go's encoder goes through
// a protocol.RecordReader per record and a page buffer per request, a cost
// paid per record that dominates with small records, and it writes a record
// timestamp of 0 (the Unix epoch) as "now".
//
// Produce v3 to v8 (the versions catchup and kafka-go agree on) are the same
// on the wire: request header v1, then
//
//	transactional_id NULLABLE_STRING, acks INT16, timeout_ms INT32,
//	[topic STRING [partition INT32, records NULLABLE_BYTES]]
//
// and records is one record batch of format v2 (Kafka's DefaultRecordBatch).

// Frame is a whole request, size prefix included, in a buffer that goes
// back to a free list once it is written.
type Frame struct {
	buf  []byte
	list chan *Frame // the free list Release gives it back to
}

// Bytes returns the frame, to be written with one Write.
func (f *Frame) Bytes() []byte { return f.buf }

// Release gives the frame back for the next request: its bytes must not be
// used after.
func (f *Frame) Release() {
	if cap(f.buf) > maxPooledFrame {
		return
	}
	select {
	case f.list <- f:
	default:
	}
}

// frames is a free list of produce frames. Unlike a sync.Pool it survives
// garbage collections, which come every few requests while copying: a frame
// dropped by the GC costs a fresh megabyte, zeroed. It holds at most one
// frame per partition copied at once (the default parallelism).
var frames = make(chan *Frame, 8)

// scratch is the free list of the buffers a compressed batch's records are
// encoded into before they are compressed into the frame. A buffer is held
// only while its batch is compressed, which takes a CPU, so the list keeps
// one per CPU (at most as many as frames): each is the size of a request
// uncompressed, a megabyte at the defaults, and keeping one per partition
// copied at once would hold that much again as the frames do.
var scratch = make(chan *Frame, min(runtime.GOMAXPROCS(0), cap(frames)))

// compressing lets as many batches be compressed at once as scratch keeps
// buffers, whatever the codec. A batch waits for its turn before it takes
// a buffer: otherwise each partition copied at once takes one while it
// waits for a zstd encoder or a CPU, and all but the list's few are fresh
// megabytes, garbage a moment later, which set a compressed copy's peak
// RSS by the garbage collector's pace.
var compressing = make(chan struct{}, cap(scratch))

// smallFrames is the free list of the frames of the other requests (a
// fetch: a hundred bytes, framed once per fetch), apart so that a produce
// never takes a frame too small for it.
var smallFrames = make(chan *Frame, 8)

// maxPooledFrame bounds what the free list keeps: an outsized request (a
// batch of huge records) is not held on to.
const maxPooledFrame = 4 << 20

// frameUnit is what a new frame larger than it is rounded up to.
const frameUnit = 64 << 10

// getFrame returns a frame of list with room for size bytes.
func getFrame(list chan *Frame, size int) *Frame {
	var f *Frame
	select {
	case f = <-list:
	default:
		f = &Frame{list: list}
	}
	if cap(f.buf) < size {
		if size > frameUnit {
			// Rounded up, so that the next request, a little longer, usually fits.
			size = (size + frameUnit - 1) / frameUnit * frameUnit
		}
		f.buf = make([]byte, 0, size)
	}
	f.buf = f.buf[:0]
	return f
}

// ProduceRequest is a produce request (API key 0) of one record batch for
// each of one or more partitions, all led by the broker it goes to.
type ProduceRequest struct {
	Acks          int16
	TimeoutMillis int32
	Compression   compress.Compression
	Level         int // the compression level, gzip 1 to 9 or zstd 1 to 22; 0: the codec's default
	// Batches are the partitions' batches, those of a topic next to one
	// another (a topic is written once, with all its partitions); each
	// partition at most once.
	Batches []ProduceBatch
}

// ProduceBatch is the record batch a ProduceRequest carries for one partition.
type ProduceBatch struct {
	Partition catchup.Partition
	Records   []catchup.Record
	Stamp     *catchup.Provenance // if set, the provenance header each record gets (Offset: the record's)
	Seq       ProducerSeq         // the idempotent producer's fields of the batch; the zero value for none
}

// ProducerSeq is what an idempotent producer writes into a record batch: its
// producer id and epoch and the sequence number of the batch's first record.
type ProducerSeq struct {
	On    bool // an idempotent batch; else the fields are written as -1
	ID    int64
	Epoch int16
	Base  int32
}

// noProducer is the ProducerSeq of a batch that is not idempotent.
var noProducer = ProducerSeq{}

// Key implements Request.
func (*ProduceRequest) Key() int16 { return 0 }

// MinVersion implements Request: v3 is the first with record batch format v2.
func (*ProduceRequest) MinVersion() int16 { return 3 }

// MaxVersion implements Request: v9 is flexible.
func (*ProduceRequest) MaxVersion() int16 { return 8 }

// bodyCap implements sizer. A compressed batch is sized by what it holds
// uncompressed too: a frame taken from the free list is usually large
// enough (the list keeps frames of the requests sent before), and a new one
// starts at a quarter of that and grows as the codec appends to it, so that
// the frames a compressed copy keeps in flight are the size of what it
// sends rather than of its records uncompressed.
func (r *ProduceRequest) bodyCap() int {
	n := produceHeaderLen - requestHeaderLen - produceTopicLen - producePartitionLen
	for i := range r.Batches {
		b := &r.Batches[i]
		st := newStamper(b.Stamp)
		recs := recordsCap(b.Records, &st)
		if r.Compression != compress.None {
			recs /= 4
		}
		n += produceTopicLen + len(b.Partition.Topic) + producePartitionLen + batchHeaderLen + recs
	}
	return n
}

// AppendTo implements Request.
func (r *ProduceRequest) AppendTo(b []byte, _ int16) ([]byte, error) {
	if len(r.Batches) == 0 {
		return b, fmt.Errorf("produce request: no partitions")
	}
	b = binary.BigEndian.AppendUint16(b, 0xffff) // transactional_id: null
	b = binary.BigEndian.AppendUint16(b, uint16(r.Acks))
	b = binary.BigEndian.AppendUint32(b, uint32(r.TimeoutMillis))
	topics := len(b)
	b = binary.BigEndian.AppendUint32(b, 0) // topics, counted below
	nt, parts := 0, 0
	for i := range r.Batches {
		pb := &r.Batches[i]
		if i == 0 || pb.Partition.Topic != r.Batches[i-1].Partition.Topic {
			nt++
			b = appendString(b, pb.Partition.Topic)
			parts = len(b)
			b = binary.BigEndian.AppendUint32(b, 0) // partitions, counted below
		}
		binary.BigEndian.PutUint32(b[parts:], binary.BigEndian.Uint32(b[parts:])+1)
		b = binary.BigEndian.AppendUint32(b, uint32(pb.Partition.Partition))
		at := len(b)
		b = binary.BigEndian.AppendUint32(b, 0) // records size, set below
		var err error
		b, err = appendProducerBatch(b, pb.Records, pb.Stamp, r.Compression, r.Level, pb.Seq)
		if err != nil {
			return b, fmt.Errorf("produce %s: %w", pb.Partition, err)
		}
		binary.BigEndian.PutUint32(b[at:], uint32(len(b)-at-4))
	}
	binary.BigEndian.PutUint32(b[topics:], uint32(nt))
	return b, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// Offsets in a record batch of format v2, from its first byte.
const (
	batchLengthAt = 8
	batchCRCAt    = 17
	batchMaxTSAt  = 35
)

// appendRecordBatch appends recs to b as one record batch of format v2,
// with CreateTime timestamps, not transactional, not idempotent, its
// records compressed with c, stamped with the provenance header if stamp is
// set.
func appendRecordBatch(b []byte, recs []catchup.Record, stamp *catchup.Provenance, c compress.Compression) ([]byte, error) {
	return appendProducerBatch(b, recs, stamp, c, 0, noProducer)
}

// appendProducerBatch is appendRecordBatch with the producer fields of seq
// (an idempotent batch when seq.On), compressed at level (0: the codec's
// default).
func appendProducerBatch(b []byte, recs []catchup.Record, stamp *catchup.Provenance, c compress.Compression, level int, seq ProducerSeq) ([]byte, error) {
	if len(recs) == 0 {
		return b, fmt.Errorf("record batch: no records")
	}
	first := recs[0].Timestamp.UnixMilli()
	start := len(b)
	b = binary.BigEndian.AppendUint64(b, 0)          // base offset: the broker assigns it
	b = binary.BigEndian.AppendUint32(b, 0)          // batch length, set below
	b = binary.BigEndian.AppendUint32(b, 0xffffffff) // partition leader epoch: -1
	b = append(b, 2)                                 // magic
	b = binary.BigEndian.AppendUint32(b, 0)          // CRC, set below
	b = binary.BigEndian.AppendUint16(b, uint16(c)&attrCompression)
	b = binary.BigEndian.AppendUint32(b, uint32(len(recs)-1)) // last offset delta
	b = binary.BigEndian.AppendUint64(b, uint64(first))
	b = binary.BigEndian.AppendUint64(b, uint64(first)) // max timestamp, set below
	if !seq.On {
		seq = ProducerSeq{ID: -1, Epoch: -1, Base: -1}
	}
	b = binary.BigEndian.AppendUint64(b, uint64(seq.ID))
	b = binary.BigEndian.AppendUint16(b, uint16(seq.Epoch))
	b = binary.BigEndian.AppendUint32(b, uint32(seq.Base))
	b = binary.BigEndian.AppendUint32(b, uint32(len(recs)))
	st := newStamper(stamp)
	var maxTS int64
	if c == compress.None {
		b, maxTS = appendRecords(b, recs, first, &st)
	} else {
		var err error
		if b, maxTS, err = appendCompressed(b, recs, first, &st, c, level); err != nil {
			return b, err
		}
	}
	binary.BigEndian.PutUint64(b[start+batchMaxTSAt:], uint64(maxTS))
	binary.BigEndian.PutUint32(b[start+batchLengthAt:], uint32(len(b)-start-batchLogOverlap))
	binary.BigEndian.PutUint32(b[start+batchCRCAt:], crc32.Checksum(b[start+batchCRCFrom:], castagnoli))
	return b, nil
}

// appendRecords appends recs as the records of a batch whose first
// timestamp is first, and returns the largest timestamp: each record's
// timestamp is read once.
func appendRecords(b []byte, recs []catchup.Record, first int64, st *stamper) ([]byte, int64) {
	maxTS := first
	for i := range recs {
		ts := recs[i].Timestamp.UnixMilli()
		maxTS = max(maxTS, ts)
		b = appendRecord(b, &recs[i], i, ts-first, st)
	}
	return b, maxTS
}

// appendCompressed appends recs compressed with c at level, as the records
// of a batch whose first timestamp is first, and returns the largest
// timestamp. It waits, without a context, for a turn (compressing): for
// the batches before it to be compressed.
func appendCompressed(b []byte, recs []catchup.Record, first int64, st *stamper, c compress.Compression, level int) ([]byte, int64, error) {
	if _, err := codecOf(c, level); err != nil {
		return b, 0, err
	}
	compressing <- struct{}{}
	defer func() { <-compressing }()
	s := getFrame(scratch, recordsCap(recs, st))
	defer s.Release() // before the turn is given up: the next batch takes it
	var maxTS int64
	s.buf, maxTS = appendRecords(s.buf, recs, first, st)
	b, err := appendCompressedRaw(b, s.buf, c, level)
	return b, maxTS, err
}

// codecOf is the codec of c at level.
func codecOf(c compress.Compression, level int) (compress.Codec, error) {
	codec := c.Codec()
	if c == compress.Gzip && level >= 1 && level < len(gzipCodecs) {
		codec = gzipCodecs[level]
	}
	if codec == nil {
		return nil, fmt.Errorf("record batch: unknown compression codec %d", c)
	}
	return codec, nil
}

// appendCompressedRaw appends raw, encoded records, compressed with c at
// level.
func appendCompressedRaw(b, raw []byte, c compress.Compression, level int) ([]byte, error) {
	codec, err := codecOf(c, level)
	if err != nil {
		return b, err
	}
	if c == compress.Zstd {
		return appendZstd(b, raw, level)
	}
	out := bytes.NewBuffer(b)
	w := codec.NewWriter(out)
	if _, err := w.Write(raw); err != nil {
		w.Close()
		return out.Bytes(), fmt.Errorf("record batch: %s: %w", codec.Name(), err)
	}
	if err := w.Close(); err != nil {
		return out.Bytes(), fmt.Errorf("record batch: %s: %w", codec.Name(), err)
	}
	return out.Bytes(), nil
}

// The compression levels a ProduceRequest may name (Level), besides 0.
const (
	MaxGzipLevel = 9  // compress/gzip's BestCompression
	MaxZstdLevel = 22 // zstd's highest; klauspost maps 1 to 22 onto four encoders
)

// gzipCodecs are kafka-go's gzip codec at each level, 1 to 9, built once:
// each keeps its own pool of writers.
var gzipCodecs = func() (cs [MaxGzipLevel + 1]compress.Codec) {
	for l := 1; l < len(cs); l++ {
		cs[l] = &gzip.Codec{Level: l}
	}
	return cs
}()

// produceHeaderLen is the size of a produce request of one partition up
// to its record batch, without the client id and the topic name; the
// topic's and the partition's framing are its last produceTopicLen and
// producePartitionLen bytes.
const produceHeaderLen = 4 + 2 + 2 + 4 + 2 + 2 + 2 + 4 + 4 + produceTopicLen + producePartitionLen

// The framing of each topic of a produce request (the name's length and
// the partition count) and of each partition (its index and the records'
// size).
const (
	produceTopicLen     = 2 + 4
	producePartitionLen = 4 + 4
)

// stamper writes the provenance header of the records of one batch. The
// value's prefix ("v1:<cluster>:<topic>:<partition>:") is the same for every
// record of the batch, so it is formatted once; only the offset is formatted
// per record, which matters for small records, where the header is a large
// share of each record's bytes. The offsets of a batch mostly follow one
// another, so the last one's digits are kept and incremented in place.
type stamper struct {
	prefix []byte                // catchup.AppendProvenancePrefix of the batch's stamp; nil: no header
	digits [maxDecimalInt64]byte // the last offset formatted, in digits[:n]
	n      int                   // 0: none yet
	last   int64                 // the offset digits[:n] holds
}

func newStamper(stamp *catchup.Provenance) stamper {
	if stamp == nil {
		return stamper{}
	}
	return stamper{prefix: catchup.AppendProvenancePrefix(make([]byte, 0, 64), stamp.Partition, stamp.Cluster)}
}

// offset returns off in decimal, strconv.AppendInt's digits, in st's memory
// until the next call. The offset after the last one is the last one's
// digits plus one, carried by hand; any other offset, and one that takes a
// digit more, is formatted by strconv.
func (st *stamper) offset(off int64) []byte {
	d := st.digits[:st.n]
	if st.n > 0 && st.last >= 0 && off > st.last && off-st.last == 1 {
		i := len(d) - 1
		for i >= 0 && d[i] == '9' {
			i--
		}
		if i >= 0 {
			d[i]++
			for j := i + 1; j < len(d); j++ {
				d[j] = '0'
			}
			st.last = off
			return d
		}
	}
	d = strconv.AppendInt(st.digits[:0], off, 10)
	st.n, st.last = len(d), off
	return d
}

// maxRecordOverhead bounds what a record adds to its key, value and headers:
// the length prefix, attributes, timestamp delta (a varlong), offset delta,
// the key and value lengths and the header count.
const maxRecordOverhead = binary.MaxVarintLen32 + 1 + binary.MaxVarintLen64 + 4*binary.MaxVarintLen32

// maxDecimalInt64 is the longest an int64 is in decimal, with its sign.
const maxDecimalInt64 = 20

// recordsCap is an upper bound of the size of recs encoded (uncompressed)
// in a batch: it sizes the frame without sizing every varint and offset of
// the batch in a pass of its own, which would cost about as much as encoding
// small records.
func recordsCap(recs []catchup.Record, st *stamper) int {
	per := maxRecordOverhead
	if st.prefix != nil {
		per += varintLen(int64(len(catchup.ProvenanceHeader))) + len(catchup.ProvenanceHeader) +
			binary.MaxVarintLen32 + len(st.prefix) + maxDecimalInt64
	}
	n := len(recs) * per
	for i := range recs {
		r := &recs[i]
		n += len(r.Key) + len(r.Value) + len(r.Headers)*2*binary.MaxVarintLen32
		for _, h := range r.Headers {
			n += len(h.Key) + len(h.Value)
		}
	}
	return n
}

// stampLen is the length of the provenance header value of the record at
// offset, or -1 without a stamp (for sizing one record; the encoder formats
// the value instead).
func stampLen(stamp *catchup.Provenance, offset int64) int {
	if stamp == nil {
		return -1
	}
	pv := *stamp
	pv.Offset = offset
	return catchup.ProvenanceLen(pv)
}

// BatchLen is the size of a record batch holding only r, uncompressed,
// with the provenance header of stamp at r.Offset if stamp is set: what a
// broker compares with max.message.bytes.
func BatchLen(r *catchup.Record, stamp *catchup.Provenance) int {
	l := recordLen(r, 0, r.Timestamp.UnixMilli(), stampLen(stamp, r.Offset))
	return batchHeaderLen + varintLen(int64(l)) + l
}

// recordLen is the size of r encoded, without its length prefix, with a
// provenance header value of stamp bytes (-1: none).
func recordLen(r *catchup.Record, i int, first int64, stamp int) int {
	return recordBodyLen(r, i, r.Timestamp.UnixMilli()-first, stamp)
}

// recordBodyLen is recordLen of r at offset delta i and timestamp delta ts.
func recordBodyLen(r *catchup.Record, i int, ts int64, stamp int) int {
	headers := len(r.Headers)
	if stamp >= 0 {
		headers++
	}
	n := 1 + varintLen(ts) + varintLen(int64(i)) + bytesLen(r.Key) + bytesLen(r.Value) + varintLen(int64(headers))
	for _, h := range r.Headers {
		n += varintLen(int64(len(h.Key))) + len(h.Key) + bytesLen(h.Value)
	}
	if stamp >= 0 {
		n += varintLen(int64(len(catchup.ProvenanceHeader))) + len(catchup.ProvenanceHeader) + varintLen(int64(stamp)) + stamp
	}
	return n
}

// appendRecord appends r as the record at offset delta i and timestamp
// delta ts of a batch, with the provenance header of st last if st has
// one. A nil key, value or header value is written as null, an empty one
// as empty.
func appendRecord(b []byte, r *catchup.Record, i int, ts int64, st *stamper) []byte {
	var offset []byte // r.Offset in decimal, the end of the header value
	sl, headers := -1, len(r.Headers)
	if st.prefix != nil {
		offset = st.offset(r.Offset)
		sl = len(st.prefix) + len(offset)
		headers++
	}
	b = binary.AppendVarint(b, int64(recordBodyLen(r, i, ts, sl)))
	b = append(b, 0) // attributes: unused
	b = binary.AppendVarint(b, ts)
	b = binary.AppendVarint(b, int64(i))
	b = appendBytes(b, r.Key)
	b = appendBytes(b, r.Value)
	b = binary.AppendVarint(b, int64(headers))
	for _, h := range r.Headers {
		b = binary.AppendVarint(b, int64(len(h.Key)))
		b = append(b, h.Key...)
		b = appendBytes(b, h.Value)
	}
	if sl >= 0 {
		b = binary.AppendVarint(b, int64(len(catchup.ProvenanceHeader)))
		b = append(b, catchup.ProvenanceHeader...)
		b = binary.AppendVarint(b, int64(sl))
		b = append(b, st.prefix...)
		b = append(b, offset...)
	}
	return b
}

func appendBytes(b, v []byte) []byte {
	if v == nil {
		return binary.AppendVarint(b, -1)
	}
	b = binary.AppendVarint(b, int64(len(v)))
	return append(b, v...)
}

// bytesLen is the encoded size of a nullable byte string.
func bytesLen(v []byte) int {
	if v == nil {
		return 1
	}
	return varintLen(int64(len(v))) + len(v)
}

// varintLen is the size of x as a zig-zag varint (Kafka's varint and
// varlong, Go's binary.AppendVarint).
func varintLen(x int64) int {
	ux := uint64(x)<<1 ^ uint64(x>>63)
	return (bits.Len64(ux|1) + 6) / 7
}
