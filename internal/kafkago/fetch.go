package kafkago

import (
	"context"
	"time"

	"github.com/segmentio/kafka-go/protocol/fetch"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/kafkago/wire"
)

// Fetch requests wait at most fetchMaxWait for a first byte, so that a fetch
// at the high watermark returns promptly.
const fetchMaxWait = 250 * time.Millisecond

// fetchRequestMaxBytes is the request-level byte limit of a fetch (the Java
// consumer's fetch.max.bytes). The partition limit bounds the response of
// the one partition asked for; a request limit equal to it made kfake cut
// the response at the request level, which leaves the aborted transactions
// out, so that aborted records were read as committed.
const fetchRequestMaxBytes = 50 << 20

// fetchRaw sends one sessionless fetch for p at offset from and returns
// the partition's part of the response, undecoded, in a buffer from rc
// (nil: allocated). Errors are classified with readError; broker error
// codes are left in wire.Fetched.Code. The request is wire's; kafka-go's
// fetch.Request only routes it to the partition leader.
func (c *Cluster) fetchRaw(ctx context.Context, p catchup.Partition, from int64, maxBytes int32, isolation int8, rc *wire.Recycler) (wire.Fetched, error) {
	route := &fetch.Request{Topics: []fetch.RequestTopic{{Topic: p.Topic, Partitions: []fetch.RequestPartition{{Partition: p.Partition}}}}}
	req := &wire.FetchRequest{Partition: p, Offset: from, MaxWait: fetchMaxWait, MaxBytes: maxBytes,
		RequestMaxBytes: max(maxBytes, fetchRequestMaxBytes), Isolation: isolation}
	e := c.newWireExchange(route, req)
	e.raw = true
	e.recycle = rc
	res, err := c.roundTrip(ctx, e, requestTimeout)
	if err != nil {
		return wire.Fetched{}, c.readError(ctx, err)
	}
	body := res.(*rawResponse).body
	fr := wire.FetchResponse{Partition: p}
	if err := fr.ReadFrom(body, e.version); err != nil {
		return wire.Fetched{}, mark(err, catchup.ErrRetriable)
	}
	fr.Fetched.Body = body
	return fr.Fetched, nil
}
