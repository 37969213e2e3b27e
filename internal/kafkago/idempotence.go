package kafkago

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol/initproducerid"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/kafkago/wire"
)

// The idempotent producer (KIP-98 without transactions): a Target gets a
// producer id and epoch from the target cluster once (InitProducerId with no
// transactional id) and numbers the records of each partition from 0, so
// that a batch sent again after an unknown outcome, with the same sequence,
// is appended at most once: the leader answers the copy with the offset of
// the first (or DUPLICATE_SEQUENCE_NUMBER when it no longer remembers it).
// This needs one batch in flight per partition, which the engine keeps
// (requests carry several partitions' batches; see sink).
//
// kafka-go's protocol package encodes InitProducerId; catchup routes it
// through its exchange like the other raw requests.

// idempotence is a Target's producer id, epoch and next sequence number per
// partition. A zero idempotence has no producer id yet.
type idempotence struct {
	mu    sync.Mutex
	id    int64 // -1 until InitProducerId answered
	epoch int16
	next  map[catchup.Partition]int32
}

// produceResends is how many times a batch of unknown outcome is sent again,
// identical, before Produce reports the unknown outcome to the engine.
const produceResends = 3

// idempotenceFix is what to do when the target refuses an idempotent producer.
const idempotenceFix = "grant the target principal IDEMPOTENT_WRITE on the cluster (needed before Kafka 2.8; " +
	"later brokers allow it to any principal with WRITE on a topic), or set producer.idempotent: false " +
	"(a produce of unknown outcome is then reconciled by reading the target back, which a stalled follower can defeat; see docs/guarantees.md)"

// nextSeq returns the producer fields for a batch of n records of p, getting
// a producer id first if the Target has none.
func (t *Target) nextSeq(ctx context.Context, p catchup.Partition) (wire.ProducerSeq, error) {
	t.idem.mu.Lock()
	defer t.idem.mu.Unlock()
	if t.idem.next == nil {
		id, epoch, err := t.initProducerID(ctx)
		if err != nil {
			return wire.ProducerSeq{}, err
		}
		t.idem.id, t.idem.epoch, t.idem.next = id, epoch, map[catchup.Partition]int32{}
	}
	return wire.ProducerSeq{On: true, ID: t.idem.id, Epoch: t.idem.epoch, Base: t.idem.next[p]}, nil
}

// appended advances p's sequence past the n records of the batch that
// started at seq, which the leader appended.
func (t *Target) appended(p catchup.Partition, seq wire.ProducerSeq, n int) {
	t.idem.mu.Lock()
	defer t.idem.mu.Unlock()
	if t.idem.next != nil && t.idem.id == seq.ID && t.idem.epoch == seq.Epoch {
		t.idem.next[p] = addSeq(seq.Base, n)
	}
}

// resetProducer forgets the producer id after the broker lost or refused it
// (UNKNOWN_PRODUCER_ID, OUT_OF_ORDER_SEQUENCE_NUMBER, INVALID_PRODUCER_EPOCH,
// PRODUCER_FENCED): the next batch gets a new producer id and sequences
// from 0, which a broker accepts for any partition.
func (t *Target) resetProducer(seq wire.ProducerSeq) {
	t.idem.mu.Lock()
	defer t.idem.mu.Unlock()
	if t.idem.id == seq.ID && t.idem.epoch == seq.Epoch {
		t.idem.next = nil
		t.idem.id = -1
	}
}

// addSeq is the sequence after n records from s: sequences wrap from
// MaxInt32 to 0, as the brokers expect (Java's DefaultRecordBatch.incrementSequence).
func addSeq(s int32, n int) int32 {
	if int64(s) > math.MaxInt32-int64(n) {
		return int32(int64(n) - (math.MaxInt32 - int64(s)) - 1)
	}
	return s + int32(n)
}

// initProducerID asks the target cluster for a producer id and epoch.
func (t *Target) initProducerID(ctx context.Context) (int64, int16, error) {
	e := t.cl.newExchange(&initproducerid.Request{TransactionTimeoutMs: 60000}, 0)
	res, err := t.cl.roundTrip(ctx, e, t.timeout+produceResponseMargin)
	if err != nil {
		if isAuthOrTLS(err) || errors.Is(err, errUnsupported) {
			return 0, 0, fmt.Errorf("init producer id in cluster %q: %w; %s", t.cl.name, err, idempotenceFix)
		}
		return 0, 0, mark(fmt.Errorf("init producer id in cluster %q: %w", t.cl.name, err), catchup.ErrRetriable)
	}
	r, ok := res.(*initproducerid.Response)
	if !ok {
		return 0, 0, fmt.Errorf("init producer id in cluster %q: unexpected response %T", t.cl.name, res)
	}
	switch code := kafka.Error(r.ErrorCode); code {
	case 0:
		return r.ProducerID, r.ProducerEpoch, nil
	case kafka.ClusterAuthorizationFailed, kafka.TransactionalIDAuthorizationFailed, kafka.UnsupportedVersion,
		kafka.InvalidRequest:
		return 0, 0, fmt.Errorf("init producer id in cluster %q: %w; %s", t.cl.name, code, idempotenceFix)
	case kafka.GroupLoadInProgress:
		// kafka-go describes code 14 as a consumer group coordinator's.
		return 0, 0, mark(&producerIDsError{cluster: t.cl.name, code: code}, catchup.ErrRetriable)
	default:
		return 0, 0, mark(fmt.Errorf("init producer id in cluster %q: %w", t.cl.name, code), catchup.ErrRetriable)
	}
}

// producerIDsError is InitProducerId's COORDINATOR_LOAD_IN_PROGRESS, in
// words that say what it means there: the broker (Kafka 3.0 and later,
// KIP-730) waits for a block of producer ids from the controller, as on a
// new cluster's first idempotent producer or when its block ran out.
type producerIDsError struct {
	cluster string
	code    kafka.Error
}

func (e *producerIDsError) Error() string {
	return fmt.Sprintf("init producer id in cluster %q: the broker has no producer ids to give yet "+
		"(Kafka error %d, COORDINATOR_LOAD_IN_PROGRESS: it is getting a block of them from the controller, "+
		"a moment on a new cluster; if it lasts, see the controller's log for AllocateProducerIds)", e.cluster, int(e.code))
}

func (e *producerIDsError) Unwrap() error { return e.code }

// producerLost tells whether code means the broker no longer accepts the
// producer's id, epoch or sequence: the batch was not appended, but an
// earlier one of unknown outcome may have been, so the engine reconciles.
func producerLost(code kafka.Error) bool {
	switch code {
	case kafka.OutOfOrderSequenceNumber, kafka.UnknownProducerId, kafka.InvalidProducerEpoch, kafka.ProducerFenced:
		return true
	}
	return false
}
