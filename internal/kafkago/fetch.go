package kafkago

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"time"

	"github.com/segmentio/kafka-go/compress"
	"github.com/segmentio/kafka-go/protocol/fetch"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// Fetch requests wait at most fetchMaxWait for a first byte, so that a fetch
// at the high watermark returns promptly.
const fetchMaxWait = 250 * time.Millisecond

// fetchRequestMaxBytes is the request-level byte limit of a fetch (the Java
// consumer's fetch.max.bytes). The partition limit bounds the response of
// the one partition asked for; a request limit equal to it made kfake cut
// the response at the request level, which leaves the aborted transactions
// out, so that aborted records were read as committed.
const fetchRequestMaxBytes = 50 << 20

// Isolation levels of fetch and list-offsets requests.
const (
	readUncommitted int8 = 0
	readCommitted   int8 = 1
)

// fetched is one partition of a raw fetch response.
type fetched struct {
	code     int16
	hwm      int64
	lso      int64
	logStart int64 // -1 below fetch v5
	aborted  []abortedTxn
	records  []byte // record batches, the last one possibly cut short
}

type abortedTxn struct{ producerID, firstOffset int64 }

// fetchRaw sends one sessionless fetch for p at offset from and returns
// the partition's part of the response, undecoded. Errors are classified
// with readError; broker error codes are left in fetched.code.
func (c *Cluster) fetchRaw(ctx context.Context, p catchup.Partition, from int64, maxBytes int32, isolation int8) (fetched, error) {
	e := c.newExchange(&fetch.Request{
		ReplicaID:      -1,
		MaxWaitTime:    int32(fetchMaxWait / time.Millisecond),
		MinBytes:       1,
		MaxBytes:       max(maxBytes, fetchRequestMaxBytes),
		IsolationLevel: isolation,
		SessionID:      0,
		SessionEpoch:   -1, // no fetch session: every request names its partitions
		Topics: []fetch.RequestTopic{{
			Topic: p.Topic,
			Partitions: []fetch.RequestPartition{{
				Partition:          p.Partition,
				CurrentLeaderEpoch: -1,
				FetchOffset:        from,
				LogStartOffset:     -1,
				PartitionMaxBytes:  maxBytes,
			}},
		}},
	}, 4) // v4: isolation level, last stable offset, aborted transactions
	e.raw = true
	res, err := c.roundTrip(ctx, e, requestTimeout)
	if err != nil {
		return fetched{}, c.readError(ctx, err)
	}
	f, err := parseFetch(res.(*rawResponse).body, e.version, p)
	if err != nil {
		return fetched{}, mark(err, catchup.ErrRetriable)
	}
	return f, nil
}

// parseFetch finds p in a fetch response body of version v (4 to 11, the
// versions kafka-go negotiates; all are non-flexible).
func parseFetch(body []byte, v int16, p catchup.Partition) (fetched, error) {
	r := &reader{b: body}
	r.int32() // throttle time
	if v >= 7 {
		if code := r.int16(); code != 0 && r.err == nil {
			return fetched{code: code}, nil
		}
		r.int32() // session id
	}
	for nt := r.arrayLen(); nt > 0 && r.err == nil; nt-- {
		topic := r.string()
		for np := r.arrayLen(); np > 0 && r.err == nil; np-- {
			var f fetched
			partition := r.int32()
			f.code = r.int16()
			f.hwm = r.int64()
			f.lso = r.int64()
			f.logStart = -1
			if v >= 5 {
				f.logStart = r.int64()
			}
			for na := r.arrayLen(); na > 0 && r.err == nil; na-- {
				f.aborted = append(f.aborted, abortedTxn{producerID: r.int64(), firstOffset: r.int64()})
			}
			if v >= 11 {
				r.int32() // preferred read replica
			}
			f.records = r.bytes()
			if r.err == nil && topic == p.Topic && partition == p.Partition {
				return f, nil
			}
		}
	}
	if r.err != nil {
		return fetched{}, fmt.Errorf("fetch response: %w", r.err)
	}
	return fetched{}, fmt.Errorf("fetch response lacks partition %s", p)
}

// Record batch v2 layout (Kafka's DefaultRecordBatch).
const (
	batchHeaderLen  = 61 // up to and including the record count
	batchLogOverlap = 12 // base offset and length, which the length does not count
	attrCompression = 0x07
	attrLogAppend   = 0x08 // timestamp type: every record's timestamp is the batch's max
	attrTxn         = 0x10
	attrControl     = 0x20
	controlAbort    = 0
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// batch is one record batch of format v2. kafka-go's decoder hides the last
// offset delta, hence this parser.
type batch struct {
	base       int64
	lastDelta  int32
	attrs      int16
	firstTS    int64
	maxTS      int64
	producerID int64
	count      int32
	payload    []byte // the records, compressed or not
}

func (b *batch) last() int64         { return b.base + int64(b.lastDelta) }
func (b *batch) control() bool       { return b.attrs&attrControl != 0 }
func (b *batch) transactional() bool { return b.attrs&attrTxn != 0 }

// nextBatch splits the first complete batch off buf. It returns ok false
// when buf holds no complete batch: the broker cuts the last batch of a
// response at the byte limit.
func nextBatch(buf []byte) (b batch, rest []byte, ok bool, err error) {
	if len(buf) < batchLogOverlap {
		return b, nil, false, nil
	}
	b.base = int64(binary.BigEndian.Uint64(buf))
	n := int(int32(binary.BigEndian.Uint32(buf[8:])))
	if n < batchHeaderLen-batchLogOverlap {
		return b, nil, false, fmt.Errorf("record batch at offset %d: length %d too short", b.base, n)
	}
	if len(buf) < batchLogOverlap+n {
		return b, nil, false, nil
	}
	buf, rest = buf[:batchLogOverlap+n], buf[batchLogOverlap+n:]
	if magic := int8(buf[16]); magic != 2 {
		return b, nil, false, fmt.Errorf("record batch at offset %d: message format v%d: catchup reads format v2 (Kafka 0.11 and later) only", b.base, magic)
	}
	if crc := binary.BigEndian.Uint32(buf[17:]); crc != crc32.Checksum(buf[21:], castagnoli) {
		return b, nil, false, fmt.Errorf("record batch at offset %d: CRC mismatch: corrupt data", b.base)
	}
	b.attrs = int16(binary.BigEndian.Uint16(buf[21:]))
	b.lastDelta = int32(binary.BigEndian.Uint32(buf[23:]))
	b.firstTS = int64(binary.BigEndian.Uint64(buf[27:]))
	b.maxTS = int64(binary.BigEndian.Uint64(buf[35:]))
	b.producerID = int64(binary.BigEndian.Uint64(buf[43:]))
	b.count = int32(binary.BigEndian.Uint32(buf[57:]))
	b.payload = buf[batchHeaderLen:]
	return b, rest, true, nil
}

// records returns the batch's records, decompressed.
func (b *batch) records() ([]byte, error) {
	c := compress.Compression(b.attrs & attrCompression)
	if c == compress.None {
		return b.payload, nil
	}
	codec := c.Codec()
	if codec == nil {
		return nil, fmt.Errorf("record batch at offset %d: unknown compression codec %d", b.base, c)
	}
	r := codec.NewReader(bytes.NewReader(b.payload))
	defer r.Close()
	var out bytes.Buffer
	out.Grow(4 * len(b.payload))
	if _, err := out.ReadFrom(r); err != nil {
		return nil, fmt.Errorf("record batch at offset %d: %s: %w", b.base, codec.Name(), err)
	}
	return out.Bytes(), nil
}

// appendRecords appends the batch's records at or above from to dst. Keys,
// values and header values share memory with the response (or the
// decompressed batch); nil stays nil and empty stays empty.
func (b *batch) appendRecords(dst []catchup.Record, from int64) ([]catchup.Record, error) {
	data, err := b.records()
	if err != nil {
		return dst, err
	}
	r := &reader{b: data}
	dst = slices.Grow(dst, int(min(b.count, int32(len(data)))))
	for i := int32(0); i < b.count && r.err == nil; i++ {
		n := r.varint()
		rec := &reader{b: r.take(int(n))}
		rec.int8() // attributes, unused
		tsDelta := rec.varint()
		offset := b.base + rec.varint()
		key := rec.varbytes()
		value := rec.varbytes()
		var headers []catchup.Header
		if nh := rec.varint(); nh > 0 && rec.err == nil {
			headers = make([]catchup.Header, 0, min(nh, int64(len(rec.b))))
			for ; nh > 0 && rec.err == nil; nh-- {
				k := rec.varbytes()
				headers = append(headers, catchup.Header{Key: string(k), Value: rec.varbytes()})
			}
		}
		if rec.err != nil {
			r.err = rec.err
			break
		}
		if offset < from {
			continue
		}
		ts := b.firstTS + tsDelta
		if b.attrs&attrLogAppend != 0 {
			ts = b.maxTS
		}
		dst = append(dst, catchup.Record{Offset: offset, Key: key, Value: value, Headers: headers, Timestamp: time.UnixMilli(ts)})
	}
	if r.err != nil {
		return dst, fmt.Errorf("record batch at offset %d: %w", b.base, r.err)
	}
	return dst, nil
}

// controlType returns the type of a control batch's record: 0 abort, 1
// commit.
func (b *batch) controlType() (int16, error) {
	data, err := b.records()
	if err != nil {
		return 0, err
	}
	r := &reader{b: data}
	rec := &reader{b: r.take(int(r.varint()))}
	rec.int8()
	rec.varint()
	rec.varint()
	key := rec.varbytes()
	if r.err == nil && rec.err == nil && len(key) >= 4 {
		return int16(binary.BigEndian.Uint16(key[2:])), nil
	}
	return 0, fmt.Errorf("control batch at offset %d: malformed control record", b.base)
}

// decoded is what a fetch response holds for a copier.
type decoded struct {
	records []catchup.Record
	next    int64 // one past the last offset of the last complete batch, at least from
	batches int
}

// decode returns the data records at or above from, without control
// batches and, with readCommitted, without the batches of aborted
// transactions, filtered as Kafka's Java consumer does: a transactional
// batch is aborted if its producer has an aborted transaction that started
// at or before the batch's last offset and whose abort marker has not been
// seen yet.
func decode(f fetched, from int64, isolation int8) (decoded, error) {
	d := decoded{next: from}
	aborted := slices.SortedFunc(slices.Values(f.aborted), func(a, b abortedTxn) int {
		return cmp.Compare(a.firstOffset, b.firstOffset)
	})
	var open map[int64]bool // producers inside an aborted transaction
	buf := f.records
	for {
		b, rest, ok, err := nextBatch(buf)
		if err != nil {
			return d, err
		}
		if !ok {
			break
		}
		buf = rest
		d.batches++
		d.next = max(d.next, b.last()+1)
		skip := b.control()
		if isolation == readCommitted && b.producerID >= 0 {
			for len(aborted) > 0 && aborted[0].firstOffset <= b.last() {
				if open == nil {
					open = make(map[int64]bool)
				}
				open[aborted[0].producerID] = true
				aborted = aborted[1:]
			}
			if b.control() {
				if t, err := b.controlType(); err != nil {
					return d, err
				} else if t == controlAbort {
					delete(open, b.producerID)
				}
			} else if b.transactional() && open[b.producerID] {
				skip = true
			}
		}
		if !skip {
			if d.records, err = b.appendRecords(d.records, from); err != nil {
				return d, err
			}
		}
	}
	if d.batches == 0 && len(f.records) > 0 {
		return d, errors.New("the response holds part of a record batch only: the broker truncated a batch larger than the fetch size")
	}
	return d, nil
}

// reader decodes Kafka's primitive types; the first error sticks.
type reader struct {
	b   []byte
	err error
}

var errShort = errors.New("truncated")

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.err = errShort
		return nil
	}
	b := r.b[:n:n]
	r.b = r.b[n:]
	return b
}

func (r *reader) int8() int8 {
	if b := r.take(1); b != nil {
		return int8(b[0])
	}
	return 0
}

func (r *reader) int16() int16 {
	if b := r.take(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *reader) int32() int32 {
	if b := r.take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *reader) int64() int64 {
	if b := r.take(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

func (r *reader) arrayLen() int { return int(r.int32()) } // -1 (null) reads as empty

func (r *reader) string() string { return string(r.take(int(r.int16()))) }

// bytes reads int32-prefixed nullable bytes.
func (r *reader) bytes() []byte {
	n := r.int32()
	if n < 0 {
		return nil
	}
	return r.take(int(n))
}

// varint reads a zigzag varint (Kafka's varint and varlong).
func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errShort
		return 0
	}
	r.b = r.b[n:]
	return v
}

// varbytes reads varint-prefixed nullable bytes: nil for length -1, an
// empty non-nil slice for length 0.
func (r *reader) varbytes() []byte {
	n := r.varint()
	switch {
	case n < 0 || r.err != nil:
		return nil
	case n == 0:
		return []byte{}
	}
	return r.take(int(n))
}
