package kafkago

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	meta "github.com/segmentio/kafka-go/protocol/metadata"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestReplacedTransportStopsRefreshing pins that a Transport watch replaced
// stops its background metadata refresh even when a round trip took it
// just before the replacement and starts on it just after (roundTrip
// between taking the Transport and RoundTrip, or its Metadata after a
// failed request; an admin call through Client). kafka-go makes such a
// round trip a new connection pool on the closed Transport, with its own
// refresh every metadataTTL, that nothing closes: a warm Lambda or a
// `run --every` process would ask for metadata every second, per broker,
// for as long as it lives.
func TestReplacedTransportStopsRefreshing(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "a", "b"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var stale atomic.Int32 // metadata requests for topic a alone: the refresh of the replaced Transport
	c.ControlKey(int16(kmsg.Metadata), func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if req := r.(*kmsg.MetadataRequest); len(req.Topics) == 1 && req.Topics[0].Topic != nil && *req.Topics[0].Topic == "a" {
			stale.Add(1)
		}
		return nil, nil, false
	})
	cl, err := Dial(Settings{Name: "t", Brokers: c.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := t.Context()
	cl.watch([]string{"a"})
	if _, err := cl.Client().Metadata(ctx, &kafka.MetadataRequest{Topics: []string{"a"}}); err != nil {
		t.Fatal(err)
	}

	tripOnReplaced(ctx, t, cl, func() { cl.watch([]string{"b"}) })

	time.Sleep(2 * metadataTTL) // what was in flight at the replacement ends
	stale.Store(0)
	time.Sleep(4 * metadataTTL)
	if n := stale.Load(); n != 0 {
		t.Errorf("%d metadata refreshes of the replaced Transport in %v; want none", n, 4*metadataTTL)
	}
}

// tripOnReplaced takes the Cluster's Transport as a round trip does, lets
// replace run, then makes a round trip on what it took.
func tripOnReplaced(ctx context.Context, t *testing.T, cl *Cluster, replace func()) {
	t.Helper()
	p := cl.use()
	defer p.done()
	replace()
	if _, err := p.transport.RoundTrip(ctx, cl.addr, &meta.Request{TopicNames: []string{"b"}}); err != nil {
		t.Fatal(err)
	}
}
