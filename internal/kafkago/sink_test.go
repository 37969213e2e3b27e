package kafkago_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/kafkago"
)

// heldProduce holds the first produce requests c receives, each until its
// release channel is closed, while c goes on serving the others, and
// records the partitions of every produce request, "topic/partition", in
// the order received.
type heldProduce struct {
	arrived []chan struct{} // arrived[i] is closed once request i (from 0) arrived
	release []chan struct{}
	first   chan struct{} // arrived[0]
	mu      sync.Mutex
	reqs    [][]string
}

// holdFirstProduce holds the first produce request until h.release[0] is
// closed.
func holdFirstProduce(c *kfake.Cluster) *heldProduce { return holdProduce(c, 1) }

// holdProduce holds the first n produce requests. c must be made with
// kfake.SleepOutOfOrder (internal/crashtest's TestSleepOutOfOrder says why).
func holdProduce(c *kfake.Cluster, n int) *heldProduce {
	h := &heldProduce{}
	for range n {
		h.arrived = append(h.arrived, make(chan struct{}))
		h.release = append(h.release, make(chan struct{}))
	}
	h.first = h.arrived[0]
	c.ControlKey(int16(kmsg.Produce), func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		var parts []string
		for _, rt := range r.(*kmsg.ProduceRequest).Topics {
			for _, rp := range rt.Partitions {
				parts = append(parts, fmt.Sprintf("%s/%d", rt.Topic, rp.Partition))
			}
		}
		h.mu.Lock()
		h.reqs = append(h.reqs, parts)
		i := len(h.reqs) - 1
		h.mu.Unlock()
		if i < n {
			close(h.arrived[i])
			c.SleepControl(func() { <-h.release[i] })
		}
		return nil, nil, false // the cluster answers
	})
	return h
}

func (h *heldProduce) requests() [][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.reqs)
}

// awaitQueued waits until n batches wait in tg for a request.
func awaitQueued(ctx context.Context, t *testing.T, tg *kafkago.Target, n int) {
	t.Helper()
	for tg.Queued() != n {
		select {
		case <-ctx.Done():
			t.Fatalf("%d batches queued, want %d", tg.Queued(), n)
		case <-time.After(time.Millisecond):
		}
	}
}

type produced struct {
	acked int
	end   int64
	err   error
}

// produceEach produces recs to each of ps at once, each partition's first
// request, and returns their answers once all have come.
func produceEach(ctx context.Context, tg *kafkago.Target, ps []catchup.Partition, recs []catchup.Record) chan map[catchup.Partition]produced {
	out := make(chan map[catchup.Partition]produced, 1)
	var mu sync.Mutex
	var wg sync.WaitGroup
	got := map[catchup.Partition]produced{}
	for _, p := range ps {
		wg.Go(func() {
			acked, end, err := tg.Produce(ctx, p, recs, nil)
			mu.Lock()
			got[p] = produced{acked, end, err}
			mu.Unlock()
		})
	}
	go func() { wg.Wait(); out <- got }()
	return out
}

// TestProduceSharesRequests: the partitions a broker leads share produce
// requests. While a request to the broker is in flight, the batches that
// come wait, and go together: RequestBatches of them at once, in a request of
// their own, the rest in the next request once the first is answered; each
// topic once in a request. Each partition gets its own answer and its
// records land whole at its own offsets. With a request per partition the
// broker would receive 12.
func TestProduceSharesRequests(t *testing.T) {
	ctx := testContext(t)
	kafkago.SetPatience(t, time.Hour) // the batches behind the held request wait for it
	c := newCluster(t, kfake.SeedTopics(6, "t", "u"), kfake.SleepOutOfOrder())
	tg := newTarget(t, c, config.Producer{})
	h := holdFirstProduce(c)
	recs := copyRecords(3, time.UnixMilli(1_700_000_000_000))

	first := catchup.Partition{Topic: "t"}
	firstDone := produceEach(ctx, tg, []catchup.Partition{first}, recs)
	<-h.first
	var rest []catchup.Partition
	for i := range int32(6) {
		for _, topic := range []string{"u", "t"} {
			if p := (catchup.Partition{Topic: topic, Partition: i}); p != first {
				rest = append(rest, p)
			}
		}
	}
	restDone := produceEach(ctx, tg, rest, recs)
	full := len(rest) / kafkago.RequestBatches
	for len(h.requests()) != 1+full || tg.Queued() != len(rest)%kafkago.RequestBatches {
		select {
		case <-ctx.Done():
			t.Fatalf("produce requests %v and %d batches queued while the first is in flight; want %d full requests and %d queued",
				h.requests(), tg.Queued(), full, len(rest)%kafkago.RequestBatches)
		case <-time.After(time.Millisecond):
		}
	}
	close(h.release[0])

	got := <-firstDone
	for p, r := range <-restDone {
		got[p] = r
	}
	for p, r := range got {
		if r.err != nil || r.acked != len(recs) || r.end != int64(len(recs)) {
			t.Errorf("Produce %s = %d, %d, %v; want %d, %d, nil", p, r.acked, r.end, r.err, len(recs), len(recs))
		}
	}
	reqs := h.requests()
	if want := 1 + (len(rest)+kafkago.RequestBatches-1)/kafkago.RequestBatches; len(reqs) != want {
		t.Fatalf("%d produce requests %v, want %d: the first, then the %d waiting batches %d at a time",
			len(reqs), reqs, want, len(rest), kafkago.RequestBatches)
	}
	seen := map[string]int{}
	for i, req := range reqs {
		if i > 0 && len(req) != min(kafkago.RequestBatches, len(rest)-(i-1)*kafkago.RequestBatches) {
			t.Errorf("request %d carries %v, want %d partitions", i, req, kafkago.RequestBatches)
		}
		for _, p := range req {
			seen[p]++
		}
	}
	if len(seen) != 12 {
		t.Errorf("requests %v carry %d partitions, want each of the 12", reqs, len(seen))
	}
	for p, n := range seen {
		if n != 1 {
			t.Errorf("%s in %d requests, want 1", p, n)
		}
	}
	for _, p := range append(rest, first) {
		if diff := cmp.Diff(atTarget(recs, 0), consumeAll(ctx, t, c, p, len(recs))); diff != "" {
			t.Errorf("%s read back by franz-go (-want +got):\n%s", p, diff)
		}
	}
}

// TestProduceSharedFaults: what a shared request's faults do to each of its
// partitions. A partition the broker refuses gets its own error, not
// appended, while the others are appended; a connection lost with the
// request written leaves each partition's outcome unknown; a batch whose
// caller gives up while it waits is withdrawn, never sent.
func TestProduceSharedFaults(t *testing.T) {
	kafkago.SetPatience(t, time.Hour) // the batches behind the held request wait for it
	recs := copyRecords(3, time.UnixMilli(1_700_000_000_000))
	ps := []catchup.Partition{{Topic: "t", Partition: 1}, {Topic: "t", Partition: 2}}
	for _, tc := range []struct {
		name       string
		fault      func(c *kfake.Cluster)
		want       []error // each of ps: nil (appended) or the error class
		written    []int64 // each of ps: the records it holds afterwards
		idempotent bool
	}{
		{"one partition refused", func(c *kfake.Cluster) {
			c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "t", Partitions: []int32{1}, Err: kerr.NotEnoughReplicas})
		}, []error{catchup.ErrRetriable, nil}, []int64{0, 3}, false},
		// Appended, then REQUEST_TIMED_OUT for both: each partition's
		// outcome is unknown; an idempotent producer sends each batch
		// again, identical, and the broker keeps the first copy.
		{"timed out after the append", timeOutSharedRequest,
			[]error{catchup.ErrUnknownOutcome, catchup.ErrUnknownOutcome}, []int64{3, 3}, false},
		{"timed out after the append, idempotent", timeOutSharedRequest, []error{nil, nil}, []int64{3, 3}, true},
		// The connection closed after the request was written: unknown.
		{"connection dropped", func(c *kfake.Cluster) {
			dropped := false // control functions run one at a time
			c.ControlKey(int16(kmsg.Produce), func(r kmsg.Request) (kmsg.Response, error, bool) {
				c.KeepControl()
				if dropped || len(r.(*kmsg.ProduceRequest).Topics[0].Partitions) < 2 {
					return nil, nil, false
				}
				dropped = true
				return nil, errors.New("drop the connection"), true
			})
		}, []error{catchup.ErrUnknownOutcome, catchup.ErrUnknownOutcome}, []int64{0, 0}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			c := newCluster(t, kfake.SeedTopics(3, "t"), kfake.SleepOutOfOrder())
			tg := newTarget(t, c, config.Producer{Idempotent: &tc.idempotent})
			h := holdFirstProduce(c)
			firstDone := produceEach(ctx, tg, []catchup.Partition{{Topic: "t"}}, recs)
			<-h.first
			tc.fault(c)
			done := produceEach(ctx, tg, ps, recs)
			awaitQueued(ctx, t, tg, len(ps))
			close(h.release[0])
			if r := (<-firstDone)[catchup.Partition{Topic: "t"}]; r.err != nil {
				t.Fatalf("the first request: %v", r.err)
			}
			got := <-done
			if reqs := h.requests(); len(reqs) < 2 || len(reqs[1]) != len(ps) {
				t.Fatalf("produce requests %v, want the first and one of %v", reqs, ps)
			}
			for i, p := range ps {
				r := got[p]
				switch want := tc.want[i]; {
				case want == nil && (r.err != nil || r.acked != len(recs)):
					t.Errorf("%s: Produce = %d, %v; want %d appended", p, r.acked, r.err, len(recs))
				case want != nil && (!errors.Is(r.err, want) || r.acked != 0):
					t.Errorf("%s: Produce = %d, %v; want 0 and %v", p, r.acked, r.err, want)
				}
				written := tc.written[i]
				if ends, err := tg.EndOffsets(ctx, []catchup.Partition{p}); err != nil || ends[p] != written {
					t.Errorf("end of %s = %d, %v; want %d", p, ends[p], err, written)
				}
			}
			if tc.idempotent && tg.Resent() == 0 {
				t.Error("no batch was sent again")
			}
		})
	}

	t.Run("caller gives up while queued", func(t *testing.T) {
		ctx := testContext(t)
		c := newCluster(t, kfake.SeedTopics(3, "t"), kfake.SleepOutOfOrder())
		tg := newTarget(t, c, config.Producer{})
		h := holdFirstProduce(c)
		firstDone := produceEach(ctx, tg, []catchup.Partition{{Topic: "t"}}, recs)
		<-h.first
		quit, cancel := context.WithCancel(ctx)
		done := produceEach(quit, tg, ps[:1], recs)
		awaitQueued(ctx, t, tg, 1)
		cancel()
		r := (<-done)[ps[0]]
		if !errors.Is(r.err, catchup.ErrRetriable) || r.acked != 0 {
			t.Errorf("Produce cancelled while queued = %d, %v; want 0 and a retriable error (not sent)", r.acked, r.err)
		}
		if n := tg.Queued(); n != 0 {
			t.Errorf("%d batches still queued after their caller gave up", n)
		}
		close(h.release[0])
		<-firstDone
		// Nothing more is sent: the broker gets the first request only.
		if _, _, err := tg.Produce(ctx, catchup.Partition{Topic: "t"}, recs, nil); err != nil {
			t.Fatal(err)
		}
		if reqs := h.requests(); len(reqs) != 2 || slices.Contains(reqs[1], "t/1") {
			t.Errorf("produce requests %v, want the first and one of t/0: t/1 was withdrawn", reqs)
		}
		ends, err := tg.EndOffsets(ctx, ps[:1])
		if err != nil || ends[ps[0]] != 0 {
			t.Errorf("end of %s = %d, %v; want 0", ps[0], ends[ps[0]], err)
		}
	})
}

// timeOutSharedRequest makes c append the next produce request for t's
// partitions 1 and 2, then answer REQUEST_TIMED_OUT for each.
func timeOutSharedRequest(c *kfake.Cluster) {
	c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "t", Partitions: []int32{1, 2}, Err: kerr.RequestTimedOut})
}

// TestProduceRegroups: partitions that copy side by side keep sharing
// requests. After an answer, the sink waits for the partitions it carried
// to queue their next batches, instead of sending the first one back on
// its own and the others together behind it (a request for every 1.5
// batches: 20 here).
func TestProduceRegroups(t *testing.T) {
	ctx := testContext(t)
	// Long enough for a caller under the race detector on a loaded
	// machine: the test is about what the wait does, not its length.
	kafkago.SetRegroup(t, 100*time.Millisecond)
	c := newCluster(t, kfake.SeedTopics(3, "t"))
	tg := newTarget(t, c, config.Producer{BatchRecords: 1})
	requests := countRequests(c, kmsg.Produce)
	const perPartition = 10
	recs := copyRecords(perPartition, time.UnixMilli(1_700_000_000_000))
	var wg sync.WaitGroup
	for i := range int32(3) {
		wg.Go(func() {
			p := catchup.Partition{Topic: "t", Partition: i}
			if acked, _, err := produceAll(ctx, tg, p, recs); err != nil || acked != perPartition {
				t.Errorf("%s: Produce = %d, %v", p, acked, err)
			}
		})
	}
	wg.Wait()
	// A request each round, and the first partition's first batch alone:
	// the others queue behind it.
	if n := requests.Load(); n > perPartition+1 {
		t.Errorf("%d produce requests for %d batches of 3 partitions copied side by side, want at most %d",
			n, 3*perPartition, perPartition+1)
	}
}

// TestProduceSharedGiveUp: a request whose callers give up. While one of
// them still waits, the request goes on and every caller gets its answer;
// once all have given up, it is cut off, and each gets an outcome unknown
// (the request was written) without waiting for the broker.
func TestProduceSharedGiveUp(t *testing.T) {
	kafkago.SetPatience(t, time.Hour) // the batches behind the held request wait for it
	recs := copyRecords(3, time.UnixMilli(1_700_000_000_000))
	ps := []catchup.Partition{{Topic: "t", Partition: 1}, {Topic: "t", Partition: 2}}
	for _, all := range []bool{false, true} {
		t.Run(fmt.Sprintf("all=%t", all), func(t *testing.T) {
			ctx := testContext(t)
			c := newCluster(t, kfake.SeedTopics(3, "t"), kfake.SleepOutOfOrder())
			tg := newTarget(t, c, config.Producer{Idempotent: new(false)})
			h := holdProduce(c, 2)
			firstDone := produceEach(ctx, tg, []catchup.Partition{{Topic: "t"}}, recs)
			<-h.arrived[0]
			quit, cancel := context.WithCancel(ctx)
			gone := produceEach(quit, tg, ps[:1], recs)
			stay := ctx
			if all {
				stay = quit
			}
			staying := produceEach(stay, tg, ps[1:], recs)
			awaitQueued(ctx, t, tg, 2)
			close(h.release[0])
			<-h.arrived[1] // the two batches, in one request, held
			cancel()
			if all {
				for _, done := range []chan map[catchup.Partition]produced{gone, staying} {
					for p, r := range <-done {
						if !errors.Is(r.err, catchup.ErrUnknownOutcome) || r.acked != 0 {
							t.Errorf("%s: Produce = %d, %v; want 0 and an unknown outcome: the request was cut off after it was written", p, r.acked, r.err)
						}
					}
				}
			}
			close(h.release[1])
			if !all {
				for _, done := range []chan map[catchup.Partition]produced{gone, staying} {
					for p, r := range <-done {
						if r.err != nil || r.acked != len(recs) {
							t.Errorf("%s: Produce = %d, %v; want %d appended: another caller waited for the request", p, r.acked, r.err, len(recs))
						}
					}
				}
			}
			<-firstDone
			if reqs := h.requests(); len(reqs) != 2 || len(reqs[1]) != 2 {
				t.Errorf("produce requests %v, want the first and one of both partitions", reqs)
			}
		})
	}
}

// TestProducePatience: a batch queued behind a request that is not
// answered goes in a request of its own after SinkPatience, instead of
// waiting for it (a follower stalled under acks all, up to the timeout).
func TestProducePatience(t *testing.T) {
	ctx := testContext(t)
	c := newCluster(t, kfake.SeedTopics(3, "t"), kfake.SleepOutOfOrder())
	tg := newTarget(t, c, config.Producer{})
	h := holdFirstProduce(c)
	recs := copyRecords(3, time.UnixMilli(1_700_000_000_000))
	firstDone := produceEach(ctx, tg, []catchup.Partition{{Topic: "t"}}, recs)
	<-h.first
	p := catchup.Partition{Topic: "t", Partition: 1}
	start := time.Now()
	r := (<-produceEach(ctx, tg, []catchup.Partition{p}, recs))[p]
	if r.err != nil || r.acked != len(recs) {
		t.Errorf("Produce %s behind a held request = %d, %v; want %d appended", p, r.acked, r.err, len(recs))
	}
	if waited := time.Since(start); waited < kafkago.SinkPatience() {
		t.Errorf("%s went after %v, before the patience of %v was out", p, waited, kafkago.SinkPatience())
	}
	close(h.release[0])
	<-firstDone
}
