package kafkago

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/produce"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/kafkago/wire"
)

// A Target sends the batches of the partitions a broker leads together, as
// the Java producer and franz-go do: the batches that come while a request
// to the broker is in flight wait and go together in the next, unless they
// fill a request of their own, which goes at once (up to
// sinkMaxInFlight requests). Each partition's copy still sends one batch
// at a time and gets its own answer, so its exactness, sequences and
// errors are its own; what partitions share is the round trip. A broker
// appends and replicates a request's batches in one pass, and its
// followers fetch them in one: requests, and the follower fetches each
// wakes, are counted per broker rather than per partition.

// sinkBatches bounds how many partitions' batches one request carries, so
// that a request is at most a few times batch_bytes (the frames' free list
// keeps frames of up to 4 MiB), far below a broker's socket.request.max.bytes.
const sinkBatches = 4

// RequestBatches is how many partitions' batches a produce request to one
// broker carries at most.
const RequestBatches = sinkBatches

// sinkRegroup is how long a sink waits, after a request, for the
// partitions it carried to queue their next batches, before it sends what
// it has: their callers take the answer, the next records and come back
// within microseconds when the records are there, and would otherwise
// find the broker idle and go one by one.
var sinkRegroup = time.Millisecond

// sinkPatience is how long a batch waits behind requests in flight before
// it goes in a request of its own: a slow request (a follower stalled,
// acks all) holds the others' batches no longer than this.
var sinkPatience = 100 * time.Millisecond

// sinkMaxInFlight bounds the requests in flight to a broker: the Java
// producer's max.in.flight.requests.per.connection default, and what an
// idempotent producer may have (the broker keeps the last 5 batches of
// each producer and partition). Each partition has one batch in flight at
// most, so it bounds full requests only: a broker that leads many of the
// partitions copied at once gets several, and appends them on as many of
// its request threads, as it did with a request per partition.
const sinkMaxInFlight = 5

// sink gathers the produce batches bound for one broker.
type sink struct {
	t      *Target
	broker int32

	mu       sync.Mutex
	queue    []*produceCall // waiting for the next request, in arrival order
	senders  int            // goroutines sending the queue, a request in flight each (or about to be)
	starting int            // of them, those that have not taken their first batches yet
	hurried  int            // of those, the ones started for a batch out of patience
	partials int            // requests that are not full in flight, or being gathered
	// back are the partitions of the last requests that have not queued
	// their next batch yet; wake is signalled when the last of them has.
	back []catchup.Partition
	wake chan struct{}
}

// produceCall is one partition's batch in a sink, and its answer.
type produceCall struct {
	ctx   context.Context // the caller's, for the values a round trip carries
	batch wire.ProduceBatch

	// Set by the sender, under the sink's lock, when it takes the call.
	req *sharedRequest
	// Set by the sender before done is closed.
	res  *produce.Response // nil: acks none, or err
	err  error
	sent bool // with err: whether the broker may have the whole request
	done chan struct{}
}

// sharedRequest is a request in flight and the calls that wait for it.
type sharedRequest struct {
	e       *exchange
	waiting int                // its calls whose callers still wait (under the sink's lock)
	cancel  context.CancelFunc // ends the round trip: once none waits
}

// sinkFor returns the sink of broker id.
func (t *Target) sinkFor(id int32) *sink {
	t.sinksMu.Lock()
	defer t.sinksMu.Unlock()
	s := t.sinks[id]
	if s == nil {
		if t.sinks == nil {
			t.sinks = map[int32]*sink{}
		}
		s = &sink{t: t, broker: id, wake: make(chan struct{}, 1)}
		t.sinks[id] = s
	}
	return s
}

// send sends c's batch in the next request to the broker, and waits for its
// answer. When ctx ends first, a batch still waiting is withdrawn (not
// sent); a request whose callers have all given up is cut off, as a
// request of one partition was, and each of them gets the round trip's
// error once the request no longer refers to its records (exchange.sent).
// A request some other caller still waits for goes on, and so does this
// caller's wait.
func (s *sink) send(ctx context.Context, c *produceCall) (res *produce.Response, sent bool, err error) {
	c.ctx, c.done = ctx, make(chan struct{})
	s.mu.Lock()
	s.queue = append(s.queue, c)
	if i := slices.Index(s.back, c.batch.Partition); i >= 0 {
		if s.back = slices.Delete(s.back, i, i+1); len(s.back) == 0 {
			select {
			case s.wake <- struct{}{}:
			default:
			}
		}
	}
	if s.senders == 0 || len(s.queue) >= sinkBatches*(s.starting+1) && s.senders < sinkMaxInFlight {
		s.start(false)
	}
	s.mu.Unlock()
	patience := time.NewTimer(sinkPatience)
	defer patience.Stop()
	for {
		select {
		case <-c.done:
			return c.res, c.sent, c.err
		case <-patience.C:
			s.mu.Lock()
			if c.req == nil && s.senders < sinkMaxInFlight {
				s.start(true)
			}
			s.mu.Unlock()
			continue
		case <-ctx.Done():
		}
		break
	}
	s.mu.Lock()
	r := c.req
	if r == nil {
		s.queue = slices.DeleteFunc(s.queue, func(q *produceCall) bool { return q == c })
		s.mu.Unlock()
		return nil, false, ctx.Err()
	}
	if r.waiting--; r.waiting == 0 {
		r.cancel()
	}
	s.mu.Unlock()
	<-c.done
	return c.res, c.sent, c.err
}

// start starts a sender, one that may send a request that is not full
// while another is in flight if hurried. Under s.mu.
func (s *sink) start(hurried bool) {
	s.senders++
	s.starting++
	if hurried {
		s.hurried++
	}
	go s.run()
}

// run sends the queue's batches, a request at a time, while it may: a
// full request always, one that is not full when no other such is in
// flight (or, first, when started hurried). Before one that is not full,
// it waits for the partitions of the last requests to come back, at most
// sinkRegroup.
func (s *sink) run() {
	regroup := time.NewTimer(sinkRegroup)
	defer regroup.Stop()
	s.mu.Lock()
	s.starting--
	hurried := s.hurried > 0
	if hurried {
		s.hurried--
	}
	for {
		var calls []*produceCall
		partial := false
		switch {
		case len(s.queue) >= sinkBatches:
			calls = s.take()
		case len(s.queue) > 0 && (s.partials == 0 || hurried):
			s.partials++
			partial = true
			if len(s.back) > 0 && !hurried {
				s.mu.Unlock()
				regroup.Reset(sinkRegroup)
				select {
				case <-s.wake:
				case <-regroup.C:
				}
				s.mu.Lock()
			}
			s.back = s.back[:0]
			calls = s.take()
		}
		hurried = false
		if len(calls) == 0 {
			if partial {
				s.partials--
			}
			s.senders--
			s.mu.Unlock()
			return
		}
		r := s.share(calls)
		s.mu.Unlock()
		m, err := s.t.cl.roundTrip(r.ctx, r.e, s.t.timeout+produceResponseMargin)
		r.cancel()
		sent := err != nil && r.e.sent()
		res, _ := m.(*produce.Response)
		s.mu.Lock()
		if partial {
			s.partials--
			select {
			case <-s.wake: // a stale signal: this sender is the one that waits for it next
			default:
			}
		}
		for _, c := range calls {
			s.back = append(s.back, c.batch.Partition)
			c.res, c.err, c.sent = res, err, sent
			close(c.done)
		}
	}
}

// requestCtx is a sharedRequest with the context of its round trip.
type requestCtx struct {
	*sharedRequest
	ctx context.Context
}

// share makes the request of calls. Its round trip carries the first
// call's values and the latest of their deadlines, and is not cut off
// while one of them waits for it. Under s.mu.
func (s *sink) share(calls []*produceCall) requestCtx {
	ctx := context.WithoutCancel(calls[0].ctx)
	var latest time.Time
	for _, c := range calls {
		d, ok := c.ctx.Deadline()
		if !ok {
			latest = time.Time{}
			break
		}
		if d.After(latest) {
			latest = d
		}
	}
	cancel := context.CancelFunc(func() {})
	if !latest.IsZero() {
		ctx, cancel = context.WithDeadline(ctx, latest)
	}
	ctx, stop := context.WithCancel(ctx)
	r := &sharedRequest{e: s.t.request(calls).toBroker(s.broker), waiting: len(calls),
		cancel: func() { stop(); cancel() }}
	for _, c := range calls {
		c.req = r
	}
	return requestCtx{r, ctx}
}

// take removes from the queue the batches of the next request, at most
// sinkBatches, each partition once, grouped by topic.
func (s *sink) take() []*produceCall {
	var calls []*produceCall
	rest := s.queue[:0]
	for _, c := range s.queue {
		p := c.batch.Partition
		if len(calls) == sinkBatches || slices.ContainsFunc(calls, func(o *produceCall) bool { return o.batch.Partition == p }) {
			rest = append(rest, c)
			continue
		}
		calls = append(calls, c)
	}
	clear(s.queue[len(rest):])
	s.queue = rest
	slices.SortStableFunc(calls, func(a, b *produceCall) int { return strings.Compare(a.batch.Partition.Topic, b.batch.Partition.Topic) })
	return calls
}

// request is the exchange of one produce request carrying the calls' batches.
func (t *Target) request(calls []*produceCall) *exchange {
	timeout := int32(t.timeout / time.Millisecond)
	req := &wire.ProduceRequest{Acks: t.acks, TimeoutMillis: timeout, Compression: t.compression, Level: t.level,
		Batches: make([]wire.ProduceBatch, len(calls))}
	for i, c := range calls {
		req.Batches[i] = c.batch
	}
	// The kafka-go request says whether a response comes (acks); the
	// exchange is routed to the sink's broker.
	return t.cl.newWireExchange(&produce.Request{Acks: t.acks, Timeout: timeout}, req)
}

// leader returns the id of the broker that leads p in the Transport's view
// of the cluster, the one a request for p alone would be routed to, without
// sending anything.
func (c *Cluster) leader(ctx context.Context, p catchup.Partition) (int32, error) {
	probe := &leaderProbe{req: produce.Request{Topics: []produce.RequestTopic{{
		Topic:      p.Topic,
		Partitions: []produce.RequestPartition{{Partition: p.Partition}},
	}}}}
	_, err := c.client.Transport.RoundTrip(ctx, c.client.Addr, probe)
	if errors.Is(err, errProbed) {
		return probe.leader, nil
	}
	if err == nil {
		err = errors.New("the Transport sent a leader probe") // it never does: Broker fails it
	}
	if routingError(err) {
		// As roundTrip does: the Transport's cache holds the reason it
		// knows no layout (credentials, certificates, no broker).
		if _, merr := c.client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{}}); merr != nil && ctx.Err() == nil {
			err = merr
		}
	}
	return -1, err
}

// leaderProbe is a request the Transport routes and never sends: its
// Broker answers the partition's leader, as the produce request's routing
// finds it, with errProbed.
type leaderProbe struct {
	req    produce.Request
	leader int32
}

func (l *leaderProbe) ApiKey() protocol.ApiKey { return protocol.Produce }

// Broker implements protocol.BrokerMessage.
func (l *leaderProbe) Broker(cl protocol.Cluster) (protocol.Broker, error) {
	b, err := l.req.Broker(cl)
	if err != nil {
		return b, err
	}
	l.leader = b.ID
	return b, errProbed
}

// errProbed ends a leaderProbe's round trip once it is routed.
var errProbed = errors.New("leader probe routed")
