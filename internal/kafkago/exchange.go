package kafkago

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/kafkago/wire"
)

// exchange carries one request through kafka-go's Transport, which routes it
// to a broker and lends it a connection, but lets the request write itself
// and read its response (protocol.RawExchanger). That gives catchup what the
// Transport does not:
//
//   - the raw body of a fetch response, for kmsg to decode: kafka-go's
//     decoder drops each record batch's last offset delta, which Next needs
//     to step past a trailing compacted range or an empty batch;
//   - a ListOffsets request per leader broker: kafka-go splits it into one
//     request per partition;
//   - a Metadata request that reaches a broker: kafka-go answers it from its
//     cache;
//   - whether a produce request reached the wire, which decides whether a
//     failure is retriable or of unknown outcome.
//
// An exchange is used for one round trip.
type exchange struct {
	msg      protocol.Message
	route    func(protocol.Cluster) (protocol.Broker, error) // nil: any broker
	clientID string
	corr     int32
	raw      bool           // return the response as *rawResponse, undecoded
	req      wire.Request   // if set, the request written (msg routes it and says whether it has a response)
	recycle  *wire.Recycler // where a raw response's buffer comes from; nil: allocated
	minVer   int16          // lowest API version catchup accepts

	version int16 // negotiated on the connection, set by Required

	mu    sync.Mutex
	stage stage
	// encoded is closed once req is encoded into its frame (or failed to
	// be): until then the connection's goroutine reads what req points to,
	// a produce request's records in the memory of the fetch they came
	// from, which the caller releases once the round trip returns.
	encoded     chan struct{}
	encodedOnce sync.Once
}

// stage is how far an exchange got in writing its request.
type stage int

const (
	pending     stage = iota // not handed to a connection yet
	abandoned                // the caller gave up first; it will never be written
	writing                  // being written
	writeFailed              // a write failed: the broker has at most part of the frame
	written                  // the whole request is on the wire
)

func (c *Cluster) newExchange(msg protocol.Message, minVer int16) *exchange {
	return &exchange{msg: msg, clientID: c.clientID, corr: c.corr.Add(1), minVer: minVer}
}

func (e *exchange) ApiKey() protocol.ApiKey { return e.msg.ApiKey() }

// Broker implements protocol.BrokerMessage.
func (e *exchange) Broker(cl protocol.Cluster) (protocol.Broker, error) {
	if e.route != nil {
		return e.route(cl)
	}
	if m, ok := e.msg.(protocol.BrokerMessage); ok {
		return m.Broker(cl)
	}
	return protocol.Broker{ID: -1}, nil
}

// toBroker routes the exchange to the broker with the given id.
func (e *exchange) toBroker(id int32) *exchange {
	e.route = func(cl protocol.Cluster) (protocol.Broker, error) {
		if b, ok := cl.Brokers[id]; ok {
			return b, nil
		}
		return protocol.Broker{}, fmt.Errorf("broker %d is not in the cluster metadata: %w", id, errRouting)
	}
	return e
}

// newWireExchange returns an exchange that writes req, routed by msg (a
// kafka-go request of the same API, which also says whether it has a
// response), at the versions both req and kafka-go offer.
func (c *Cluster) newWireExchange(msg protocol.Message, req wire.Request) *exchange {
	e := c.newExchange(msg, req.MinVersion())
	e.req, e.encoded = req, make(chan struct{})
	return e
}

// Required implements protocol.RawExchanger: it is called on the connection
// right before RawExchange, with the API versions negotiated there.
func (e *exchange) Required(versions map[protocol.ApiKey]int16) bool {
	v, ok := versions[e.msg.ApiKey()]
	e.version = v
	if _, own := e.msg.(kmsgKey); own {
		// kafka-go negotiates version 0 of an API it does not implement;
		// the broker advertising the API at all is what it tells.
		e.version = -1
		if ok {
			e.version = e.req.MaxVersion()
		}
	}
	return true
}

// newKmsgExchange returns an exchange for a request of an API kafka-go does
// not implement (OffsetForLeaderEpoch), encoded by kmsg at the version set
// in req, which must be non-flexible (the response is read with header
// v0). Its response is raw. The broker is assumed to support that version
// when it advertises the API: catchup documents the broker versions it
// needs.
func (c *Cluster) newKmsgExchange(req kmsg.Request) *exchange {
	e := c.newWireExchange(kmsgKey(req.Key()), wire.Kmsg(req))
	e.raw = true
	return e
}

// kmsgKey is the protocol.Message of a kmsg request: all the Transport
// needs of it is its API key.
type kmsgKey int16

func (k kmsgKey) ApiKey() protocol.ApiKey { return protocol.ApiKey(k) }

// RawExchange implements protocol.RawExchanger.
func (e *exchange) RawExchange(rw io.ReadWriter) (protocol.Message, error) {
	e.mu.Lock()
	if e.stage == abandoned {
		e.mu.Unlock()
		return nil, errAbandoned
	}
	e.stage = writing
	e.mu.Unlock()
	// Whatever way it leaves, the request is no longer being encoded: a
	// sent() that saw it writing stops waiting (writeRequest says so
	// earlier, once the frame is made).
	defer e.doneEncoding()

	key := e.msg.ApiKey()
	maxVer := key.MaxVersion()
	_, own := e.msg.(kmsgKey)
	switch {
	case own:
		maxVer = e.req.MaxVersion()
	case e.req != nil:
		maxVer = min(maxVer, e.req.MaxVersion())
	}
	if own && e.version < 0 {
		e.setStage(writeFailed)
		return nil, fmt.Errorf("%s: the broker does not offer this API; catchup needs version %d (Kafka 2.3 or later): %w",
			key, maxVer, errUnsupported)
	}
	if e.version < e.minVer || e.version > maxVer {
		e.setStage(writeFailed)
		return nil, fmt.Errorf("%s: broker and kafka-go agree on API version %d, catchup needs %d to %d: %w",
			key, e.version, e.minVer, maxVer, errUnsupported)
	}
	if p, ok := e.msg.(protocol.PreparedMessage); ok {
		p.Prepare(e.version)
	}
	// WriteRequest encodes the whole frame before writing it: an error
	// leaves at most part of the frame at the broker, which it cannot
	// act on.
	if err := e.writeRequest(rw); err != nil {
		e.setStage(writeFailed)
		return nil, err
	}
	e.setStage(written)

	if m, ok := e.msg.(interface{ HasResponse() bool }); ok && !m.HasResponse() {
		return nil, nil
	}
	if e.raw {
		return readRaw(rw, key, e.corr, e.recycle)
	}
	corr, res, err := protocol.ReadResponse(rw, key, e.version)
	if err != nil {
		return nil, err
	}
	if corr != e.corr {
		return nil, fmt.Errorf("%s response: correlation id %d, want %d", key, corr, e.corr)
	}
	// Wrapped, because the Transport inspects some response types and
	// assumes the request type that goes with them: a *metadata.Response
	// to an exchange makes it panic.
	return &decodedResponse{res}, nil
}

// writeRequest writes the request frame with one Write.
func (e *exchange) writeRequest(w io.Writer) error {
	if e.req == nil {
		return protocol.WriteRequest(w, e.version, e.corr, e.clientID, e.msg)
	}
	f, err := wire.EncodeRequest(e.req, e.version, e.corr, e.clientID)
	e.doneEncoding()
	if err != nil {
		return err
	}
	defer f.Release() // the bytes are the connection's once Write returns
	_, err = w.Write(f.Bytes())
	return err
}

// doneEncoding says that the request's frame is made, or never will be.
func (e *exchange) doneEncoding() {
	if e.encoded != nil {
		e.encodedOnce.Do(func() { close(e.encoded) })
	}
}

// decodedResponse hides a response's type from the Transport.
type decodedResponse struct{ protocol.Message }

func (e *exchange) setStage(s stage) {
	e.mu.Lock()
	e.stage = s
	e.mu.Unlock()
}

// sent reports, after a failed round trip, whether the broker may have
// received the whole request. A request not yet written is abandoned, so
// that it is never written later; one being written is waited for until
// it is encoded, so that the caller may reuse what the request pointed to
// (a round trip cut off by its context returns while the connection's
// goroutine still writes).
func (e *exchange) sent() bool {
	e.mu.Lock()
	if e.stage == pending {
		e.stage = abandoned
	}
	st := e.stage
	e.mu.Unlock()
	if st == writing && e.encoded != nil {
		<-e.encoded
	}
	return st == writing || st == written
}

// maxResponseBytes guards against a garbled size prefix.
const maxResponseBytes = 1 << 30

// rawResponse is a response body after the correlation id, undecoded.
type rawResponse struct {
	key  protocol.ApiKey
	body []byte
}

func (r *rawResponse) ApiKey() protocol.ApiKey { return r.key }

// readRaw reads one non-flexible response (header v0: the correlation id)
// into a buffer of its exact size, from rc. The records of a fetch share
// memory with it until they are produced, and it goes back to rc only when
// the caller of Source.Fetch releases them.
func readRaw(r io.Reader, key protocol.ApiKey, corr int32, rc *wire.Recycler) (*rawResponse, error) {
	var hdr [8]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, fmt.Errorf("%s response: %w", key, err)
	}
	size := int32(binary.BigEndian.Uint32(hdr[:4]))
	if size < 4 || size > maxResponseBytes {
		return nil, fmt.Errorf("%s response: size %d out of range", key, size)
	}
	if got := int32(binary.BigEndian.Uint32(hdr[4:])); got != corr {
		return nil, fmt.Errorf("%s response: correlation id %d, want %d", key, got, corr)
	}
	body := rc.Body(int(size - 4))
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("%s response: %w", key, err)
	}
	return &rawResponse{key: key, body: body}, nil
}

var (
	// errAbandoned is returned on the connection for an exchange whose
	// caller gave up before it was written; nobody reads it.
	errAbandoned = errors.New("request abandoned before it was written")
	// errRouting marks a request the Transport could not route: nothing
	// was sent, and the metadata refreshes within a second.
	errRouting = errors.New("no route to the partition leader")
	// errUnsupported marks a broker too old (or too new) for catchup.
	errUnsupported = errors.New("unsupported API version")
)

// roundTrip sends e through the Transport, with timeout as the longest wait
// when ctx has no earlier deadline.
func (c *Cluster) roundTrip(ctx context.Context, e *exchange, timeout time.Duration) (protocol.Message, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := c.client
	res, err := client.Transport.RoundTrip(ctx, client.Addr, e)
	if err != nil {
		if routingError(err) {
			// The Transport routes by a layout it learns in the
			// background; when it never learnt one (refused
			// credentials, bad certificates, no broker reachable)
			// every request fails as "topic not found". Its cache
			// holds the real reason.
			if _, merr := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{}}); merr != nil && ctx.Err() == nil {
				err = merr
			}
		}
		if !e.sent() && c.mechanism != "" && errors.Is(err, io.ErrUnexpectedEOF) && c.authError(err) == nil && !expectsTLS(err) {
			// Kafka answers a refused SaslAuthenticate v1+ with
			// SASL_AUTHENTICATION_FAILED, but closes the connection
			// after a refused v0 exchange, and kafka-go then reports
			// an unexpected EOF while it connects.
			err = &explainedError{fmt.Errorf("cluster %q: connection closed while connecting; the SASL %s authentication as user %q may have been refused, "+
				"or the listener does not enable %s (set sasl.mechanism to one of its enabled mechanisms, the broker's sasl.enabled.mechanisms), "+
				"or it is SSL or PLAINTEXT, without SASL (remove the sasl block): %w",
				c.name, c.mechanism, c.user, c.mechanism, err)}
		}
		return nil, err
	}
	if d, ok := res.(*decodedResponse); ok {
		return d.Message, nil
	}
	return res, nil
}
