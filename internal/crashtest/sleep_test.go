package crashtest

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestSleepOutOfOrder pins what every slowed kfake cluster in the repository
// relies on. They are made with kfake.SleepOutOfOrder, because kfake's
// in-order queue of slept requests races: a waiter goroutine that has just
// emptied a connection's queue is still running when the next slept request
// finds the queue empty and starts a second one, and both then take that
// request (the race detector reported it from kfake's waitQueue under
// TestCrashSlowTarget). Out of order, each slept request wakes exactly one
// waiter. What "out of order" would cost, a connection's requests handled in
// another order than sent, cannot happen: kfake hands a connection's next
// request to the cluster only once the previous response is written, as a
// broker does. This test sends a second produce request on the connection
// while the first sleeps in the broker, and requires them handled in order.
func TestSleepOutOfOrder(t *testing.T) {
	c := newCluster(t, kfake.SeedTopics(2, "order"), kfake.SleepOutOfOrder())
	var (
		mu      sync.Mutex
		handled []int32 // partitions of the produce requests, in the order handled
		slept   atomic.Bool
		writes  atomic.Int32 // produce requests written by the client
		reads   atomic.Int32 // produce responses read by the client
		overlap atomic.Bool  // a produce request written while one was unanswered
	)
	c.ControlKey(int16(kmsg.Produce), func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if !slept.Swap(true) {
			c.SleepControl(func() { time.Sleep(300 * time.Millisecond) })
		}
		mu.Lock()
		handled = append(handled, r.(*kmsg.ProduceRequest).Topics[0].Partitions[0].Partition)
		mu.Unlock()
		return nil, nil, false
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ProducerLinger(0),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableIdempotentWrite(), kgo.MaxProduceRequestsInflightPerBroker(5),
		kgo.WithHooks(produceHooks{writes: &writes, reads: &reads, overlap: &overlap}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	produce := func(p int32) {
		wg.Add(1)
		cl.Produce(ctx, &kgo.Record{Topic: "order", Partition: p, Value: []byte("x")}, func(_ *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				t.Errorf("produce to partition %d: %v", p, err)
			}
		})
	}
	produce(0)
	for !slept.Load() {
		time.Sleep(time.Millisecond)
	}
	produce(1) // written while the first sleeps in the broker
	wg.Wait()

	if !overlap.Load() {
		t.Fatalf("the client never had two produce requests on the connection at once: the test proves nothing")
	}
	if want := []int32{0, 1}; !slices.Equal(handled, want) {
		t.Errorf("produce requests handled for partitions %v, want %v: kfake no longer handles a connection's requests in the order sent, and SleepOutOfOrder lets a slowed target reorder them", handled, want)
	}
}

// produceHooks sees, on the client's side, whether a produce request was
// written while another was still unanswered on the broker's connection.
type produceHooks struct {
	writes, reads *atomic.Int32
	overlap       *atomic.Bool
}

func (h produceHooks) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key == int16(kmsg.Produce) && err == nil && h.writes.Add(1) > h.reads.Load()+1 {
		h.overlap.Store(true)
	}
}

func (h produceHooks) OnBrokerRead(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key == int16(kmsg.Produce) && err == nil {
		h.reads.Add(1)
	}
}
