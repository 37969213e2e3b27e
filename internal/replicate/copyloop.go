package replicate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
)

// batch is what the fetch loop hands to the produce loop.
type batch struct {
	recs    []catchup.Record
	next    int64 // offset after the last offset this batch covers, at most the window end
	err     error
	retries int // fetches retried before this batch
	// anchor is, in the first batch of a fetch loop started for the anchor
	// check, the source record at next-1 when the fetch began with it (it is
	// not in recs); nil otherwise.
	anchor  *catchup.Record
	release func() // catchup.Fetched.Release of the fetch, or nil
}

// targetPartition is the partition of the target that pc.p is copied into.
func (pc *partitionCopy) targetPartition() catchup.Partition {
	return pc.e.targetPartition(pc.p)
}

// dropLooped removes the records that were copied from the target cluster
// (loop prevention) and counts them.
func (pc *partitionCopy) dropLooped(recs []catchup.Record) []catchup.Record {
	if pc.e.loopPrefix == "" {
		return recs
	}
	kept := -1 // records before kept are all kept, in place
	for i := range recs {
		looped := catchup.CopiedWith(&recs[i], pc.e.loopPrefix)
		switch {
		case looped && kept < 0:
			kept = i
			pc.res.LoopSkipped++
		case looped:
			pc.res.LoopSkipped++
		case kept >= 0:
			recs[kept] = recs[i]
			kept++
		}
	}
	if kept < 0 {
		return recs
	}
	return recs[:kept]
}

// copy copies [pc.next, to), fetching the next batch while the current one
// is produced, and commits on the way.
func (pc *partitionCopy) copy(ctx context.Context, to int64) error {
	e := pc.e
	if e.o.MaxDuration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.o.MaxDuration)
		defer cancel()
	}
	for pc.next < to {
		restart, err := pc.copyFrom(ctx, to)
		if err != nil && ctx.Err() != nil && pc.e.o.MaxDuration > 0 && !errors.Is(err, context.Canceled) {
			// The window's own duration ran out: a partial window, not a failure.
			// (When the run's deadline ran out too, copyPartition still sees it.)
			return nil
		}
		if err != nil || !restart {
			return err
		}
	}
	return nil
}

// copyFrom runs one fetch loop from pc.next. It returns restart true when the
// fetch position must jump (a gap skipped with on_gap: skip).
func (pc *partitionCopy) copyFrom(ctx context.Context, to int64) (restart bool, err error) {
	e := pc.e
	fctx, cancel := context.WithCancel(ctx)
	ch := make(chan batch) // the next batch is fetched while one is produced
	done := make(chan struct{})
	anchored := pc.state == stateAnchoring
	go func() {
		defer close(done)
		pc.fetchLoop(fctx, pc.next, to, anchored, ch)
	}()
	defer func() {
		cancel()
		for range ch { // let the fetch loop finish
		}
		<-done
	}()
	var first <-chan readBack
	if anchored {
		first = pc.readBackEnd(fctx) // while the first batch is fetched
	}
	// A batch's last records that would not fill a produce request are
	// held back and sent with the head of the next batch: a fetch seldom
	// ends where a request does, and each short request costs a round trip
	// to the target and its brokers a request's work.
	held := &pc.held
	held.drop()
	for b := range ch {
		pc.res.Retries += b.retries
		if pc.state == stateAnchoring {
			if err := pc.passAnchor(ctx, b.anchor, first); err != nil {
				return false, err
			}
		}
		if b.err != nil {
			if err := pc.flush(ctx, held); err != nil {
				return false, errors.Join(b.err, err)
			}
			var gap *catchup.GapError
			if errors.As(b.err, &gap) && e.o.Policy.SkipGaps && gap.From == pc.next {
				pc.res.Gap = gap
				pc.pendGap = &checkpoint.Gap{From: gap.From, To: gap.To, At: e.o.Now()}
				pc.next = gap.To
				return true, pc.commitProgress()
			}
			return false, b.err
		}
		recs := pc.dropLooped(b.recs)
		var err error
		if len(held.recs) > 0 {
			recs, err = pc.bridge(ctx, held, recs)
		}
		var tail []catchup.Record
		if err == nil {
			tail, err = pc.produce(ctx, recs, b.next < to)
		}
		if errors.Is(err, errWindowFull) {
			// pc.next is after the last record acknowledged.
			b.drop()
			return false, pc.commitProgress()
		} else if err != nil {
			return false, err
		}
		if len(tail) > 0 {
			held.keep(tail, b.next) // pc.next stays after the last record acknowledged
		} else {
			pc.next = b.next
		}
		b.drop() // nothing refers to the records once they are produced or kept
		if err := pc.commitIfDue(); err != nil {
			return false, err
		}
		if e.o.MaxBytes > 0 && pc.res.Bytes >= e.o.MaxBytes {
			return false, nil
		}
	}
	return false, ctx.Err()
}

// drop releases the fetch the batch's records came from, if any.
func (b *batch) drop() {
	if b.release != nil {
		b.release()
		b.release = nil
	}
}

// heldTail is the tail of a fetched batch that the copy holds back for the
// next batch's records to fill its produce request: copied, so that the
// fetch is released at once and no more than two fetches per partition
// are in memory (the one being produced, the next being fetched).
type heldTail struct {
	recs []catchup.Record // in buf and hdrs
	next int64            // the batch's next: where the copy goes on once recs are acknowledged
	buf  []byte           // the records' keys, values and header values
	hdrs []catchup.Header // the records' headers
}

// keep holds a copy of recs, the tail of the batch whose next is next.
func (h *heldTail) keep(recs []catchup.Record, next int64) {
	n, nh := 0, 0
	for i := range recs {
		n += recs[i].Size()
		nh += len(recs[i].Headers)
	}
	// Grown once, so that the slices taken below stay in place.
	h.buf, h.hdrs = slices.Grow(h.buf[:0], n), slices.Grow(h.hdrs[:0], nh)
	h.recs, h.next = append(h.recs[:0], recs...), next
	for i := range h.recs {
		r := &h.recs[i]
		r.Key, r.Value = h.clone(r.Key), h.clone(r.Value)
		if r.Headers == nil {
			continue
		}
		from := len(h.hdrs)
		for _, hd := range r.Headers {
			h.hdrs = append(h.hdrs, catchup.Header{Key: strings.Clone(hd.Key), Value: h.clone(hd.Value)})
		}
		r.Headers = h.hdrs[from:len(h.hdrs):len(h.hdrs)]
	}
}

// clone copies b into h.buf, keeping nil apart from empty.
func (h *heldTail) clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	from := len(h.buf)
	h.buf = append(h.buf, b...)
	return h.buf[from:len(h.buf):len(h.buf)]
}

// drop forgets the held records; their memory is reused by the next keep.
func (h *heldTail) drop() {
	clear(h.recs)
	h.recs = h.recs[:0]
}

// bridge sends the held records with as many of recs, the next batch's
// records, as fill one produce request, and returns the rest of recs.
func (pc *partitionCopy) bridge(ctx context.Context, held *heldTail, recs []catchup.Record) ([]catchup.Record, error) {
	n := pc.e.o.Target.RequestLen(pc.targetPartition().Topic, pc.stamp(), held.recs, recs)
	h := min(max(n-len(held.recs), 0), len(recs))
	pc.bridged = append(append(pc.bridged[:0], held.recs...), recs[:h]...)
	_, err := pc.produce(ctx, pc.bridged, false)
	clear(pc.bridged) // it refers to the fetches' memory
	if err != nil {
		return nil, err
	}
	if h == 0 {
		pc.next = held.next
	}
	held.drop()
	return recs[h:], nil
}

// flush sends the held records, if any, and goes on after their batch.
func (pc *partitionCopy) flush(ctx context.Context, held *heldTail) error {
	if len(held.recs) == 0 {
		return nil
	}
	if _, err := pc.produce(ctx, held.recs, false); err != nil {
		return err
	}
	pc.next = held.next
	held.drop()
	return nil
}

// fetchLoop fetches [from, to) into ch and closes it. An error is sent as the
// last batch. With anchor, the first fetch starts at from-1, and the record
// there, if the response begins with it, goes to the first batch's anchor
// field rather than its records.
func (pc *partitionCopy) fetchLoop(ctx context.Context, from, to int64, anchor bool, ch chan<- batch) {
	defer close(ch)
	e := pc.e
	r := e.retrier()
	send := func(b batch) bool {
		select {
		case ch <- b:
			return true
		case <-ctx.Done():
			return false
		}
	}
	off := from
	if anchor {
		off = from - 1
	}
	for off < to {
		f, err := e.o.Source.Fetch(ctx, pc.p, off, e.o.FetchBytes)
		var gap *catchup.GapError
		if off < from && errors.As(err, &gap) {
			if gap.To <= from {
				off = from // retention deleted the anchor only: nothing to compare
				continue
			}
			err = &catchup.GapError{Partition: gap.Partition, From: from, To: gap.To}
		}
		if err == nil && f.Next <= off {
			err = fmt.Errorf("fetch %s at offset %d: no records although the window ends at %d: %w",
				pc.p, off, to, catchup.ErrRetriable)
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, catchup.ErrRetriable) && r.again() {
				if !r.wait(ctx) {
					return
				}
				continue
			}
			send(batch{err: err, retries: r.n})
			return
		}
		recs := f.Records
		var a *catchup.Record
		if off < from && len(recs) > 0 && recs[0].Offset == off {
			a, recs = &recs[0], recs[1:]
		}
		if n := len(recs); n > 0 && recs[n-1].Offset >= to {
			recs = recs[:sort.Search(n, func(i int) bool { return recs[i].Offset >= to })]
		}
		next := min(f.Next, to)
		if !send(batch{recs: recs, next: next, retries: r.n, anchor: a, release: f.Release}) {
			return
		}
		r.reset()
		off = next
	}
}

// produce writes recs to the target, retrying what was not written and
// reconciling with the target what may have been. With hold (more records
// follow in the window), it stops before a last request that would not be
// full and returns its records, a tail of recs, unsent.
func (pc *partitionCopy) produce(ctx context.Context, recs []catchup.Record, hold bool) (tail []catchup.Record, err error) {
	e := pc.e
	tp := pc.targetPartition()
	r := e.retrier() // failed attempts in a row
	for len(recs) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("produce %s at offset %d: %w", tp, recs[0].Offset, err)
		}
		if e.o.MaxBytes > 0 && pc.res.Bytes >= e.o.MaxBytes {
			return nil, errWindowFull
		}
		if err := pc.keepLease(); err != nil {
			return nil, err
		}
		// One request's worth at a time, so that the lease is checked before
		// every produce request, not once per fetched batch.
		// The request is not cut off when ctx ends (see lasting): ctx only
		// stops the next one.
		n := pc.requestLen(recs)
		if hold && r.n == 0 && n == len(recs) && n < e.o.BatchRecords && pc.holdable(recs) &&
			e.o.Target.RequestLen(tp.Topic, pc.stamp(), recs) == n {
			return recs, nil // a request that would not be full: for the caller to fill
		}
		acked, end, err := e.o.Target.Produce(pc.lasting, tp, recs[:n], pc.stamp())
		if acked > 0 {
			pc.acked(recs[:acked], end)
			recs = recs[acked:]
			r.reset()
		}
		switch {
		case err == nil:
			continue
		case ctx.Err() != nil:
			// The outcome of the request in flight is unknown; it is not
			// committed, and the next run reconciles.
			if e.o.Provenance && errors.Is(err, catchup.ErrUnknownOutcome) {
				pc.enter(stateInDoubt)
			}
			return nil, fmt.Errorf("produce %s at offset %d: %w", tp, recs[0].Offset, ctx.Err())
		case errors.Is(err, catchup.ErrUnknownOutcome) && e.o.Provenance && pc.targetEnd >= 0:
			// Never retried blindly: find out what was appended first,
			// waiting out a target that is restarting.
			var n int
			rerr := pc.retry(ctx, func() (err error) {
				n, err = pc.reconcileProduce(ctx, recs)
				return err
			})
			if rerr != nil {
				pc.enter(stateInDoubt)
				return nil, errors.Join(err, rerr)
			}
			recs = recs[n:]
		case errors.Is(err, catchup.ErrRetriable), errors.Is(err, catchup.ErrUnknownOutcome):
			// Nothing was written, or provenance is off and a possible
			// duplicate is the price of not losing the records (docs/guarantees.md).
		default:
			return nil, fmt.Errorf("produce %s at offset %d: %w", tp, recs[0].Offset, err)
		}
		if len(recs) == 0 {
			break
		}
		if !r.again() {
			return nil, fmt.Errorf("produce %s at offset %d: giving up after %d retries: %w", tp, recs[0].Offset, e.o.Retries, err)
		}
		pc.res.Retries++
		e.o.Log.WarnContext(ctx, "produce retried", "pipeline", e.o.Pipeline, "topic", tp.Topic,
			"partition", tp.Partition, "offset", recs[0].Offset, "attempt", r.n, "error", err)
		if !r.wait(ctx) {
			return nil, fmt.Errorf("produce %s at offset %d: %w", tp, recs[0].Offset, ctx.Err())
		}
	}
	return nil, nil
}

// holdable says whether recs are few enough to hold back, copied, for the
// next fetch's records: at most a quarter of fetch_bytes, so that the copy
// costs little next to the fetch and a longer tail goes as a request of
// its own, at least a quarter full.
func (pc *partitionCopy) holdable(recs []catchup.Record) bool {
	n, most := 0, int(pc.e.o.FetchBytes)/4
	for i := range recs {
		if n += recs[i].Size(); n > most {
			return false
		}
	}
	return true
}

// errWindowFull stops produce when the window's bytes reached
// Options.MaxBytes with records left: pc.next is after the last one
// acknowledged.
var errWindowFull = errors.New("window max_bytes reached")

// requestLen is how many leading records of recs the next produce call
// sends: at most BatchRecords and, with MaxBytes, no more than it takes to
// reach the bytes left in the window (at least one), counted as countCopied
// counts them. So a window stops within one record of MaxBytes whatever the
// fetch size or the source's compression (a compressed fetch can decode to
// ten times its size).
func (pc *partitionCopy) requestLen(recs []catchup.Record) int {
	n := min(len(recs), pc.e.o.BatchRecords)
	if pc.e.o.MaxBytes <= 0 {
		return n
	}
	left := pc.e.o.MaxBytes - pc.res.Bytes
	for i := range n {
		if left -= pc.sizeAsWritten(&recs[i]); left <= 0 {
			return i + 1
		}
	}
	return n
}

// sizeAsWritten is r's size as counted in Result.Bytes: catchup.Record.Size
// plus, with provenance, the provenance header's key and value. The part
// of the header that is the same for every record is sized once
// (stampFixed); only the offset's digits are counted per record.
func (pc *partitionCopy) sizeAsWritten(r *catchup.Record) int64 {
	n := int64(r.Size())
	if pc.e.o.Provenance {
		n += int64(pc.stampFixed() + catchup.DecimalLen(r.Offset))
	}
	return n
}

// stampFixed is the length of the provenance header's key and of its value
// without the offset, for the records of pc.p.
func (pc *partitionCopy) stampFixed() int {
	if pc.stampLen == 0 {
		pc.stampLen = len(catchup.ProvenanceHeader) + catchup.ProvenancePrefixLen(pc.p, pc.e.o.Cluster)
	}
	return pc.stampLen
}

// stamp returns the provenance the target stamps on each record, nil
// without provenance.
func (pc *partitionCopy) stamp() *catchup.Provenance {
	if !pc.e.o.Provenance {
		return nil
	}
	return &catchup.Provenance{Cluster: pc.e.o.Cluster, Partition: pc.p}
}

// acked records that recs were written and the target ended at end.
func (pc *partitionCopy) acked(recs []catchup.Record, end int64) {
	pc.countCopied(recs)
	pc.next = recs[len(recs)-1].Offset + 1
	if end >= 0 {
		pc.targetEnd = end
	}
}

func (pc *partitionCopy) countCopied(recs []catchup.Record) {
	var n int64
	for i := range recs {
		n += pc.sizeAsWritten(&recs[i]) // as written: with the provenance header
		if ts := recs[i].Timestamp; ts.After(pc.res.Newest) {
			pc.res.Newest = ts
		}
	}
	pc.res.Copied += int64(len(recs))
	pc.res.Bytes += n
	pc.pendRecords += int64(len(recs))
	pc.pendBytes += n
	pc.e.progress(int64(len(recs)), n)
}
