package wire

import (
	"github.com/kafka-catchup/catchup/internal/catchup"
)

// Recycler keeps the memory of fetch responses for the next fetches: the
// response buffer, the record slice decoded from it and, for compressed
// batches, the buffer they were decompressed into. Each is a megabyte or
// more per fetch; allocated afresh, each is zeroed first and collected
// later, CPU spent on every fetch. The decompression buffer (about
// fetch_bytes: FetchLimit asks for less by the compression ratio)
// dominates a compressed copy's allocations, and since the garbage collector lets the heap grow to
// twice the live heap, allocating it per fetch would set a compressed
// read's peak RSS by the garbage rather than by what is live.
// Memory comes back when the caller of kafkago.Source.Fetch releases it
// (catchup.Fetched.Release), after the records were produced, except the
// response of a fetch whose records were all decompressed out of it
// (Decoded.BodyFree), which comes back once it is decoded; a fetch nobody
// releases is left to the garbage collector as before.
//
// Free lists rather than sync.Pools: a copy allocates fast enough to run a
// garbage collection every few fetches, and each empties a sync.Pool.
type Recycler struct {
	bodies   chan []byte
	records  chan []catchup.Record
	inflates chan []byte
}

// recycled is how many of each a Recycler keeps: two per partition copied
// at once (the default parallelism, 8), one being produced while the next
// is fetched.
const recycled = 16

// Bounds of what a Recycler keeps and hands out: buffers of a fetch_bytes
// raised far above the default are not held for the life of the process
// (16 of them would be a gigabyte at 64 MiB), and a small response (the
// anchor check's one record, a fetch at the log end) does not take, and
// keep, a megabyte buffer.
const (
	maxRecycledBody    = 8 << 20
	minRecycledBody    = 64 << 10
	maxRecycledRecords = 64 << 10 // records in a slice: 6.5 MiB of catchup.Record
	maxRecycledInflate = 16 << 20
)

// NewRecycler returns an empty Recycler.
func NewRecycler() *Recycler {
	return &Recycler{bodies: make(chan []byte, recycled), records: make(chan []catchup.Record, recycled),
		inflates: make(chan []byte, recycled)}
}

// Body returns a buffer of n bytes, its contents undefined. A nil
// Recycler allocates.
func (r *Recycler) Body(n int) []byte {
	if r != nil && n >= minRecycledBody {
		select {
		case b := <-r.bodies:
			if cap(b) >= n {
				return b[:n]
			}
		default:
		}
	}
	return make([]byte, n)
}

// Bodies returns how many response buffers the Recycler holds for the
// next fetches.
func (r *Recycler) Bodies() int { return len(r.bodies) }

// RecordSlice returns an empty record slice given back earlier, or nil.
// Decode uses it if it is large enough.
func (r *Recycler) RecordSlice() []catchup.Record {
	select {
	case s := <-r.records:
		return s[:0]
	default:
		return nil
	}
}

// InflateBuf returns an empty decompression buffer given back earlier, or
// nil. Decode uses it if it is large enough.
func (r *Recycler) InflateBuf() []byte {
	select {
	case b := <-r.inflates:
		return b[:0]
	default:
		return nil
	}
}

// Release gives a response buffer, a record slice and a decompression
// buffer (nil for none) back. The records' stale contents stay in the
// slice until overwritten: clearing them would cost what recycling saves,
// and what they point to is recycled too.
func (r *Recycler) Release(body []byte, recs []catchup.Record, inflate []byte) {
	if cap(body) >= minRecycledBody && cap(body) <= maxRecycledBody {
		select {
		case r.bodies <- body:
		default:
		}
	}
	if cap(recs) > 0 && cap(recs) <= maxRecycledRecords {
		select {
		case r.records <- recs[:0]:
		default:
		}
	}
	if cap(inflate) > 0 && cap(inflate) <= maxRecycledInflate {
		select {
		case r.inflates <- inflate[:0]:
		default:
		}
	}
}
