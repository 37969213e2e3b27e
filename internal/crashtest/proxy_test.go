package crashtest

import (
	"encoding/binary"
	"net"
	"sync"
	"sync/atomic"
)

// dropProduce sits between the target kfake broker and its clients, as the
// broker's listener (kfake.ListenFn): it lets every request through, but for
// every nth produce request it closes the connection instead of writing the
// response. The broker has appended the records by then, and the client sees
// its connection lost after the request was sent: a produce whose outcome is
// unknown, which catchup must reconcile instead of retrying blindly.
type dropProduce struct {
	every    int64
	produces atomic.Int64 // produce requests seen
	dropped  atomic.Int64 // responses dropped
}

// listen is a kfake.ListenFn.
func (d *dropProduce) listen(network, address string) (net.Listener, error) {
	l, err := net.Listen(network, address)
	if err != nil {
		return nil, err
	}
	return &dropListener{Listener: l, d: d}, nil
}

type dropListener struct {
	net.Listener
	d *dropProduce
}

func (l *dropListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &dropConn{Conn: c, d: l.d, drop: map[int32]bool{}}, nil
}

// requestHeaderBytes is the start of every Kafka request: size (int32, of
// what follows it), API key (int16), API version (int16), correlation id
// (int32).
const requestHeaderBytes = 4 + 2 + 2 + 4

const apiKeyProduce = 0

// dropConn is one broker-side connection. Read parses the request framing
// of what the broker reads; Write, given a whole response (kfake writes each
// response with one Write, correlation id at bytes 4 to 8), closes the
// connection instead if the request was marked.
type dropConn struct {
	net.Conn
	d *dropProduce

	// Read side: the broker reads from one goroutine at a time.
	head []byte // the current request's header bytes read so far
	skip int64  // bytes of the current request's body still to pass

	mu   sync.Mutex
	drop map[int32]bool // correlation ids whose responses are dropped
}

func (c *dropConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.scan(p[:n])
	return n, err
}

func (c *dropConn) scan(b []byte) {
	for len(b) > 0 {
		if c.skip > 0 {
			k := min(int64(len(b)), c.skip)
			c.skip -= k
			b = b[k:]
			continue
		}
		k := min(len(b), requestHeaderBytes-len(c.head))
		c.head = append(c.head, b[:k]...)
		b = b[k:]
		if len(c.head) < requestHeaderBytes {
			return
		}
		size := int64(binary.BigEndian.Uint32(c.head[0:4]))
		key := int16(binary.BigEndian.Uint16(c.head[4:6]))
		corr := int32(binary.BigEndian.Uint32(c.head[8:12]))
		c.skip = size - (requestHeaderBytes - 4)
		c.head = c.head[:0]
		if key == apiKeyProduce && c.d.produces.Add(1)%c.d.every == 0 {
			c.mu.Lock()
			c.drop[corr] = true
			c.mu.Unlock()
		}
	}
}

func (c *dropConn) Write(p []byte) (int, error) {
	if len(p) >= 8 {
		corr := int32(binary.BigEndian.Uint32(p[4:8]))
		c.mu.Lock()
		drop := c.drop[corr]
		delete(c.drop, corr)
		c.mu.Unlock()
		if drop {
			c.d.dropped.Add(1)
			c.Conn.Close()
			return 0, net.ErrClosed
		}
	}
	return c.Conn.Write(p)
}
