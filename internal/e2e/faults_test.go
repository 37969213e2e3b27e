package e2e

import (
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// errDrop is what a control returns to make kfake close the connection.
var errDrop = errors.New("e2e: connection dropped on purpose")

// faultCase is one injected fault: inject installs it on e once the source
// is seeded and returns how many requests it has hit so far.
type faultCase struct {
	name     string
	dstOpts  func(d *responseDropper) []kfake.Opt
	inject   func(e *env, topic string, d *responseDropper) (hits func() int)
	wantHits int
	// check looks at the totals of the report.
	check func(t *testing.T, retries, reconciled int)
}

// atLeast returns a check that the report shows at least so many retries
// and reconciliations.
func atLeast(retries, reconciled int) func(t *testing.T, gotRetries, gotReconciled int) {
	return func(t *testing.T, gotRetries, gotReconciled int) {
		t.Helper()
		if gotRetries < retries || gotReconciled < reconciled {
			t.Errorf("report: %d retries and %d reconciliations, want at least %d and %d", gotRetries, gotReconciled, retries, reconciled)
		}
	}
}

// fault returns an inject that installs f (for topic) on the source or the
// target.
func fault(onTarget bool, f kfake.Fault) func(e *env, topic string, _ *responseDropper) func() int {
	return func(e *env, topic string, _ *responseDropper) func() int {
		c := e.src.fake
		if onTarget {
			c = e.dst.fake
		}
		f.Topic = topic
		h := c.Fault(f)
		return h.Hits
	}
}

// dropNth returns an inject that closes the connection of the n-th request
// of key on the source or the target, before the broker handles it.
func dropNth(onTarget bool, key kmsg.Key, n int32) func(e *env, topic string, _ *responseDropper) func() int {
	return func(e *env, _ string, _ *responseDropper) func() int {
		c := e.src.fake
		if onTarget {
			c = e.dst.fake
		}
		var seen, dropped atomic.Int32
		c.ControlKey(int16(key), func(kmsg.Request) (kmsg.Response, error, bool) {
			if seen.Add(1) != n {
				return nil, nil, false // the cluster handles it
			}
			dropped.Add(1)
			return nil, errDrop, true
		})
		return func() int { return int(dropped.Load()) }
	}
}

// TestFaults injects errors into the target's produce requests and the
// source's fetch requests. Whatever the error (one that says nothing was
// written, one returned after the broker appended the records, a
// connection lost before or after the append), the target ends an exact
// copy, and the report shows the retries and the reconciliations.
func TestFaults(t *testing.T) {
	t.Parallel()
	cases := []faultCase{{
		name:     "produce NOT_LEADER_FOR_PARTITION",
		inject:   fault(true, kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Partitions: []int32{0}, Err: kerr.NotLeaderForPartition, Count: 3}),
		wantHits: 3,
		check: func(t *testing.T, retries, reconciled int) {
			t.Helper()
			if retries < 3 || reconciled != 0 {
				t.Errorf("report: %d retries and %d reconciliations, want at least 3 and none (nothing was written)", retries, reconciled)
			}
		},
	}, {
		name:     "produce REQUEST_TIMED_OUT after the append",
		inject:   fault(true, kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Partitions: []int32{0}, Err: kerr.RequestTimedOut, Count: 2}),
		wantHits: 2,
		check:    atLeast(0, 2),
	}, {
		name:     "produce NOT_ENOUGH_REPLICAS_AFTER_APPEND",
		inject:   fault(true, kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Partitions: []int32{1}, Err: kerr.NotEnoughReplicasAfterAppend, Count: 2}),
		wantHits: 2,
		check:    atLeast(0, 2),
	}, {
		name:     "produce connection lost before the append",
		inject:   dropNth(true, kmsg.Produce, 3),
		wantHits: 1,
		check:    atLeast(1, 1),
	}, {
		name:    "produce connection lost after the append",
		dstOpts: func(d *responseDropper) []kfake.Opt { return []kfake.Opt{kfake.ListenFn(d.listen)} },
		inject: func(_ *env, _ string, d *responseDropper) func() int {
			d.arm(int16(kmsg.Produce), 3)
			return d.dropped
		},
		wantHits: 1,
		// The reconciliation finds the records written: nothing is sent again.
		check: atLeast(0, 1),
	}, {
		// Fetch retries are not in the report (TestReportCountsFetchRetries).
		name:     "fetch NOT_LEADER_FOR_PARTITION",
		inject:   fault(false, kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Partitions: []int32{0}, Err: kerr.NotLeaderForPartition, Count: 3}),
		wantHits: 3,
		check:    atLeast(0, 0),
	}, {
		name:     "fetch connection lost",
		inject:   dropNth(false, kmsg.Fetch, 2),
		wantHits: 1,
		check:    atLeast(0, 0),
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := &responseDropper{}
			var dstOpts []kfake.Opt
			if tc.dstOpts != nil {
				dstOpts = tc.dstOpts(d)
			}
			requireKfake(t, "inject protocol errors and drop connections")
			e := newEnv(t, dstOpts...)
			ctx := testContext(t)
			topic := e.topic(t, "faults")
			topics := []string{topic}
			e.createTopics(ctx, t, 2, nil, topic)
			for p := range int32(2) {
				for first := 0; first < 40; first += 5 {
					e.src.produce(ctx, t, variedRecords(topic, p, first, 5, false)...)
				}
			}
			hits := tc.inject(e, topic, d)

			// Small produce requests, quick retries: the faults land
			// mid-window and the test stays fast. Not idempotent: the
			// engine's retries and reconciliations are what is tested
			// (an idempotent target re-sends a request of unknown outcome
			// itself: internal/kafkago TestIdempotentProduce).
			rep := mustRun(ctx, t, e.configYAML(topics, "producer: {batch_records: 5, retry_backoff: 1ms, idempotent: false}", "fetch_bytes: 1024"), pipeline.Options{})
			if got := hits(); got != tc.wantHits {
				t.Errorf("the fault hit %d requests, want %d", got, tc.wantHits)
			}
			retries, reconciled := 0, 0
			for _, r := range rep.Partitions {
				if r.Status != replicate.StatusDone || r.Err != nil || r.Next != 40 {
					t.Errorf("%s: status %s, next %d, error %v; want done at 40", r.Partition, r.Status, r.Next, r.Err)
				}
				retries += r.Retries
				reconciled += r.Reconciled
			}
			tc.check(t, retries, reconciled)
			verifyExactCopy(t, e.src, e.dst, topics)
			e.wantCheckpoints(ctx, t, "after the run", map[catchup.Partition]int64{
				{Topic: topic, Partition: 0}: 40, {Topic: topic, Partition: 1}: 40,
			})
		})
	}
}

// TestReportCountsFetchRetries checks that fetches retried after a
// retriable error show in Result.Retries, which its doc says counts
// "produces and fetches retried".
func TestReportCountsFetchRetries(t *testing.T) {
	t.Parallel()
	requireKfake(t, "inject fetch errors")
	e := newEnv(t)
	ctx := testContext(t)
	topic := e.topic(t, "fetchretries")
	e.createTopics(ctx, t, 1, nil, topic)
	e.src.produce(ctx, t, values(topic, 0, numbered("f", 0, 10)...)...)
	h := e.src.fake.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: topic, Err: kerr.NotLeaderForPartition, Count: 3})
	rep := mustRun(ctx, t, e.configYAML([]string{topic}, "producer: {retry_backoff: 1ms}"), pipeline.Options{})
	if h.Hits() != 3 {
		t.Fatalf("the fault hit %d fetches, want 3", h.Hits())
	}
	if r := rep.Partitions[0]; r.Status != replicate.StatusDone || r.Retries != 3 {
		t.Errorf("%s: status %s, Retries %d; want done after 3 fetches retried, Retries 3", r.Partition, r.Status, r.Retries)
	}
	verifyExactCopy(t, e.src, e.dst, []string{topic})
}

// responseDropper wraps a kfake listener to close a connection instead of
// writing the response to a chosen request: the broker has done the work
// (appended the records) but the client never hears of it.
type responseDropper struct {
	key   atomic.Int32 // API key whose n-th request loses its response; -1 none
	n     atomic.Int32
	seen  atomic.Int32
	count atomic.Int32 // responses dropped
}

func (d *responseDropper) arm(key int16, n int32) {
	d.n.Store(n)
	d.key.Store(int32(key))
}

func (d *responseDropper) dropped() int { return int(d.count.Load()) }

// listen is a kfake.ListenFn.
func (d *responseDropper) listen(network, address string) (net.Listener, error) {
	ln, err := net.Listen(network, address)
	if err != nil {
		return nil, err
	}
	d.key.CompareAndSwap(0, -1)
	return &dropListener{Listener: ln, d: d}, nil
}

type dropListener struct {
	net.Listener
	d *responseDropper
}

func (l *dropListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &dropConn{Conn: c, d: l.d, drop: map[int32]bool{}}, nil
}

// dropConn follows the request frames the broker reads (size, key,
// version, correlation id) and closes the connection when the broker
// writes the response to a request chosen by its responseDropper.
type dropConn struct {
	net.Conn
	d *responseDropper

	mu   sync.Mutex
	hdr  []byte         // header bytes of the current request frame read so far
	left int            // bytes of the current frame after its header still to read
	drop map[int32]bool // correlation ids whose response is dropped
}

const frameHeaderBytes = 12 // size, key, version, correlation id

func (c *dropConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.mu.Lock()
	defer c.mu.Unlock()
	for rest := b[:n]; len(rest) > 0; {
		if c.left > 0 {
			k := min(c.left, len(rest))
			c.left, rest = c.left-k, rest[k:]
			continue
		}
		k := min(frameHeaderBytes-len(c.hdr), len(rest))
		c.hdr, rest = append(c.hdr, rest[:k]...), rest[k:]
		if len(c.hdr) < frameHeaderBytes {
			continue
		}
		size := int(binary.BigEndian.Uint32(c.hdr))
		key := int32(binary.BigEndian.Uint16(c.hdr[4:]))
		corr := int32(binary.BigEndian.Uint32(c.hdr[8:]))
		c.left, c.hdr = size-(frameHeaderBytes-4), c.hdr[:0]
		if key == c.d.key.Load() && c.d.seen.Add(1) == c.d.n.Load() {
			c.drop[corr] = true
		}
	}
	return n, err
}

// Write closes the connection instead of writing a chosen response; kfake
// writes each response frame with one Write.
func (c *dropConn) Write(b []byte) (int, error) {
	if len(b) >= 8 {
		c.mu.Lock()
		drop := c.drop[int32(binary.BigEndian.Uint32(b[4:]))]
		c.mu.Unlock()
		if drop {
			c.d.count.Add(1)
			_ = c.Conn.Close()
			return 0, net.ErrClosed
		}
	}
	return c.Conn.Write(b)
}
