package kafkago

import (
	"bytes"
	"testing"
	"time"
)

// blockingRequest is a wire.Request whose encoding waits for release: a
// produce request reading its records, slowly.
type blockingRequest struct {
	encoding chan struct{} // closed when AppendTo starts
	release  chan struct{}
}

func (*blockingRequest) Key() int16        { return 0 }
func (*blockingRequest) MinVersion() int16 { return 3 }
func (*blockingRequest) MaxVersion() int16 { return 8 }
func (r *blockingRequest) AppendTo(b []byte, _ int16) ([]byte, error) {
	close(r.encoding)
	<-r.release
	return append(b, 0), nil
}

// TestSentWaitsForTheEncoding: a round trip that gives up (its context
// ended) while the connection's goroutine encodes the request does not
// return until the encoding is done, since the caller then releases the
// fetch that the request's records point into, and the next fetch
// overwrites it: the broker would get a batch of other bytes, its CRC
// computed over them.
func TestSentWaitsForTheEncoding(t *testing.T) {
	req := &blockingRequest{encoding: make(chan struct{}), release: make(chan struct{})}
	c := &Cluster{clientID: "catchup"}
	e := c.newWireExchange(kmsgKey(0), req)
	e.version, e.raw = 3, true
	go func() { _, _ = e.RawExchange(&bytes.Buffer{}) }()
	<-req.encoding
	sent := make(chan bool, 1)
	go func() { sent <- e.sent() }()
	select {
	case <-sent:
		t.Fatal("sent returned while the request was being encoded")
	case <-time.After(50 * time.Millisecond):
	}
	close(req.release)
	if !<-sent {
		t.Error("sent = false for a request being written")
	}
}

// TestSentDoesNotWaitForARefusedRequest: a request refused before it is
// encoded (no version both sides accept) leaves its writing stage without
// a frame; a sent() that saw it writing must not wait for one forever.
func TestSentDoesNotWaitForARefusedRequest(t *testing.T) {
	req := &blockingRequest{encoding: make(chan struct{}), release: make(chan struct{})}
	c := &Cluster{clientID: "catchup"}
	e := c.newWireExchange(kmsgKey(0), req)
	e.version = 2 // below the request's MinVersion
	if _, err := e.RawExchange(&bytes.Buffer{}); err == nil {
		t.Fatal("RawExchange accepted version 2 of a request of versions 3 to 8")
	}
	select {
	case <-e.encoded:
	case <-time.After(time.Second):
		t.Fatal("the exchange still says it is being encoded after RawExchange refused it: a sent() that saw it writing waits forever")
	}
}
