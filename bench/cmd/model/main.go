// Command model is the per-byte limit of a copier on this machine, a step of
// bench/run.sh: it copies a topic from the source brokers to the target
// brokers doing the least work per byte a verifying copier can do, so that
// a copier's throughput and MB per CPU-second are read as a share of it:
//
//	model -from SRC -to DST -topic T [-fetch-bytes N] [-produce-bytes N] [-fetch-buffers N] [-in-flight N]
//
// Each byte is read once (one read of each fetch response into a recycled
// buffer), CRC-checked twice (the source batch's CRC-32C verified, then
// computed again over the batch re-stamped for the target in place),
// copied once (into the produce request) and written once. Fetches carry
// every partition a source broker leads, each up to -fetch-bytes (catchup's
// fetch_bytes, 1 MiB); produce requests carry whole source batches of many
// partitions up to -produce-bytes (catchup's producer.batch_bytes), acks=all,
// -in-flight requests per target broker (5, the Java client's and
// catchup's idempotent limit). Requests are kmsg's encoding (franz-go) on
// plain TCP connections, one per broker and direction.
//
// It is not a replicator: no idempotent sequence numbers (they cost nothing
// per byte), no retries, no checkpoint, no provenance; any error ends it.
// It copies each partition from its log start to the end offset it found at
// start and prints one JSON object: records, bytes of record batches, and
// wall_s, the seconds from the first fetch to the last acknowledgement.
package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/bench/internal/topic"
)

func main() { os.Exit(mainErr()) }

func mainErr() int {
	var o options
	from := flag.String("from", "", "source bootstrap brokers, comma separated (required)")
	to := flag.String("to", "", "target bootstrap brokers, comma separated (required)")
	flag.StringVar(&o.topic, "topic", "", "topic, the same name on both sides (required)")
	flag.IntVar(&o.fetchBytes, "fetch-bytes", 1<<20, "most bytes of one partition in a fetch")
	flag.IntVar(&o.produceBytes, "produce-bytes", 1000000, "most bytes of record batches in one produce request")
	flag.IntVar(&o.fetchBuffers, "fetch-buffers", 3, "fetch responses held at once per source broker (one being read, the others being produced)")
	flag.IntVar(&o.inFlight, "in-flight", 5, "produce requests awaiting their response per target broker")
	flag.Parse()
	if *from == "" || *to == "" || o.topic == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: model -from SRC -to DST -topic T [-fetch-bytes N] [-produce-bytes N] [-fetch-buffers N] [-in-flight N]")
		return 2
	}
	o.from, o.to = strings.Split(*from, ","), strings.Split(*to, ",")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := copyTopic(ctx, o)
	if err == nil {
		err = json.NewEncoder(os.Stdout).Encode(res)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "model:", err)
		return 1
	}
	return 0
}

type options struct {
	from, to     []string
	topic        string
	fetchBytes   int
	produceBytes int
	fetchBuffers int
	inFlight     int
}

type result struct {
	Records int64   `json:"records"`
	Bytes   int64   `json:"bytes"`
	WallS   float64 `json:"wall_s"`
}

// layout is what the copy needs of one cluster: each partition's leader's
// address and, on the source, where each partition starts and ends.
type layout struct {
	leader     map[int32]string
	start, end map[int32]int64
}

func copyTopic(ctx context.Context, o options) (result, error) {
	src, err := describe(ctx, o.from, o.topic, true)
	if err != nil {
		return result{}, fmt.Errorf("source: %w", err)
	}
	dst, err := describe(ctx, o.to, o.topic, false)
	if err != nil {
		return result{}, fmt.Errorf("target: %w", err)
	}
	for p := range src.leader {
		if _, ok := dst.leader[p]; !ok {
			return result{}, fmt.Errorf("target %s has no partition %d", o.topic, p)
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	fail := func(err error) { cancel(err) }

	var records, bytes atomic.Int64
	t0 := time.Now()
	// One producer per target broker, fed by every fetcher.
	producers := map[string]*producer{}
	var pwg sync.WaitGroup
	for _, addr := range dst.leader {
		if producers[addr] != nil {
			continue
		}
		c, err := dial(ctx, addr)
		if err != nil {
			return result{}, err
		}
		defer c.Close()
		// one request waits in acks' hands, the rest in the channel
		pr := &producer{conn: c, topic: o.topic, maxBytes: o.produceBytes, in: make(chan piece, 64), pending: make(chan struct{}, max(o.inFlight-1, 0))}
		producers[addr] = pr
		pwg.Add(2)
		go func() { defer pwg.Done(); pr.send(ctx, fail) }()
		go func() { defer pwg.Done(); pr.acks(fail) }()
	}
	bySrc := map[string][]int32{}
	for p, addr := range src.leader {
		if src.end[p] > src.start[p] {
			bySrc[addr] = append(bySrc[addr], p)
		}
	}
	var fwg sync.WaitGroup
	for addr, parts := range bySrc {
		c, err := dial(ctx, addr)
		if err != nil {
			return result{}, err
		}
		defer c.Close()
		f := &fetcher{conn: c, topic: o.topic, parts: parts, next: map[int32]int64{}, end: src.end,
			fetchBytes: o.fetchBytes, produceBytes: o.produceBytes, free: make(chan []byte, o.fetchBuffers),
			route: func(p int32) *producer { return producers[dst.leader[p]] }, records: &records, bytes: &bytes}
		for _, p := range parts {
			f.next[p] = src.start[p]
		}
		for range o.fetchBuffers {
			f.free <- nil
		}
		fwg.Go(func() {
			if err := f.run(ctx); err != nil {
				fail(err)
			}
		})
	}
	fwg.Wait()
	for _, pr := range producers {
		close(pr.in)
	}
	pwg.Wait()
	if err := context.Cause(ctx); err != nil {
		return result{}, err
	}
	return result{Records: records.Load(), Bytes: bytes.Load(), WallS: time.Since(t0).Seconds()}, nil
}

// describe reads the partitions' leaders of name on brokers and, for the
// source, each partition's log start and end offsets.
func describe(ctx context.Context, brokers []string, name string, offsets bool) (layout, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return layout{}, err
	}
	defer cl.Close()
	l := layout{}
	if l.leader, err = topic.Leaders(ctx, cl, name); err != nil || !offsets {
		return l, err
	}
	if l.start, err = topic.Offsets(ctx, cl, name, -2); err != nil {
		return l, err
	}
	l.end, err = topic.Offsets(ctx, cl, name, -1)
	return l, err
}

// conn is one broker connection: requests written in kmsg's encoding,
// responses read whole into the caller's buffer.
type conn struct {
	net.Conn
	corr int32
	fmt  *kmsg.RequestFormatter
}

func dial(ctx context.Context, addr string) (*conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return &conn{Conn: c, fmt: kmsg.NewRequestFormatter(kmsg.FormatterClientID("bench-model"))}, nil
}

// write encodes req into buf (reused) and writes it: the one copy and the
// one write of the bytes it carries.
func (c *conn) write(buf []byte, req kmsg.Request) ([]byte, error) {
	c.corr++
	buf = c.fmt.AppendRequest(buf[:0], req, c.corr)
	_, err := c.Write(buf)
	return buf, err
}

// read reads one response into buf (grown as needed) and returns its body,
// after the correlation id (the versions used have no flexible header).
func (c *conn) read(buf []byte) ([]byte, []byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return buf, nil, err
	}
	n := int(binary.BigEndian.Uint32(size[:]))
	if n < 4 {
		return buf, nil, fmt.Errorf("response of %d bytes from %s", n, c.RemoteAddr())
	}
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(c, buf); err != nil {
		return buf, nil, err
	}
	return buf, buf[4:], nil
}

// piece is whole record batches of one partition, ready for the target,
// inside a fetch buffer that done gives back once they are copied.
type piece struct {
	partition int32
	batches   []byte
	done      func()
}

// fetcher reads the partitions one source broker leads, many per request.
type fetcher struct {
	conn                     *conn
	topic                    string
	parts                    []int32
	next, end                map[int32]int64
	fetchBytes, produceBytes int
	free                     chan []byte // fetch buffers not in use
	route                    func(partition int32) *producer
	records, bytes           *atomic.Int64
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (f *fetcher) run(ctx context.Context) error {
	var reqBuf []byte
	for {
		var want []int32
		for _, p := range f.parts {
			if f.next[p] < f.end[p] {
				want = append(want, p)
			}
		}
		if len(want) == 0 {
			return nil
		}
		var buf []byte
		select {
		case buf = <-f.free:
		case <-ctx.Done():
			return nil
		}
		req := kmsg.NewPtrFetchRequest()
		req.Version = 11
		req.ReplicaID, req.MaxWaitMillis, req.MinBytes = -1, 500, 1
		req.MaxBytes = int32(f.fetchBytes * len(want))
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = f.topic
		for _, p := range want {
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p, f.next[p], int32(f.fetchBytes)
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
		var err error
		if reqBuf, err = f.conn.write(reqBuf, req); err != nil {
			return fmt.Errorf("fetch: %w", err)
		}
		buf, body, err := f.conn.read(buf)
		if err != nil {
			return fmt.Errorf("fetch: %w", err)
		}
		resp := kmsg.NewPtrFetchResponse()
		resp.Version = 11
		if err := resp.ReadFrom(body); err != nil {
			return fmt.Errorf("fetch response: %w", err)
		}
		if resp.ErrorCode != 0 {
			return fmt.Errorf("fetch: error code %d", resp.ErrorCode)
		}
		var pieces []piece
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 {
					return fmt.Errorf("fetch %s/%d at %d: error code %d", f.topic, p.Partition, f.next[p.Partition], p.ErrorCode)
				}
				ps, err := f.verify(p.Partition, p.RecordBatches)
				if err != nil {
					return err
				}
				pieces = append(pieces, ps...)
			}
		}
		if len(pieces) == 0 {
			f.free <- buf
			continue
		}
		var left atomic.Int32
		left.Store(int32(len(pieces)))
		done := func() {
			if left.Add(-1) == 0 {
				f.free <- buf
			}
		}
		for _, pc := range pieces {
			pc.done = done
			select {
			case f.route(pc.partition).in <- pc:
			case <-ctx.Done():
				return nil
			}
		}
	}
}

// Offsets in a v2 record batch (the Kafka protocol's RecordBatch).
const (
	batchLengthAt   = 8  // int32, the bytes after it
	crcAt           = 17 // uint32, CRC-32C of the bytes from attributesAt
	attributesAt    = 21
	lastDeltaAt     = 23 // int32, last offset delta
	producerIDAt    = 43 // int64, then epoch int16, base sequence int32
	recordCountAt   = 57 // int32
	batchHeaderSize = 61
)

// verify checks the CRC-32C of each whole batch of partition p from its
// next offset on, advances p's next offset, and cuts the batches into
// pieces of at most produceBytes (a larger batch alone); a compressed batch
// is a piece of its own (it is passed through, not merged).
func (f *fetcher) verify(p int32, b []byte) ([]piece, error) {
	var out []piece
	start, at := -1, 0
	cut := func(end int) {
		if start >= 0 {
			out = append(out, piece{partition: p, batches: b[start:end]})
			start = -1
		}
	}
	for at+batchHeaderSize <= len(b) {
		size := batchLengthAt + 4 + int(int32(binary.BigEndian.Uint32(b[at+batchLengthAt:])))
		if at+size > len(b) {
			break // a batch cut at the fetch's byte limit: fetched again next time
		}
		batch := b[at : at+size]
		base := int64(binary.BigEndian.Uint64(batch))
		last := base + int64(int32(binary.BigEndian.Uint32(batch[lastDeltaAt:])))
		if last < f.next[p] || base >= f.end[p] {
			at += size
			continue
		}
		if got, want := crc32.Checksum(batch[attributesAt:], castagnoli), binary.BigEndian.Uint32(batch[crcAt:]); got != want {
			return nil, fmt.Errorf("%s/%d: batch at offset %d: CRC-32C %08x, the batch says %08x", f.topic, p, base, got, want)
		}
		if batch[attributesAt+1]&0x30 != 0 {
			return nil, fmt.Errorf("%s/%d: batch at offset %d is transactional or a control batch: the model copies plain batches only", f.topic, p, base)
		}
		f.records.Add(int64(binary.BigEndian.Uint32(batch[recordCountAt:])))
		f.bytes.Add(int64(size))
		f.next[p] = last + 1
		compressed := batch[attributesAt+1]&0x07 != 0
		if compressed || (start >= 0 && at+size-start > f.produceBytes) {
			cut(at)
		}
		if start < 0 {
			start = at
		}
		at += size
		if compressed {
			cut(at)
		}
	}
	cut(at)
	return out, nil
}

// producer writes the pieces of the partitions one target broker leads,
// many partitions per request, and reads the acknowledgements in order.
type producer struct {
	conn     *conn
	corr     int32
	topic    string
	maxBytes int
	in       chan piece
	pending  chan struct{} // a request written, awaiting its response
}

func (pr *producer) send(ctx context.Context, fail func(error)) {
	defer close(pr.pending)
	var buf []byte
	var held *piece
	for {
		var first piece
		if held != nil {
			first, held = *held, nil
		} else {
			var ok bool
			if first, ok = <-pr.in; !ok {
				return
			}
		}
		batch := []piece{first}
		size := len(first.batches)
	more:
		for size < pr.maxBytes {
			select {
			case pc, ok := <-pr.in:
				if !ok {
					break more
				}
				dup := false
				for _, b := range batch {
					dup = dup || b.partition == pc.partition
				}
				if dup || size+len(pc.batches) > pr.maxBytes {
					held = &pc
					break more
				}
				batch = append(batch, pc)
				size += len(pc.batches)
			default:
				break more
			}
		}
		buf = pr.request(buf[:0], batch)
		_, err := pr.conn.Write(buf)
		for _, pc := range batch {
			pc.done() // copied into the request: the fetch buffer may be reused
		}
		if err != nil {
			fail(fmt.Errorf("produce: %w", err))
			return
		}
		select {
		case pr.pending <- struct{}{}:
		case <-ctx.Done():
			return
		}
	}
}

func (pr *producer) acks(fail func(error)) {
	var buf []byte
	for range pr.pending {
		var body []byte
		var err error
		if buf, body, err = pr.conn.read(buf); err != nil {
			fail(fmt.Errorf("produce: %w", err))
			return
		}
		resp := kmsg.NewPtrProduceResponse()
		resp.Version = 7
		if err := resp.ReadFrom(body); err != nil {
			fail(fmt.Errorf("produce response: %w", err))
			return
		}
		var errs []error
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 {
					errs = append(errs, fmt.Errorf("produce %s/%d: error code %d", t.Topic, p.Partition, p.ErrorCode))
				}
			}
		}
		if err := errors.Join(errs...); err != nil {
			fail(err)
			return
		}
	}
}

// request encodes a Produce v7 request (acks=all) into buf: one batch per
// partition, as the broker requires, merged from the piece's source
// batches (each record's bytes copied once, its offset and timestamp
// deltas written anew), or a compressed source batch passed through. Each
// batch's CRC-32C is computed over the bytes it has in buf.
func (pr *producer) request(buf []byte, pieces []piece) []byte {
	pr.corr++
	buf = binary.BigEndian.AppendUint32(buf, 0) // size, set at the end
	buf = binary.BigEndian.AppendUint16(buf, 0) // Produce
	buf = binary.BigEndian.AppendUint16(buf, 7)
	buf = binary.BigEndian.AppendUint32(buf, uint32(pr.corr))
	buf = appendString(buf, "bench-model")
	buf = binary.BigEndian.AppendUint16(buf, 0xffff)              // no transactional id
	buf = binary.BigEndian.AppendUint16(buf, 0xffff)              // acks -1
	buf = binary.BigEndian.AppendUint32(buf, 30000)               // timeout ms
	buf = binary.BigEndian.AppendUint32(buf, 1)                   // one topic
	buf = appendString(buf, pr.topic)                             //
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(pieces))) // partitions
	for _, pc := range pieces {
		buf = binary.BigEndian.AppendUint32(buf, uint32(pc.partition))
		at := len(buf)
		buf = binary.BigEndian.AppendUint32(buf, 0) // records' size, set below
		buf = appendBatch(buf, pc.batches)
		binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
	}
	binary.BigEndian.PutUint32(buf, uint32(len(buf)-4))
	return buf
}

func appendString(buf []byte, s string) []byte {
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(s)))
	return append(buf, s...)
}

// appendBatch appends one v2 record batch holding the records of src (whole
// source batches, verified), for a plain producer at offset 0.
func appendBatch(buf, src []byte) []byte {
	at := len(buf)
	if src[attributesAt+1]&0x07 != 0 { // compressed: one batch, re-stamped
		buf = append(buf, src...)
		b := buf[at:]
		binary.BigEndian.PutUint64(b, 0)
		binary.BigEndian.PutUint64(b[producerIDAt:], ^uint64(0))    // producer id -1
		binary.BigEndian.PutUint16(b[producerIDAt+8:], ^uint16(0))  // epoch -1
		binary.BigEndian.PutUint32(b[producerIDAt+10:], ^uint32(0)) // base sequence -1
		binary.BigEndian.PutUint32(b[crcAt:], crc32.Checksum(b[attributesAt:], castagnoli))
		return buf
	}
	buf = append(buf, make([]byte, batchHeaderSize)...)
	firstTS := int64(binary.BigEndian.Uint64(src[27:]))
	maxTS, n := firstTS, int32(0)
	var tmp [2 * binary.MaxVarintLen64]byte
	for len(src) > 0 {
		size := batchLengthAt + 4 + int(int32(binary.BigEndian.Uint32(src[batchLengthAt:])))
		batch := src[:size]
		src = src[size:]
		baseTS := int64(binary.BigEndian.Uint64(batch[27:]))
		recs := batch[batchHeaderSize:]
		for range binary.BigEndian.Uint32(batch[recordCountAt:]) {
			l, k := binary.Varint(recs)
			body := recs[k : k+int(l)]
			recs = recs[k+int(l):]
			tsDelta, k1 := binary.Varint(body[1:])
			_, k2 := binary.Varint(body[1+k1:])
			rest := body[1+k1+k2:]
			ts := baseTS + tsDelta
			maxTS = max(maxTS, ts)
			h := binary.AppendVarint(tmp[:0], ts-firstTS)
			h = binary.AppendVarint(h, int64(n))
			buf = binary.AppendVarint(buf, int64(1+len(h)+len(rest)))
			buf = append(buf, body[0])
			buf = append(buf, h...)
			buf = append(buf, rest...)
			n++
		}
	}
	b := buf[at:]
	binary.BigEndian.PutUint32(b[batchLengthAt:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[12:], ^uint32(0)) // partition leader epoch -1
	b[16] = 2                                      // magic
	binary.BigEndian.PutUint32(b[lastDeltaAt:], uint32(n-1))
	binary.BigEndian.PutUint64(b[27:], uint64(firstTS))
	binary.BigEndian.PutUint64(b[35:], uint64(maxTS))
	binary.BigEndian.PutUint64(b[producerIDAt:], ^uint64(0))
	binary.BigEndian.PutUint16(b[producerIDAt+8:], ^uint16(0))
	binary.BigEndian.PutUint32(b[producerIDAt+10:], ^uint32(0))
	binary.BigEndian.PutUint32(b[recordCountAt:], uint32(n))
	binary.BigEndian.PutUint32(b[crcAt:], crc32.Checksum(b[attributesAt:], castagnoli))
	return buf
}
