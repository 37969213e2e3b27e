package replicate

import (
	"context"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// Source is the source cluster as the engine needs it. Implementations:
// kafkago.Source. Every method is safe for concurrent use.
type Source interface {
	// Partitions lists the partitions of every topic for which match returns
	// true, sorted. Internal topics (names starting with "__") are never
	// listed, whatever match says.
	Partitions(ctx context.Context, match func(topic string) bool) ([]catchup.Partition, error)

	// ListOffsets returns the watermarks of ps, in the order of ps, with one
	// request per leader broker, not per partition.
	ListOffsets(ctx context.Context, ps []catchup.Partition) ([]catchup.Offsets, error)

	// OffsetsForTime returns, for each of ps, the first offset whose record
	// timestamp is at or after t, or the high watermark if there is none.
	OffsetsForTime(ctx context.Context, ps []catchup.Partition, t time.Time) (map[catchup.Partition]int64, error)

	// Fetch reads p from offset from, up to about maxBytes. It returns the
	// data records with offsets at or above from, in offset order, without
	// transaction markers and (under read_committed) without aborted records,
	// and Next, the offset to fetch next: one past the last offset the
	// response covered, records, markers and compacted holes alike. Next
	// equals from when there was nothing to read yet. If from is below the
	// log start it returns a *catchup.GapError; if from is above the log end
	// it returns an error wrapping catchup.ErrTopicRecreated. Transient errors
	// (leader moved, connection lost) wrap catchup.ErrRetriable. The records
	// belong to the caller until it releases them (catchup.Fetched.Release).
	Fetch(ctx context.Context, p catchup.Partition, from int64, maxBytes int32) (catchup.Fetched, error)
}

// Target is the target cluster as the engine needs it. Implementations:
// kafkago.Target. Every method is safe for concurrent use.
type Target interface {
	// PartitionCounts returns the partition count of each of topics that
	// exists on the target; a missing topic is absent from the map.
	PartitionCounts(ctx context.Context, topics []string) (map[string]int, error)

	// EndOffsets returns the high watermark of each of ps.
	EndOffsets(ctx context.Context, ps []catchup.Partition) (map[catchup.Partition]int64, error)

	// LogEnd returns what the leader of p holds: its log end offset (one
	// past the last record it appended, replicated to the other in-sync
	// replicas or not), then its high watermark, read after the log end,
	// and the leader epoch the log end belongs to. On a replicated topic
	// whose followers lag, End is above HighWatermark, and the records in
	// between are invisible to readers (ReadBack, consumers) until they are
	// replicated or truncated by a new leader. Transient errors (a leader
	// moving, a stale epoch) wrap catchup.ErrRetriable.
	LogEnd(ctx context.Context, p catchup.Partition) (catchup.LogEnd, error)

	// LogEnds returns the log end offsets and leader epochs (LogEnd's End
	// and Epoch; HighWatermark -1, not read) of the leaders of many
	// partitions at once, in one request per leader broker: those of ps
	// that answered. A partition absent from the map (its leader moving, a
	// request that failed) is for the caller to read with LogEnd; the error
	// is for a call that read nothing.
	LogEnds(ctx context.Context, ps []catchup.Partition) (map[catchup.Partition]catchup.LogEnd, error)

	// Produce appends the leading records of recs to p in ONE produce
	// request, as many as the batch limits allow (at least one), preserving
	// key, value (nil and empty apart), headers and timestamp. With stamp
	// set, each record is written with one more header after its own, the
	// provenance header catchup.ProvenanceHeader with the value
	// catchup.AppendProvenance of stamp at the record's Offset; recs are
	// not changed. It returns
	// acked, the number of records the acknowledged request held (0 on
	// error), and end, the target end offset after it. One request per call
	// lets the caller check its lease and its deadline before every request.
	// An error wrapping catchup.ErrUnknownOutcome means the request may have
	// been appended; one wrapping catchup.ErrRetriable means it was not.
	// Produce never retries by itself.
	Produce(ctx context.Context, p catchup.Partition, recs []catchup.Record, stamp *catchup.Provenance) (acked int, end int64, err error)

	// RequestLen returns how many leading records of parts, taken in order
	// as one run, one Produce request to topic holds: what Produce would
	// ack of them, at least one. It lets the caller hold back a last
	// request that would not be full and send it with the next fetch's
	// records.
	RequestLen(topic string, stamp *catchup.Provenance, parts ...[]catchup.Record) int

	// ReadBack returns the records of the record batch that holds offset
	// end-1 of p (all of them, also those below end-1) and base, the offset
	// of that batch's first offset, so that a caller can read a partition
	// backwards batch by batch. It reads uncommitted data. With end at or
	// below the log start it returns no records and base = end.
	ReadBack(ctx context.Context, p catchup.Partition, end int64) (recs []catchup.Record, base int64, err error)
}
