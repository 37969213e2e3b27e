package wire

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"time"
	"unsafe"

	"github.com/segmentio/kafka-go/compress"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// Isolation levels of fetch and list-offsets requests.
const (
	ReadUncommitted int8 = 0
	ReadCommitted   int8 = 1
)

// FetchRequest is a sessionless fetch of one partition (API key 1), at
// versions 4 (isolation level, last stable offset, aborted transactions)
// to 11 (the last non-flexible one), encoded by kmsg.
type FetchRequest struct {
	Partition       catchup.Partition
	Offset          int64         // the first offset wanted
	MaxWait         time.Duration // how long the broker may wait for a first byte
	MaxBytes        int32         // the partition's byte limit
	RequestMaxBytes int32         // the request's byte limit
	Isolation       int8          // ReadUncommitted or ReadCommitted
}

// Key implements Request.
func (*FetchRequest) Key() int16 { return 1 }

// MinVersion implements Request.
func (*FetchRequest) MinVersion() int16 { return 4 }

// MaxVersion implements Request.
func (*FetchRequest) MaxVersion() int16 { return 11 }

// AppendTo implements Request.
func (r *FetchRequest) AppendTo(dst []byte, version int16) ([]byte, error) {
	req := kmsg.NewFetchRequest()
	req.Version = version
	req.ReplicaID = -1
	req.MaxWaitMillis = int32(r.MaxWait / time.Millisecond)
	req.MinBytes = 1
	req.MaxBytes = r.RequestMaxBytes
	req.IsolationLevel = r.Isolation
	req.SessionID = 0
	req.SessionEpoch = -1 // no fetch session: every request names its partitions
	// One topic and one partition, in arrays that stay on the stack: the
	// request is framed once per fetch.
	var topics [1]kmsg.FetchRequestTopic
	var parts [1]kmsg.FetchRequestTopicPartition
	rt, rp := &topics[0], &parts[0]
	rt.Default()
	rp.Default()
	rt.Topic = r.Partition.Topic
	rp.Partition = r.Partition.Partition
	rp.CurrentLeaderEpoch = -1
	rp.FetchOffset = r.Offset
	rp.LogStartOffset = -1
	rp.PartitionMaxBytes = r.MaxBytes
	rt.Partitions = parts[:]
	req.Topics = topics[:]
	return req.AppendTo(dst), nil
}

// FetchResponse is the response to a FetchRequest: ReadFrom finds
// Partition in it and leaves its part in Fetched.
type FetchResponse struct {
	Partition catchup.Partition
	Fetched
}

// ReadFrom implements Response. A request-level error code (v7+) is left
// in Fetched.Code, not returned.
func (r *FetchResponse) ReadFrom(body []byte, version int16) error {
	f, err := parseFetch(body, version, r.Partition)
	r.Fetched = f
	return err
}

// Fetched is one partition of a raw fetch response. Records and Body are
// the response's memory; Spare and Inflate are memory Decode may reuse.
type Fetched struct {
	Code          int16 // the broker's error code, 0 for none
	HighWatermark int64
	LastStable    int64
	LogStart      int64 // -1 below fetch v5
	aborted       []abortedTxn
	Records       []byte           // record batches, the last one possibly cut short
	Body          []byte           // the whole response, which Records is part of
	Spare         []catchup.Record // an empty record slice for Decode to fill, or nil
	Inflate       []byte           // an empty decompression buffer for Decode, or nil
	// Budget is the bytes of records the fetch was sized to hold once
	// decompressed (FetchLimit's maxBytes): a decompression buffer is
	// planned no larger, whatever the ratio, and Decode stops after the
	// batch that reaches it (Decoded.Next is then that batch's end: the
	// rest is fetched again); 0: none.
	Budget int
	// Ratio is the guess of the compression ratio that earlier fetches of
	// the same topic left (Decoded.Ratio, in ratioUnits); 0: none.
	Ratio int
}

type abortedTxn struct{ producerID, firstOffset int64 }

// parseFetch finds p in a fetch response body of version v (4 to 11, the
// versions kafka-go negotiates; all are non-flexible), decoded by kmsg.
func parseFetch(body []byte, v int16, p catchup.Partition) (Fetched, error) {
	res := kmsg.FetchResponse{Version: v}
	err := res.ReadFrom(body) // RecordBatches share memory with body
	if res.ErrorCode != 0 {
		return Fetched{Code: res.ErrorCode}, nil // v7+: the whole request failed
	}
	if err != nil {
		return Fetched{}, fmt.Errorf("fetch response: %w", err)
	}
	for _, t := range res.Topics {
		for _, rp := range t.Partitions {
			if t.Topic != p.Topic || rp.Partition != p.Partition {
				continue
			}
			f := Fetched{Code: rp.ErrorCode, HighWatermark: rp.HighWatermark, LastStable: rp.LastStableOffset, LogStart: -1, Records: rp.RecordBatches}
			if v >= 5 {
				f.LogStart = rp.LogStartOffset
			}
			for _, a := range rp.AbortedTransactions {
				f.aborted = append(f.aborted, abortedTxn{producerID: a.ProducerID, firstOffset: a.FirstOffset})
			}
			return f, nil
		}
	}
	return Fetched{}, fmt.Errorf("fetch response lacks partition %s", p)
}

// Record batch v2 layout (Kafka's DefaultRecordBatch). kmsg decodes the
// batch header and the records; what is left here is what kmsg leaves to
// its client (franz-go's kgo does the same): splitting the record set into
// batches, refusing older message formats before decoding, and the CRC.
const (
	batchHeaderLen  = 61 // up to and including the record count
	batchLogOverlap = 12 // base offset and length, which the length does not count
	batchMagicAt    = 16 // the magic byte, at the same place in every message format
	batchCRCFrom    = 21 // the CRC covers the batch from the attributes on
	attrCompression = 0x07
	attrLogAppend   = 0x08 // timestamp type: every record's timestamp is the batch's max
	attrTxn         = 0x10
	attrControl     = 0x20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// batch is one record batch of format v2, its header decoded by kmsg;
// Records holds its records, compressed or not. kafka-go's decoder hides
// the last offset delta, hence kmsg.
type batch struct{ kmsg.RecordBatch }

func (b *batch) last() int64         { return b.FirstOffset + int64(b.LastOffsetDelta) }
func (b *batch) control() bool       { return b.Attributes&attrControl != 0 }
func (b *batch) transactional() bool { return b.Attributes&attrTxn != 0 }

// splitBatch splits the first complete batch, of any message format, off
// buf. It returns ok false when buf holds no complete batch: the broker cuts
// the last batch of a response at the byte limit.
func splitBatch(buf []byte) (frame, rest []byte, ok bool, err error) {
	if len(buf) < batchLogOverlap {
		return nil, nil, false, nil
	}
	// Every message format starts with the base offset and the length.
	n := int(int32(binary.BigEndian.Uint32(buf[8:])))
	if n < batchHeaderLen-batchLogOverlap {
		return nil, nil, false, fmt.Errorf("record batch at offset %d: length %d too short", int64(binary.BigEndian.Uint64(buf)), n)
	}
	if len(buf) < batchLogOverlap+n {
		return nil, nil, false, nil
	}
	return buf[:batchLogOverlap+n], buf[batchLogOverlap+n:], true, nil
}

// nextBatch splits the first complete batch off buf and decodes its header,
// checking its format and its CRC. ok is as for splitBatch.
func nextBatch(buf []byte) (b batch, rest []byte, ok bool, err error) {
	frame, rest, ok, err := splitBatch(buf)
	if !ok || err != nil {
		return b, rest, ok, err
	}
	if magic := int8(frame[batchMagicAt]); magic != 2 {
		return b, nil, false, fmt.Errorf("record batch at offset %d: message format v%d: catchup reads format v2 (Kafka 0.11 and later) only",
			int64(binary.BigEndian.Uint64(frame)), magic)
	}
	if err := b.ReadFrom(frame); err != nil {
		return b, nil, false, fmt.Errorf("record batch at offset %d: %w", b.FirstOffset, err)
	}
	if uint32(b.CRC) != crc32.Checksum(frame[batchCRCFrom:], castagnoli) {
		return b, nil, false, fmt.Errorf("record batch at offset %d: CRC mismatch: corrupt data", b.FirstOffset)
	}
	return b, rest, true, nil
}

// Batch is the first complete record batch of a fetched record set.
type Batch struct {
	b   batch
	set []byte
}

// FirstBatch splits the first complete batch off records (Fetched.Records)
// and decodes its header, checking its format and its CRC. It returns ok
// false when records holds no complete batch.
func FirstBatch(records []byte) (b Batch, ok bool, err error) {
	b.b, _, ok, err = nextBatch(records)
	b.set = records
	return b, ok, err
}

// FirstOffset is the batch's base offset.
func (b *Batch) FirstOffset() int64 { return b.b.FirstOffset }

// Control reports whether the batch holds a transaction marker.
func (b *Batch) Control() bool { return b.b.control() }

// Records decodes the batch's records, sharing memory with the record set.
func (b *Batch) Records() ([]catchup.Record, error) {
	return newRecordDecoder(b.set).appendRecords(nil, &b.b, b.b.FirstOffset, len(b.set))
}

// recordDecoder decodes the records of one fetch response. The records it
// returns share memory with the response, with its decompression buffer
// and with its header arena, and keep them alive until the caller drops
// them: a recordDecoder serves one fetch, and never writes a byte it has
// handed out.
type recordDecoder struct {
	capRecords int              // records the fetch may hold: the size of the record slice
	left       int              // records left to decode, at most: sizes the header arena
	maxHeaders int              // header slots the fetch may need, at most
	ratio      int              // the guess of decompressed to compressed size in ratioUnits: the hint, then the largest seen (+1); 0 none yet
	budget     int              // the most a buffer is planned for, and decoded (Fetched.Budget); 0: none
	held       int              // bytes of records decoded so far, decompressed
	observed   int              // the largest ratio (+1 unit) seen in this fetch, 0 if nothing was decompressed
	inflated   []byte           // free space after the batches decompressed so far
	headers    []catchup.Header // free space after the headers decoded so far
	rec        kmsg.Record      // scratch: its Headers slice is reused
	spare      []catchup.Record // an empty slice to decode into if it is large enough, or nil
	spareBuf   []byte           // an empty decompression buffer to use if it is large enough, or nil
	buf        []byte           // the first decompression buffer, whole, for the Recycler; or nil
	fromBody   bool             // a record kept shares the response's memory (its batch was not compressed)
}

// newRecordDecoder sizes a decoder for the record set of one fetch response,
// from the record counts in its batch headers (data batches only), bounded
// by its size.
func newRecordDecoder(records []byte) *recordDecoder {
	n := 0
	var b kmsg.RecordBatch
	for buf := records; ; {
		frame, rest, ok, err := splitBatch(buf)
		if !ok || err != nil || frame[batchMagicAt] != 2 || b.ReadFrom(frame) != nil {
			break // Decode reports it
		}
		if b.Attributes&attrControl == 0 && b.NumRecords > 0 {
			n += int(b.NumRecords)
		}
		buf = rest
	}
	n = min(n, len(records)) // a record takes a byte at least, compressed
	return &recordDecoder{capRecords: n, left: n, maxHeaders: n + len(records)/2}
}

// A decoder rounds the decompression buffers it allocates up to whole
// inflateUnits, or smallInflateUnits for one of an inflateUnit at most.
const (
	inflateUnit      = 1 << 20
	smallInflateUnit = 4 << 10
)

// A compression ratio (decompressed to compressed size) is counted in
// ratioUnits: 16 is 1.0, 21 is 1.3125. An integer ratio wasted most of a
// buffer on the batches that hardly compress (1.3 planned as 2) and could
// not size a fetch by it.
const ratioUnit = 16

// maxRatioGuess bounds the compression ratio a fetch is sized by and
// reports (FetchLimit, Decoded.Ratio), in ratioUnits: a batch of zeros
// compresses a thousand times.
const maxRatioGuess = 256 * ratioUnit

// maxPlanRatio bounds the compression ratio a decoder plans a buffer for
// when the fetch says of no budget (Fetched.Budget): a batch of zeros must
// not make it reserve a gigabyte for the rest of the fetch.
const maxPlanRatio = 16 * ratioUnit

// firstRatioGuess is the compression ratio a decoder plans for when no
// batch of the source was decompressed yet, for that batch only. Kafka's
// batches do not say how large they decompress; a guess too large is
// memory held by every fetch in flight (a guess of 4 held 144 MB at the
// start of a copy of snappy batches whose ratio was 1.3), one too small a
// second allocation for the batch.
const firstRatioGuess = 2 * ratioUnit

// inflated is the room, in bytes, that n compressed bytes take at ratio
// (in ratioUnits), rounded up.
func inflated(n, ratio int) int { return (n*ratio + ratioUnit - 1) / ratioUnit }

// FetchLimit is the byte limit to ask a fetch for, so that the records it
// returns hold about maxBytes once decompressed, when the topic's batches
// decompress at ratio (Decoded.FetchRatio; 0: nothing known yet, ratioUnit
// or less: not compressed): maxBytes bounds the memory a fetch in flight
// holds, not the bytes on the wire: a snappy batch of repetitive text
// decompresses to many times its size. A topic's first fetch asks for maxBytes, and Decode stops at
// the budget (Fetched.Budget); its answer tells the next fetches.
func FetchLimit(maxBytes int32, ratio int) int32 {
	if ratio <= ratioUnit {
		return maxBytes
	}
	return max(int32(int64(maxBytes)*ratioUnit/int64(min(ratio, maxRatioGuess))), 1)
}

// Uncompressed is the ratio (Decoded.FetchRatio) of a fetch that
// decompressed nothing, for FetchLimit.
const Uncompressed = ratioUnit

// records returns the batch's records, decompressed into the decoder's
// buffer (fetchLeft: bytes of the fetch's record set from this batch on):
// one allocation per fetch while the guess of the compression ratio holds.
func (d *recordDecoder) records(b *batch, fetchLeft int) ([]byte, error) {
	c := compress.Compression(b.Attributes & attrCompression)
	if c == compress.None {
		return b.Records, nil
	}
	codec := c.Codec()
	if codec == nil {
		return nil, fmt.Errorf("record batch at offset %d: unknown compression codec %d", b.FirstOffset, c)
	}
	guess, whole := d.ratio, true
	if guess == 0 {
		guess, whole = firstRatioGuess, false // no ratio known: room for this batch only
	}
	if d.budget == 0 {
		guess = min(guess, maxPlanRatio)
	}
	if cap(d.inflated) < inflated(len(b.Records), guess) {
		// Room for the rest of the fetch: every batch left may be compressed.
		// Rounded up, so that a recycled buffer fits the next fetch,
		// whose response is a few bytes longer or shorter.
		n := inflated(len(b.Records), guess)
		if whole {
			n = inflated(max(len(b.Records), fetchLeft), guess)
		}
		if d.budget > 0 && n > d.budget {
			n = max(d.budget, len(b.Records)) // a batch larger than that grows it
		}
		unit := inflateUnit
		if n <= inflateUnit {
			unit = smallInflateUnit // an anchor check's one record does not take a MiB
		}
		n = (n + unit - 1) / unit * unit
		if cap(d.spareBuf) >= n {
			d.inflated, d.spareBuf = d.spareBuf[:0], nil
		} else {
			d.inflated = make([]byte, 0, n)
		}
		if d.buf == nil {
			d.buf = d.inflated
		}
	}
	if c == compress.Zstd {
		// Into the free space, or a buffer of its own if the batch
		// does not fit: the batches before keep theirs.
		out, err := appendUnzstd(d.inflated[:0], b.Records, b.FirstOffset)
		if err != nil {
			return nil, err
		}
		return d.took(out, len(b.Records)), nil
	}
	r := codec.NewReader(bytes.NewReader(b.Records))
	defer r.Close()
	out := d.inflated
	for {
		if len(out) == cap(out) {
			// Moves this batch's bytes only: the batches before keep
			// the old buffer.
			out = slices.Grow(out, max(cap(out), 4<<10))
		}
		n, err := r.Read(out[len(out):cap(out)])
		out = out[:len(out)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("record batch at offset %d: %s: %w", b.FirstOffset, codec.Name(), err)
		}
	}
	return d.took(out, len(b.Records)), nil
}

// took records that out, decompressed from n bytes, took the start of the
// free space, and returns it capped: the next batch cannot overwrite it.
func (d *recordDecoder) took(out []byte, n int) []byte {
	d.inflated = out[len(out):]
	d.observed = max(d.observed, (len(out)*ratioUnit+max(n, 1)-1)/max(n, 1)+1) // rounded up, plus a unit
	d.ratio = min(max(d.ratio, d.observed), maxRatioGuess)
	return out[:len(out):len(out)]
}

// appendRecords appends the batch's records at or above from to dst
// (fetchLeft: bytes of the fetch's record set from this batch on). Keys,
// values and header values share memory with the response (or the
// decompressed batch); nil stays nil and empty stays empty.
func (d *recordDecoder) appendRecords(dst []catchup.Record, b *batch, from int64, fetchLeft int) ([]catchup.Record, error) {
	data, err := d.records(b, fetchLeft)
	if err != nil {
		return dst, err
	}
	d.held += len(data)
	for range max(b.NumRecords, 0) {
		// kmsg decodes one record from a slice that holds it exactly.
		n, used := binary.Varint(data)
		if used <= 0 || n < 0 || n > int64(len(data)-used) {
			return dst, fmt.Errorf("record batch at offset %d: %w", b.FirstOffset, errShort)
		}
		end := used + int(n)
		rec, err := d.readRecord(data[used:end])
		if err != nil {
			return dst, fmt.Errorf("record batch at offset %d: %w", b.FirstOffset, err)
		}
		data = data[end:]
		offset := b.FirstOffset + rec.offsetDelta
		if rec.offsetDelta < 0 || rec.offsetDelta > int64(b.LastOffsetDelta) || offset < b.FirstOffset ||
			(len(dst) > 0 && offset <= dst[len(dst)-1].Offset) {
			// A log's offsets only grow: a copy that followed this
			// response would write a record twice or out of order.
			return dst, fmt.Errorf("record batch at offset %d: record at offset %d is out of order (batch %d to %d, %d records before it): corrupt response",
				b.FirstOffset, offset, b.FirstOffset, b.last(), len(dst))
		}
		if offset < from {
			d.headers = d.headers[:len(d.headers)-len(rec.headers)] // not kept
			continue
		}
		ts := b.FirstTimestamp + rec.timestampDelta
		if b.Attributes&attrLogAppend != 0 {
			ts = b.MaxTimestamp
		}
		if dst == nil {
			if cap(d.spare) >= d.capRecords {
				dst = d.spare[:0]
			} else {
				dst = make([]catchup.Record, 0, max(d.capRecords, 1))
			}
		}
		dst = append(dst, catchup.Record{Offset: offset, Key: rec.key, Value: rec.value,
			Headers: rec.headers, Timestamp: time.UnixMilli(ts)})
		d.fromBody = d.fromBody || b.Attributes&attrCompression == 0
		d.left = max(d.left-1, 1)
	}
	return dst, nil
}

// record is one decoded record of a batch, relative to the batch.
type record struct {
	timestampDelta, offsetDelta int64
	key, value                  []byte
	headers                     []catchup.Header
}

// readRecord decodes one record (format v2, its length prefix taken off)
// straight into catchup's types: keys, values and header values share
// memory with data, header keys are strings sharing it too (unsafe.String),
// and the headers go into the header arena without spare capacity (nil
// for none). Nobody writes to data until the fetch is released
// (catchup.Fetched.Release): a header key, like a key or a value, must
// not be kept past that, not even as a map key. A length of -1 is nil, 0
// is empty. Hand-written rather than kmsg.Record.UnsafeReadFrom: that
// decodes into kmsg's types first, whose headers were then copied into
// ours, for every record (the decoder's largest per-record cost for small
// records, after the CRC).
func (d *recordDecoder) readRecord(data []byte) (r record, err error) {
	r2 := recordReader{buf: data}
	r2.buf = r2.buf[min(1, len(r2.buf)):] // attributes: unused in format v2
	if len(data) == 0 {
		r2.bad = true
	}
	r.timestampDelta = r2.varint()
	r.offsetDelta = r2.varint()
	r.key = r2.bytes()
	r.value = r2.bytes()
	n := r2.varint()
	if r2.bad || n < 0 || n > int64(len(r2.buf)) {
		return r, errShort
	}
	if n > 0 {
		if cap(d.headers)-len(d.headers) < int(n) {
			// The arena grows as if every record left had as many
			// headers as this one.
			d.headers = make([]catchup.Header, 0, max(int(n), min(int(n)*d.left, d.maxHeaders)))
		}
		first := len(d.headers)
		for range n {
			k := r2.bytes()
			v := r2.bytes()
			if r2.bad {
				d.headers = d.headers[:first]
				return r, errShort
			}
			d.headers = append(d.headers, catchup.Header{Key: unsafe.String(unsafe.SliceData(k), len(k)), Value: v})
		}
		r.headers = d.headers[first:len(d.headers):len(d.headers)]
	}
	return r, nil
}

// recordReader reads the varints and length-prefixed byte strings of one
// record; bad is set, for good, at the first short or malformed field.
type recordReader struct {
	buf []byte
	bad bool
}

func (r *recordReader) varint() int64 {
	if len(r.buf) > 0 && r.buf[0] < 0x80 {
		// One byte: most fields of a record (attributes' neighbours,
		// deltas, lengths under 64, header counts). Decoded inline: this is
		// the decoder's hottest call, and binary.Varint's loop is not.
		x := r.buf[0]
		r.buf = r.buf[1:]
		return int64(x>>1) ^ -int64(x&1)
	}
	v, n := binary.Varint(r.buf)
	if n <= 0 {
		r.bad, r.buf = true, nil
		return 0
	}
	r.buf = r.buf[n:]
	return v
}

// bytes reads a varint length and that many bytes, capacity cut to them:
// nil for -1, empty for 0.
func (r *recordReader) bytes() []byte {
	n := r.varint()
	switch {
	case r.bad:
		return nil
	case n == -1:
		return nil
	case n < -1 || n > int64(len(r.buf)):
		r.bad, r.buf = true, nil
		return nil
	}
	b := r.buf[:n:n]
	r.buf = r.buf[n:]
	return b
}

// controlType returns the type of a control batch's record.
func (d *recordDecoder) controlType(b *batch, fetchLeft int) (kmsg.ControlRecordKeyType, error) {
	data, err := d.records(b, fetchLeft)
	if err != nil {
		return 0, err
	}
	var key kmsg.ControlRecordKey
	if n, used := binary.Varint(data); used > 0 && n >= 0 && n <= int64(len(data)-used) &&
		d.rec.ReadFrom(data[:used+int(n)]) == nil && key.ReadFrom(d.rec.Key) == nil {
		return key.Type, nil
	}
	return 0, fmt.Errorf("control batch at offset %d: malformed control record", b.FirstOffset)
}

// Decoded is what a fetch response holds for a copier.
type Decoded struct {
	Records []catchup.Record
	Next    int64 // one past the last offset of the last complete batch, at least from
	Batches int
	Inflate []byte // the decompression buffer the records share, for the Recycler; or nil
	// BodyFree says that no record shares the response's memory (every one
	// came from a compressed batch, or there are none): the response
	// buffer can go back to the Recycler before the records are produced.
	BodyFree bool
	// Ratio is the compression ratio (in ratioUnits, rounded up, plus one,
	// at most maxRatioGuess) of the most compressed batch this fetch
	// decompressed, for the next fetches of the topic to plan their
	// buffers by (Fetched.Ratio); 0 if none was.
	Ratio int
	// FetchRatio is the fetch's records decompressed over the bytes of the
	// batches they came in, headers included (in ratioUnits, rounded up),
	// for the next fetches to size their byte limit by (FetchLimit): the
	// most compressed batch is the wrong measure there, since a batch of
	// one record spends more on its header than its record; 0 if nothing
	// was decompressed.
	FetchRatio int
}

// Decode returns the data records at or above from, without control
// batches and, with ReadCommitted, without the batches of aborted
// transactions, filtered as Kafka's Java consumer does: a transactional
// batch is aborted if its producer has an aborted transaction that started
// at or before the batch's last offset and whose abort marker has not been
// seen yet.
func Decode(f Fetched, from int64, isolation int8) (Decoded, error) {
	d := Decoded{Next: from}
	aborted := slices.Clone(f.aborted) // nil, without an allocation, for none
	slices.SortFunc(aborted, func(a, b abortedTxn) int { return cmp.Compare(a.firstOffset, b.firstOffset) })
	var open map[int64]bool // producers inside an aborted transaction
	dec := newRecordDecoder(f.Records)
	dec.spare, dec.spareBuf, dec.ratio, dec.budget = f.Spare, f.Inflate, min(max(f.Ratio, 0), maxRatioGuess), max(f.Budget, 0)
	buf := f.Records
	framed := 0 // bytes of the batches decoded, headers included
	for dec.budget == 0 || dec.held < dec.budget {
		left := len(buf)
		b, rest, ok, err := nextBatch(buf)
		if err != nil {
			return d, err
		}
		if !ok {
			break
		}
		framed += left - len(rest)
		buf = rest
		d.Batches++
		d.Next = max(d.Next, b.last()+1)
		skip := b.control()
		if isolation == ReadCommitted && b.ProducerID >= 0 {
			for len(aborted) > 0 && aborted[0].firstOffset <= b.last() {
				if open == nil {
					open = make(map[int64]bool)
				}
				open[aborted[0].producerID] = true
				aborted = aborted[1:]
			}
			if b.control() {
				if t, err := dec.controlType(&b, left); err != nil {
					return d, err
				} else if t == kmsg.ControlRecordKeyTypeAbort {
					delete(open, b.ProducerID)
				}
			} else if b.transactional() && open[b.ProducerID] {
				skip = true
			}
		}
		if !skip {
			if d.Records, err = dec.appendRecords(d.Records, &b, from, left); err != nil {
				return d, err
			}
		}
	}
	if d.Batches == 0 && len(f.Records) > 0 {
		return d, errors.New("the response holds part of a record batch only: the broker truncated a batch larger than the fetch size")
	}
	d.Inflate, d.Ratio, d.BodyFree = dec.buf, min(dec.observed, maxRatioGuess), !dec.fromBody
	if dec.observed > 0 && framed > 0 {
		d.FetchRatio = min((dec.held*ratioUnit+framed-1)/framed, maxRatioGuess)
	}
	if d.Inflate == nil {
		d.Inflate = dec.spareBuf // unused (nothing compressed): back to the Recycler
	}
	return d, nil
}

var errShort = errors.New("truncated")
