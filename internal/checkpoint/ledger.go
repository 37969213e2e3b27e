package checkpoint

import (
	"fmt"
	"slices"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// Ledger is the checkpoints of one pipeline by partition, with the Store
// contract's rules for changing them: the one place where the lease,
// commit, reset and verification rules of the stores that hold a pipeline
// in memory are written. MemStore changes a Ledger and is done; filestore
// changes one, then journals the partition's new state (and puts the old
// one back if that fails). dynamostore writes the same rules as DynamoDB
// condition expressions; checkpointtest holds all three to them.
//
// Each method changes at most the one partition it names. On an error it
// changes nothing and returns an error that wraps ErrLeased, ErrFenced or
// ErrRegress, without the operation's prefix (the store adds it). The
// Checkpoint it returns is a copy of the partition's new state. Values in
// a Ledger share no memory with those a method replaces, so a caller may
// keep the old value and put it back. A Ledger is not safe for concurrent
// use: its store serializes the calls.
type Ledger map[catchup.Partition]Checkpoint

// Acquire takes the lease on p for owner until now+ttl if it is free,
// expired or already owner's, and increments the epoch; a partition
// without a checkpoint gets one (Exists false, TargetEnd -1). Otherwise it
// returns a *LeasedError.
func (lg Ledger) Acquire(p catchup.Partition, owner string, ttl time.Duration, now time.Time) (Checkpoint, error) {
	cp, found := lg[p]
	if !found {
		cp = Checkpoint{Partition: p, TargetEnd: -1}
	} else if cp.Owner != "" && cp.Owner != owner && !now.After(cp.Expires) {
		return Checkpoint{}, &LeasedError{Owner: cp.Owner, Expires: cp.Expires}
	}
	cp.Owner, cp.Epoch, cp.Expires, cp.Updated = owner, cp.Epoch+1, now.Add(ttl), now
	return lg.put(cp), nil
}

// Renew extends l to now+ttl if l is still held (see Held); the epoch
// stays.
func (lg Ledger) Renew(l Lease, ttl time.Duration, now time.Time) (Checkpoint, error) {
	cp, err := lg.Held(l)
	if err != nil {
		return Checkpoint{}, err
	}
	cp.Expires, cp.Updated = now.Add(ttl), now
	return lg.put(cp), nil
}

// Release frees l if it is still held (see Held); the epoch stays, so the
// next Acquire increments it.
func (lg Ledger) Release(l Lease, now time.Time) (Checkpoint, error) {
	cp, err := lg.Held(l)
	if err != nil {
		return Checkpoint{}, err
	}
	cp.Owner, cp.Expires, cp.Updated = "", time.Time{}, now
	return lg.put(cp), nil
}

// Commit writes c under l if l is still held (see Held) and c.Next is not
// below the stored Next (else an error wrapping ErrRegress): Exists, Next
// and TargetEnd are set, Start kept or taken from c (Commit.KeepStart),
// the counters added, c.Gap appended (the oldest dropped past MaxGaps),
// LastError replaced, and with c.Release the lease freed keeping the epoch.
func (lg Ledger) Commit(l Lease, c Commit, now time.Time) (Checkpoint, error) {
	cp, err := lg.Held(l)
	if err != nil {
		return Checkpoint{}, err
	}
	if c.Next < cp.Next {
		return Checkpoint{}, fmt.Errorf("stored next offset is %d: %w", cp.Next, ErrRegress)
	}
	cp.Exists, cp.Next, cp.TargetEnd = true, c.Next, c.TargetEnd
	cp.Start = c.KeepStart(cp.Start)
	cp.Records += c.Records
	cp.Bytes += c.Bytes
	cp.Commits++
	if c.Gap != nil {
		cp.Gaps = append(slices.Clip(cp.Gaps), *c.Gap)
		if n := len(cp.Gaps); n > MaxGaps {
			cp.Gaps = slices.Clone(cp.Gaps[n-MaxGaps:])
		}
	}
	cp.LastError, cp.Updated = c.Error, now
	if c.Release {
		cp.Owner, cp.Expires = "", time.Time{}
	}
	return lg.put(cp), nil
}

// Reset sets p's Next to next (Exists, TargetEnd -1) and frees a lease
// that expired without being taken over (keeping the epoch, so that its
// holder is fenced), unless a live lease holds p: then it returns a
// *LeasedError. Start, the counters and the verification stay.
func (lg Ledger) Reset(p catchup.Partition, next int64, now time.Time) (Checkpoint, error) {
	cp, found := lg[p]
	if !found {
		cp = Checkpoint{Partition: p}
	} else if cp.Owner != "" && !now.After(cp.Expires) {
		return Checkpoint{}, &LeasedError{Owner: cp.Owner, Expires: cp.Expires}
	}
	cp.Exists, cp.Next, cp.TargetEnd = true, next, -1
	cp.Owner, cp.Expires, cp.Updated = "", time.Time{}, now
	return lg.put(cp), nil
}

// RecordVerification stores v as p's LastVerification and changes nothing
// else (not even Updated); a partition without a checkpoint gets one that
// holds only v (Exists false, TargetEnd -1).
func (lg Ledger) RecordVerification(p catchup.Partition, v Verification) Checkpoint {
	cp, found := lg[p]
	if !found {
		cp = Checkpoint{Partition: p, TargetEnd: -1}
	}
	cp.LastVerification = &v
	return lg.put(cp)
}

// Held returns the checkpoint l is a lease on if l.Owner still holds it
// with l.Epoch (an expired lease nobody took is still held), or an error
// wrapping ErrFenced that says who holds it now.
func (lg Ledger) Held(l Lease) (Checkpoint, error) {
	cp, found := lg[l.Partition]
	switch {
	case !found:
		return Checkpoint{}, fmt.Errorf("lease of %s epoch %d: partition was never acquired: %w", l.Owner, l.Epoch, ErrFenced)
	case l.Owner == "":
		return Checkpoint{}, fmt.Errorf("lease without an owner: %w", ErrFenced)
	case cp.Owner == l.Owner && cp.Epoch == l.Epoch:
		return cp, nil
	case cp.Owner == "":
		return Checkpoint{}, fmt.Errorf("lease of %s epoch %d: partition is free at epoch %d: %w", l.Owner, l.Epoch, cp.Epoch, ErrFenced)
	default:
		return Checkpoint{}, fmt.Errorf("lease of %s epoch %d: held by %s at epoch %d: %w", l.Owner, l.Epoch, cp.Owner, cp.Epoch, ErrFenced)
	}
}

// Sorted returns copies of the checkpoints of lg, sorted by partition: Load
// of the stores that hold a pipeline in memory.
func (lg Ledger) Sorted() []Checkpoint {
	cps := make([]Checkpoint, 0, len(lg))
	for _, cp := range lg {
		cps = append(cps, Clone(cp))
	}
	slices.SortFunc(cps, func(a, b Checkpoint) int { return a.Partition.Compare(b.Partition) })
	return cps
}

// Select returns copies of the checkpoints of those of ps that have one,
// sorted by partition, each once: LoadPartitions of the stores that hold a
// pipeline in memory.
func (lg Ledger) Select(ps []catchup.Partition) []Checkpoint {
	out := make([]Checkpoint, 0, min(len(ps), len(lg)))
	for _, p := range Distinct(ps) {
		if cp, ok := lg[p]; ok {
			out = append(out, Clone(cp))
		}
	}
	return out
}

// put stores cp, which shares no memory with the value it replaces, and
// returns a copy of it.
func (lg Ledger) put(cp Checkpoint) Checkpoint {
	lg[cp.Partition] = cp
	return Clone(cp)
}

// Distinct returns ps sorted by partition, each once, in a new slice.
func Distinct(ps []catchup.Partition) []catchup.Partition {
	ps = slices.Clone(ps)
	slices.SortFunc(ps, catchup.Partition.Compare)
	return slices.Compact(ps)
}

// Clone returns cp with its own copies of Start, Gaps and LastVerification.
func Clone(cp Checkpoint) Checkpoint {
	if cp.Start != nil {
		start := *cp.Start
		cp.Start = &start
	}
	cp.Gaps = slices.Clone(cp.Gaps)
	if cp.LastVerification != nil {
		v := *cp.LastVerification
		cp.LastVerification = &v
	}
	return cp
}
