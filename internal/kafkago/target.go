package kafkago

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/compress"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/kafkago/wire"
)

// Sizes and margins of the produce protocol.
const (
	produceResponseMargin  = 10 * time.Second // client-side wait beyond the broker's timeout
	recordOverheadBytes    = 70               // record framing: length, attributes, deltas, lengths
	headerOverheadBytes    = 10               // per header: two length varints
	requestOverheadBytes   = 61 + 128         // batch header, request and topic framing
	readBackFetchSizeBytes = 1                // the broker always returns one whole batch
)

// Target writes to a target cluster, a batch per partition and a request
// per broker (see sink). It implements replicate.Target and is safe for
// concurrent use.
type Target struct {
	cl           *Cluster
	acks         int16
	compression  compress.Compression
	level        int // compression level; 0: the codec's default
	batchRecords int
	batchBytes   int
	timeout      time.Duration
	idempotent   bool        // producer id and sequences in every batch (acks all only)
	idem         idempotence // the producer id and sequences, when idempotent
	resent       atomic.Int64

	sinksMu sync.Mutex
	sinks   map[int32]*sink // by broker id
}

// Producer says how a Target produces; every field is explicit
// (internal/config holds the defaults, pipeline.Connect passes them).
type Producer struct {
	Acks        string // "all", "leader" or "none"
	Compression string // "none", "gzip", "snappy", "lz4" or "zstd"
	// CompressionLevel is gzip's (1 to 9) or zstd's (1 to 22) level; 0 is
	// the codec's default, and the only level of the others.
	CompressionLevel int
	// BatchRecords and BatchBytes bound one partition's batch (a produce
	// request carries up to RequestBatches of them); both at least 1.
	BatchRecords int
	BatchBytes   int
	// Timeout is how long the broker may take to acknowledge a request; positive.
	Timeout time.Duration
	// Idempotent numbers every batch as an idempotent producer; it takes
	// effect with acks all only, which the brokers require for it.
	Idempotent bool
}

// NewTarget returns a Target for the cluster c that produces as p says.
func NewTarget(c Settings, p Producer) (*Target, error) {
	t := &Target{batchRecords: p.BatchRecords, batchBytes: p.BatchBytes, timeout: p.Timeout, level: p.CompressionLevel}
	t.idem.id = -1
	switch p.Acks {
	case "all":
		t.acks = int16(kafka.RequireAll)
	case "leader":
		t.acks = int16(kafka.RequireOne)
	case "none":
		t.acks = int16(kafka.RequireNone)
	default:
		return nil, fmt.Errorf("producer acks %q: want all, leader or none", p.Acks)
	}
	switch p.Compression {
	case "none":
		t.compression = compress.None
	case "gzip", "snappy", "lz4", "zstd":
		if err := t.compression.UnmarshalText([]byte(p.Compression)); err != nil {
			return nil, fmt.Errorf("producer compression: %w", err)
		}
	default:
		return nil, fmt.Errorf("producer compression %q: want none, gzip, snappy, lz4 or zstd", p.Compression)
	}
	switch lvl := t.level; {
	case lvl != 0 && t.compression != compress.Gzip && t.compression != compress.Zstd:
		return nil, fmt.Errorf("producer compression level %d: %s takes no level", lvl, p.Compression)
	case t.compression == compress.Gzip && (lvl < 0 || lvl > wire.MaxGzipLevel):
		return nil, fmt.Errorf("producer compression level %d: want gzip's 1 to %d, or 0 for its default", lvl, wire.MaxGzipLevel)
	case t.compression == compress.Zstd && (lvl < 0 || lvl > wire.MaxZstdLevel):
		return nil, fmt.Errorf("producer compression level %d: want zstd's 1 to %d, or 0 for its default", lvl, wire.MaxZstdLevel)
	}
	switch {
	case t.batchRecords < 1:
		return nil, fmt.Errorf("producer batch records %d: want at least 1", t.batchRecords)
	case t.batchBytes < 1:
		return nil, fmt.Errorf("producer batch bytes %d: want at least 1", t.batchBytes)
	case t.timeout <= 0:
		return nil, fmt.Errorf("producer timeout %v: want a positive duration", t.timeout)
	}
	// The brokers accept an idempotent batch only with acks all.
	t.idempotent = p.Idempotent && t.acks == int16(kafka.RequireAll)
	cl, err := Dial(c)
	if err != nil {
		return nil, err
	}
	t.cl = cl
	return t, nil
}

// Resent returns how many produce requests of unknown outcome the Target
// sent again, identical (idempotent produce), since it was made.
func (t *Target) Resent() int64 { return t.resent.Load() }

// Close releases the Target's connections.
func (t *Target) Close() { t.cl.Close() }

// PartitionCounts returns the partition count of each of topics that exists
// on the target, asking a broker rather than a cache.
func (t *Target) PartitionCounts(ctx context.Context, topics []string) (map[string]int, error) {
	if len(topics) == 0 {
		return map[string]int{}, nil
	}
	t.cl.watch(topics)
	md, err := t.cl.metadata(ctx, topics)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(topics))
	for _, tm := range md.Topics {
		switch code := kafka.Error(tm.ErrorCode); {
		case code == kafka.UnknownTopicOrPartition || code == kafka.InvalidTopic:
			continue // absent
		case tm.ErrorCode != 0 && len(tm.Partitions) == 0:
			return nil, fmt.Errorf("metadata of topic %s in cluster %q: %w", tm.Name, t.cl.name, codeError(tm.ErrorCode))
		}
		out[tm.Name] = len(tm.Partitions)
	}
	return out, nil
}

// EndOffsets returns the high watermark of each of ps, with one request per
// leader broker.
func (t *Target) EndOffsets(ctx context.Context, ps []catchup.Partition) (map[catchup.Partition]int64, error) {
	offs, err := t.cl.listOffsets(ctx, ps, latest, wire.ReadUncommitted)
	if err != nil {
		return nil, err
	}
	out := make(map[catchup.Partition]int64, len(ps))
	for i, p := range ps {
		out[p] = offs[i]
	}
	return out, nil
}

// Produce appends the leading records of recs to p as one batch, at most
// the configured records and (estimated, uncompressed) bytes, in a request
// it may share with other partitions' batches (see sink); a record larger
// than the byte limit goes alone. It returns how many records the batch
// held. It never retries. With acks none the broker acknowledges
// nothing: acked counts the records sent and end is -1. See
// replicate.Target for the contract; the error classes are in
// classifyProduce.
func (t *Target) Produce(ctx context.Context, p catchup.Partition, recs []catchup.Record, stamp *catchup.Provenance) (acked int, end int64, err error) {
	if len(recs) == 0 {
		return 0, -1, nil
	}
	t.cl.cover(p.Topic)
	n := t.RequestLen(p.Topic, stamp, recs)
	base, err := t.produceBatch(ctx, p, recs[:n], stamp, 0)
	if err != nil {
		return 0, -1, err
	}
	if t.acks == int16(kafka.RequireNone) || base < 0 {
		return n, -1, nil
	}
	return n, base + int64(n), nil
}

// RequestLen returns how many leading records of parts, taken in order as
// one run, one Produce request to topic holds (see replicate.Target).
func (t *Target) RequestLen(topic string, stamp *catchup.Provenance, parts ...[]catchup.Record) int {
	size := requestOverheadBytes + len(topic)
	perRecord := 0
	if stamp != nil { // the longest a provenance header can be, offsets included
		perRecord = len(catchup.ProvenanceHeader) + headerOverheadBytes +
			catchup.ProvenanceLen(catchup.Provenance{Cluster: stamp.Cluster, Partition: stamp.Partition, Offset: math.MaxInt64})
	}
	n := 0
	for _, recs := range parts {
		for i := range recs {
			if n == t.batchRecords {
				return n
			}
			size += recordSize(&recs[i]) + perRecord
			if size > t.batchBytes && n > 0 {
				return n
			}
			n++
		}
	}
	return n
}

// recordSize estimates, on the high side, the encoded size of r.
func recordSize(r *catchup.Record) int {
	return r.Size() + recordOverheadBytes + headerOverheadBytes*len(r.Headers)
}

// produceBatch sends recs, which start at position pos of the caller's
// records, in one request and returns the base offset the broker assigned
// (-1 when it does not say: a duplicate it no longer remembers). An
// idempotent Target sends a request of unknown outcome again, identical,
// up to produceResends times: the leader appends it at most once.
func (t *Target) produceBatch(ctx context.Context, p catchup.Partition, recs []catchup.Record, stamp *catchup.Provenance, pos int) (int64, error) {
	seq := wire.ProducerSeq{}
	if t.idempotent {
		var err error
		if seq, err = t.nextSeq(ctx, p); err != nil {
			return 0, fmt.Errorf("produce %s: %w", p, err)
		}
	}
	for attempt := 0; ; attempt++ {
		base, code, err := t.sendBatch(ctx, p, recs, stamp, pos, seq)
		switch {
		case err == nil:
			if seq.On {
				t.appended(p, seq, len(recs))
			}
			return base, nil
		case !seq.On:
			return 0, err
		case producerLost(code):
			// Not appended, but the broker lost our sequence (producer
			// state expired or deleted, a leader that lacks it): an
			// earlier request of unknown outcome may be in the log. A
			// new producer id starts from 0; the engine reconciles.
			t.resetProducer(seq)
			return 0, err
		case !errors.Is(err, catchup.ErrUnknownOutcome):
			// Not appended (NOT_ENOUGH_REPLICAS, ...): the engine sends
			// the same records again, with this same sequence, so that a
			// copy an earlier attempt appended is still recognised.
			return 0, err
		case attempt == produceResends || ctx.Err() != nil:
			// Still unknown: the engine reconciles and goes on from what
			// it finds, with other records than these. They must not
			// reuse this sequence: a leader that holds this batch would
			// take the next one, as long, for its duplicate and drop it.
			t.resetProducer(seq)
			return 0, err
		}
		t.resent.Add(1)
	}
}

// sendBatch sends recs as p's batch, with the producer fields seq, in the
// next request to p's leader (see sink), and returns the base offset, or
// the broker's error code and the error.
func (t *Target) sendBatch(ctx context.Context, p catchup.Partition, recs []catchup.Record, stamp *catchup.Provenance, pos int, seq wire.ProducerSeq) (int64, kafka.Error, error) {
	leader, err := t.cl.leader(ctx, p)
	if err != nil {
		return 0, 0, t.produceError(p, recs, stamp, pos, err, "", -1, classifyProduce(err, false))
	}
	res, sent, err := t.sinkFor(leader).send(ctx, &produceCall{batch: wire.ProduceBatch{Partition: p, Records: recs, Stamp: stamp, Seq: seq}})
	if err != nil {
		var code kafka.Error
		errors.As(err, &code)
		return 0, code, t.produceError(p, recs, stamp, pos, err, "", -1, classifyProduce(err, sent))
	}
	if t.acks == int16(kafka.RequireNone) {
		return -1, 0, nil
	}
	for _, rt := range res.Topics {
		for _, rp := range rt.Partitions {
			if rt.Topic != p.Topic || rp.Partition != p.Partition {
				continue
			}
			code := kafka.Error(rp.ErrorCode)
			switch {
			case code == 0:
				return rp.BaseOffset, 0, nil
			case code == kafka.DuplicateSequenceNumber && seq.On:
				return -1, 0, nil // appended before; the broker no longer has its offset
			}
			first := -1
			for _, re := range rp.RecordErrors {
				if first < 0 || int(re.BatchIndex) < first {
					first = int(re.BatchIndex)
				}
			}
			return 0, code, t.produceError(p, recs, stamp, pos, code, rp.ErrorMessage, first, classifyProduce(code, true))
		}
	}
	err = fmt.Errorf("the produce response lacks the partition")
	return 0, 0, t.produceError(p, recs, stamp, pos, err, "", -1, maybeAppended)
}

// outcome is what a failed produce request did to the target partition.
type outcome int

const (
	notAppended   outcome = iota // nothing was written: send it again (catchup.ErrRetriable)
	maybeAppended                // it may have been written: reconcile first (catchup.ErrUnknownOutcome)
	rejected                     // nothing was written and sending it again fails the same way
)

// classifyProduce tells what a failed produce request did to the partition,
// from the broker's error code (a kafka.Error) or from a transport error and
// whether the whole request had been written to the connection (sent).
// When in doubt it answers maybeAppended: a needless reconciliation reads
// the target back, a wrong notAppended duplicates records.
func classifyProduce(err error, sent bool) outcome {
	switch {
	case isAuthOrTLS(err) || errors.Is(err, errUnsupported):
		// The connection failed to authenticate, or the broker is too
		// old, before the request was written; it will again.
		return rejected
	case !sent:
		// Dial errors, no leader known yet, the caller's context ending
		// before the write, a write that failed part way (the broker
		// ignores an incomplete frame).
		return notAppended
	}
	var code kafka.Error
	if !errors.As(err, &code) {
		// EOF, connection reset or a timeout after the request was
		// written: the broker may have appended it.
		return maybeAppended
	}
	switch code {
	case kafka.NotLeaderForPartition, kafka.LeaderNotAvailable, kafka.UnknownTopicOrPartition,
		kafka.NotEnoughReplicas, kafka.BrokerNotAvailable, kafka.ReplicaNotAvailable,
		kafka.FencedLeaderEpoch, kafka.UnknownLeaderEpoch, kafka.ThrottlingQuotaExceeded,
		kafka.ConcurrentTransactions:
		// The broker checks leadership, that it hosts the partition
		// (a topic just created may not be there yet), the ISR size
		// against min.insync.replicas and quotas before it appends.
		return notAppended
	case kafka.RequestTimedOut, kafka.NotEnoughReplicasAfterAppend, kafka.KafkaStorageError,
		kafka.NetworkException, kafka.Unknown:
		// REQUEST_TIMED_OUT: appended to the leader, replication not
		// confirmed in time. NOT_ENOUGH_REPLICAS_AFTER_APPEND: appended,
		// then the ISR shrank. KAFKA_STORAGE_ERROR: the log directory
		// failed, possibly during the append. NETWORK_EXCEPTION and
		// UNKNOWN_SERVER_ERROR: the broker does not say.
		return maybeAppended
	case kafka.InvalidMessage, kafka.InvalidMessageSize, kafka.MessageSizeTooLarge, kafka.RecordListTooLarge,
		kafka.InvalidRecord, kafka.InvalidTimestamp, kafka.InvalidTopic, kafka.InvalidRequiredAcks,
		kafka.TopicAuthorizationFailed, kafka.ClusterAuthorizationFailed,
		kafka.TransactionalIDAuthorizationFailed, kafka.UnsupportedForMessageFormat,
		kafka.UnsupportedCompressionType, kafka.UnsupportedVersion, kafka.InvalidRequest,
		kafka.PolicyViolation:
		// Validation and authorization happen before the append, and
		// the same request fails the same way again.
		return rejected
	}
	// OUT_OF_ORDER_SEQUENCE_NUMBER, UNKNOWN_PRODUCER_ID,
	// INVALID_PRODUCER_EPOCH, PRODUCER_FENCED (idempotent produce): this
	// batch was not appended but an earlier one of unknown outcome may have
	// been, so the engine reconciles (produceBatch gets a new producer id).
	// Anything else is not understood.
	return maybeAppended
}

// produceError describes a failed request of recs (starting at position
// pos of the caller's records), naming the first failing record when the
// broker says which (index into recs, else -1), and marks it by outcome.
func (t *Target) produceError(p catchup.Partition, recs []catchup.Record, stamp *catchup.Provenance, pos int, err error, brokerMsg string, index int, o outcome) error {
	what := fmt.Sprintf("produce %s: records %d to %d (source offsets %d to %d)", p, pos, pos+len(recs)-1, recs[0].Offset, recs[len(recs)-1].Offset)
	if index >= 0 && index < len(recs) {
		what = fmt.Sprintf("produce %s: record %d (source offset %d)", p, pos+index, recs[index].Offset)
	}
	if brokerMsg != "" {
		err = fmt.Errorf("%w: %s", err, brokerMsg)
	}
	if a := t.cl.authError(err); a != nil {
		err = a
	}
	switch o {
	case notAppended:
		return mark(fmt.Errorf("%s: not appended, safe to retry: %w", what, err), catchup.ErrRetriable)
	case maybeAppended:
		return mark(fmt.Errorf("%s: outcome unknown, may have been appended: %w", what, err), catchup.ErrUnknownOutcome)
	}
	if index < 0 && len(recs) == 1 {
		index = 0
	}
	if fix := t.fix(err, recs, stamp, index); fix != "" {
		return fmt.Errorf("%s: rejected: %w; %s", what, err, fix)
	}
	return fmt.Errorf("%s: rejected: %w", what, err)
}

// fix suggests what to change for a rejected produce of recs, stamped
// with stamp; index is the record the broker named (or the only one), -1
// if none.
func (t *Target) fix(err error, recs []catchup.Record, stamp *catchup.Provenance, index int) string {
	var code kafka.Error
	if !errors.As(err, &code) {
		return ""
	}
	switch code {
	case kafka.MessageSizeTooLarge, kafka.RecordListTooLarge, kafka.InvalidMessageSize:
		if index >= 0 && index < len(recs) {
			return oversizeFix(&recs[index], stamp)
		}
		return fmt.Sprintf("raise max.message.bytes of the target topic (or message.max.bytes of the target brokers) "+
			"above the source's, or lower producer.batch_bytes (now %d)", t.batchBytes)
	case kafka.InvalidRecord:
		return "a compacted target topic (cleanup.policy=compact) needs a key on every record: " +
			"give the target topic the source topic's cleanup.policy"
	case kafka.InvalidTimestamp:
		return "the record timestamps fall outside the target topic's message.timestamp.difference.max.ms " +
			"(message.timestamp.before.max.ms / after.max.ms): raise them on the target topic"
	case kafka.TopicAuthorizationFailed, kafka.ClusterAuthorizationFailed:
		return "grant the target principal WRITE (and DESCRIBE) on the topic"
	case kafka.UnsupportedCompressionType:
		return "choose another producer.compression"
	case kafka.InvalidMessage:
		return "the target found a corrupt record batch (CRC mismatch); report it with the source offsets"
	}
	return ""
}

// oversizeFix is the fix for one record the target rejected as too large:
// no batch setting helps, since a batch holds at least one record. A record
// the source accepted under the same max.message.bytes is refused by a
// target whose limit is that of the source when the provenance header
// pushes it over; the fix names the limit that lets it and every record the
// source accepts through.
func oversizeFix(r *catchup.Record, stamp *catchup.Provenance) string {
	size := wire.BatchLen(r, stamp)
	if stamp == nil {
		return fmt.Sprintf("the record at source offset %d is %d bytes as a batch of its own (uncompressed), over the "+
			"target's limit: producer.batch_bytes cannot help, a batch holds at least one record; set max.message.bytes "+
			"of the target topic to at least %d, the source topic's or more", r.Offset, size, size)
	}
	header := size - wire.BatchLen(r, nil)
	// The margin holds the header of any offset of the partition (its
	// value names the offset), and the byte by which adding it can
	// lengthen the record's length prefix.
	widest := catchup.Record{Offset: math.MaxInt64, Timestamp: r.Timestamp}
	margin := wire.BatchLen(&widest, stamp) - wire.BatchLen(&widest, nil) + 1
	return fmt.Sprintf("the record at source offset %d is %d bytes as a batch of its own (uncompressed), %d of them the "+
		"provenance header catchup adds: producer.batch_bytes cannot help, a batch holds at least one record. "+
		"Set max.message.bytes of the target topic to at least %d, or to the source topic's max.message.bytes "+
		"(or the source brokers' message.max.bytes) plus %d, so that every record the source accepted fits with its header",
		r.Offset, size, header, size, margin)
}

// ReadBack returns the records of the batch that holds offset end-1 of p and
// the batch's base offset; a control batch there gives no records and its
// base, a compacted hole gives no records and end-1. It reads uncommitted
// data. See replicate.Target for the contract.
func (t *Target) ReadBack(ctx context.Context, p catchup.Partition, end int64) ([]catchup.Record, int64, error) {
	if end <= 0 {
		return nil, end, nil
	}
	t.cl.cover(p.Topic)
	at := end - 1
	f, err := t.cl.fetchRaw(ctx, p, at, readBackFetchSizeBytes, wire.ReadUncommitted, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("read back %s at %d: %w", p, at, err)
	}
	switch code := kafka.Error(f.Code); {
	case code == kafka.OffsetOutOfRange && f.LogStart >= 0 && at < f.LogStart:
		return nil, end, nil
	case code == kafka.OffsetOutOfRange && f.LogStart < 0:
		offs, err := t.cl.listOffsets(ctx, []catchup.Partition{p}, earliest, wire.ReadUncommitted)
		if err != nil {
			return nil, 0, fmt.Errorf("read back %s at %d: %w", p, at, err)
		}
		if at < offs[0] {
			return nil, end, nil
		}
		return nil, 0, fmt.Errorf("read back %s at %d: %w", p, at, mark(code, catchup.ErrRetriable))
	case code == kafka.OffsetOutOfRange:
		return nil, 0, fmt.Errorf("read back %s at %d: above the high watermark %d: %w", p, at, f.HighWatermark, mark(code, catchup.ErrRetriable))
	case f.Code != 0:
		return nil, 0, fmt.Errorf("read back %s at %d: %w", p, at, codeError(f.Code))
	}
	b, ok, err := wire.FirstBatch(f.Records)
	switch {
	case err != nil:
		return nil, 0, fmt.Errorf("read back %s at %d: %w", p, at, err)
	case !ok && at < f.HighWatermark:
		return nil, 0, fmt.Errorf("read back %s at %d: no whole batch in the response: %w", p, at, mark(io.ErrUnexpectedEOF, catchup.ErrRetriable))
	case !ok:
		return nil, 0, fmt.Errorf("read back %s at %d: above the high watermark %d: %w", p, at, f.HighWatermark, mark(kafka.OffsetOutOfRange, catchup.ErrRetriable))
	case b.FirstOffset() > at:
		return nil, at, nil // end-1 is in a hole left by compaction
	case b.Control():
		return nil, b.FirstOffset(), nil
	}
	recs, err := b.Records()
	if err != nil {
		return nil, 0, fmt.Errorf("read back %s at %d: %w", p, at, err)
	}
	return recs, b.FirstOffset(), nil
}
