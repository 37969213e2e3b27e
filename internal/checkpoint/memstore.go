package checkpoint

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

var _ Store = (*MemStore)(nil)

// MemStore is a Store that keeps everything in memory, for tests and the
// demo. It is safe for concurrent use by several goroutines of one process;
// its state dies with the process.
type MemStore struct {
	now func() time.Time

	mu        sync.Mutex
	pipelines map[string]map[catchup.Partition]*Checkpoint
	begins    map[string]map[string]Begin // by pipeline, then topic; memstore_begin.go
}

// NewMemStore returns an empty MemStore that reads the time from now, or from
// time.Now if now is nil.
func NewMemStore(now func() time.Time) *MemStore {
	if now == nil {
		now = time.Now
	}
	return &MemStore{now: now, pipelines: make(map[string]map[catchup.Partition]*Checkpoint)}
}

// Load returns copies of the checkpoints of pipeline, sorted by partition.
func (s *MemStore) Load(ctx context.Context, pipeline string) ([]Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load %s: %w", pipeline, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cps := make([]Checkpoint, 0, len(s.pipelines[pipeline]))
	for _, cp := range s.pipelines[pipeline] {
		cps = append(cps, clone(*cp))
	}
	slices.SortFunc(cps, func(a, b Checkpoint) int { return a.Partition.Compare(b.Partition) })
	return cps, nil
}

// LoadPartitions implements Store: copies of the checkpoints of ps, sorted
// by partition.
func (s *MemStore) LoadPartitions(ctx context.Context, pipeline string, ps []catchup.Partition) ([]Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load %d partitions of %s: %w", len(ps), pipeline, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return Select(s.pipelines[pipeline], ps, func(cp *Checkpoint) Checkpoint { return clone(*cp) }), nil
}

// Select returns f of the checkpoints in cps of those of ps that have one,
// sorted by partition, each once: LoadPartitions of the stores that hold a
// pipeline in memory.
func Select[C any](cps map[catchup.Partition]C, ps []catchup.Partition, f func(C) Checkpoint) []Checkpoint {
	out := make([]Checkpoint, 0, min(len(ps), len(cps)))
	for _, p := range Distinct(ps) {
		if cp, ok := cps[p]; ok {
			out = append(out, f(cp))
		}
	}
	return out
}

// Distinct returns ps sorted by partition, each once, in a new slice.
func Distinct(ps []catchup.Partition) []catchup.Partition {
	ps = slices.Clone(ps)
	slices.SortFunc(ps, catchup.Partition.Compare)
	return slices.Compact(ps)
}

// Acquire implements Store. It returns an error for an empty owner or a
// non-positive ttl.
func (s *MemStore) Acquire(ctx context.Context, pipeline string, p catchup.Partition, owner string, ttl time.Duration) (Lease, Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return Lease{}, Checkpoint{}, fmt.Errorf("acquire %s %s: %w", pipeline, p, err)
	}
	if owner == "" || ttl <= 0 {
		return Lease{}, Checkpoint{}, fmt.Errorf("acquire %s %s: owner %q and ttl %s: need an owner and a positive ttl", pipeline, p, owner, ttl)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	cp := s.checkpoint(pipeline, p)
	if cp == nil {
		cp = &Checkpoint{Partition: p, TargetEnd: -1}
	} else if cp.Owner != "" && cp.Owner != owner && !now.After(cp.Expires) {
		return Lease{}, Checkpoint{}, fmt.Errorf("acquire %s %s for %s: %w",
			pipeline, p, owner, &LeasedError{Owner: cp.Owner, Expires: cp.Expires})
	}
	cp.Owner, cp.Epoch, cp.Expires, cp.Updated = owner, cp.Epoch+1, now.Add(ttl), now
	s.put(pipeline, cp)
	l := Lease{Pipeline: pipeline, Partition: p, Owner: owner, Epoch: cp.Epoch, Expires: cp.Expires}
	return l, clone(*cp), nil
}

// Renew implements Store. It returns an error for a non-positive ttl.
func (s *MemStore) Renew(ctx context.Context, l Lease, ttl time.Duration) (Lease, error) {
	if err := ctx.Err(); err != nil {
		return Lease{}, fmt.Errorf("renew %s %s: %w", l.Pipeline, l.Partition, err)
	}
	if ttl <= 0 {
		return Lease{}, fmt.Errorf("renew %s %s: ttl %s: need a positive ttl", l.Pipeline, l.Partition, ttl)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cp, err := s.held(l)
	if err != nil {
		return Lease{}, fmt.Errorf("renew %s %s: %w", l.Pipeline, l.Partition, err)
	}
	now := s.now()
	cp.Expires, cp.Updated = now.Add(ttl), now
	l.Expires = cp.Expires
	return l, nil
}

// Release implements Store.
func (s *MemStore) Release(ctx context.Context, l Lease) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("release %s %s: %w", l.Pipeline, l.Partition, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cp, err := s.held(l)
	if err != nil {
		return fmt.Errorf("release %s %s: %w", l.Pipeline, l.Partition, err)
	}
	cp.Owner, cp.Expires, cp.Updated = "", time.Time{}, s.now()
	return nil
}

// Commit implements Store.
func (s *MemStore) Commit(ctx context.Context, l Lease, c Commit) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("commit %s %s at %d: %w", l.Pipeline, l.Partition, c.Next, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cp, err := s.held(l)
	if err != nil {
		return fmt.Errorf("commit %s %s at %d: %w", l.Pipeline, l.Partition, c.Next, err)
	}
	if c.Next < cp.Next {
		return fmt.Errorf("commit %s %s at %d: stored next offset is %d: %w", l.Pipeline, l.Partition, c.Next, cp.Next, ErrRegress)
	}
	cp.Exists, cp.Next, cp.TargetEnd = true, c.Next, c.TargetEnd
	cp.Start = c.KeepStart(cp.Start)
	cp.Records += c.Records
	cp.Bytes += c.Bytes
	cp.Commits++
	if c.Gap != nil {
		cp.Gaps = append(slices.Clip(cp.Gaps), *c.Gap)
	}
	cp.LastError, cp.Updated = c.Error, s.now()
	if c.Release {
		cp.Owner, cp.Expires = "", time.Time{}
	}
	return nil
}

// Reset implements Store. A lease that expired without being taken over is
// released (its epoch stays), so that its holder cannot commit over the reset.
func (s *MemStore) Reset(ctx context.Context, pipeline string, p catchup.Partition, next int64) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("reset %s %s to %d: %w", pipeline, p, next, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	cp := s.checkpoint(pipeline, p)
	if cp == nil {
		cp = &Checkpoint{Partition: p}
	} else if cp.Owner != "" && !now.After(cp.Expires) {
		return fmt.Errorf("reset %s %s to %d: held by %s until %s: %w",
			pipeline, p, next, cp.Owner, cp.Expires.Format(time.RFC3339), ErrLeased)
	}
	cp.Exists, cp.Next, cp.TargetEnd = true, next, -1
	cp.Owner, cp.Expires, cp.Updated = "", time.Time{}, now
	s.put(pipeline, cp)
	return nil
}

// RecordVerification implements Store.
func (s *MemStore) RecordVerification(ctx context.Context, pipeline string, p catchup.Partition, v Verification) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("record verification of %s %s: %w", pipeline, p, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cp := s.checkpoint(pipeline, p)
	if cp == nil {
		cp = &Checkpoint{Partition: p, TargetEnd: -1}
		s.put(pipeline, cp)
	}
	cp.LastVerification = &v
	return nil
}

// Close does nothing: a MemStore holds no resources and stays usable.
func (s *MemStore) Close() error { return nil }

// checkpoint returns the stored checkpoint of p, or nil. The caller holds s.mu.
func (s *MemStore) checkpoint(pipeline string, p catchup.Partition) *Checkpoint {
	return s.pipelines[pipeline][p]
}

// put stores cp. The caller holds s.mu.
func (s *MemStore) put(pipeline string, cp *Checkpoint) {
	ps := s.pipelines[pipeline]
	if ps == nil {
		ps = make(map[catchup.Partition]*Checkpoint)
		s.pipelines[pipeline] = ps
	}
	ps[cp.Partition] = cp
}

// held returns the checkpoint l is a lease on if l is still held, or an error
// wrapping ErrFenced. The caller holds s.mu.
func (s *MemStore) held(l Lease) (*Checkpoint, error) {
	cp := s.checkpoint(l.Pipeline, l.Partition)
	if cp == nil {
		return nil, fmt.Errorf("lease of %s epoch %d: partition was never acquired: %w", l.Owner, l.Epoch, ErrFenced)
	}
	if err := fenced(*cp, l); err != nil {
		return nil, err
	}
	return cp, nil
}

// fenced returns nil if cp is held by l.Owner with l.Epoch, or an error
// wrapping ErrFenced that says who holds it now.
func fenced(cp Checkpoint, l Lease) error {
	switch {
	case l.Owner == "":
		return fmt.Errorf("lease without an owner: %w", ErrFenced)
	case cp.Owner == l.Owner && cp.Epoch == l.Epoch:
		return nil
	case cp.Owner == "":
		return fmt.Errorf("lease of %s epoch %d: partition is free at epoch %d: %w", l.Owner, l.Epoch, cp.Epoch, ErrFenced)
	default:
		return fmt.Errorf("lease of %s epoch %d: held by %s at epoch %d: %w", l.Owner, l.Epoch, cp.Owner, cp.Epoch, ErrFenced)
	}
}

// clone returns cp with its own copies of Start, Gaps and LastVerification.
func clone(cp Checkpoint) Checkpoint {
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
