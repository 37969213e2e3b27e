package checkpoint

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

var _ Store = (*MemStore)(nil)

// MemStore is a Store that keeps everything in memory, for tests and the
// demo. It is safe for concurrent use by several goroutines of one process;
// its state dies with the process. Its rules are Ledger's.
type MemStore struct {
	now func() time.Time

	mu        sync.Mutex
	pipelines map[string]Ledger
	begins    map[string]map[string]Begin // by pipeline, then topic; memstore_begin.go
}

// NewMemStore returns an empty MemStore that reads the time from now, or from
// time.Now if now is nil.
func NewMemStore(now func() time.Time) *MemStore {
	if now == nil {
		now = time.Now
	}
	return &MemStore{now: now, pipelines: make(map[string]Ledger)}
}

// Load returns copies of the checkpoints of pipeline, sorted by partition.
func (s *MemStore) Load(ctx context.Context, pipeline string) ([]Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load %s: %w", pipeline, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pipelines[pipeline].Sorted(), nil
}

// LoadPartitions implements Store: copies of the checkpoints of ps, sorted
// by partition.
func (s *MemStore) LoadPartitions(ctx context.Context, pipeline string, ps []catchup.Partition) ([]Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load %d partitions of %s: %w", len(ps), pipeline, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pipelines[pipeline].Select(ps), nil
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
	cp, err := s.ledger(pipeline).Acquire(p, owner, ttl, s.now())
	if err != nil {
		return Lease{}, Checkpoint{}, fmt.Errorf("acquire %s %s for %s: %w", pipeline, p, owner, err)
	}
	l := Lease{Pipeline: pipeline, Partition: p, Owner: owner, Epoch: cp.Epoch, Expires: cp.Expires}
	return l, cp, nil
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
	cp, err := s.ledger(l.Pipeline).Renew(l, ttl, s.now())
	if err != nil {
		return Lease{}, fmt.Errorf("renew %s %s: %w", l.Pipeline, l.Partition, err)
	}
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
	if _, err := s.ledger(l.Pipeline).Release(l, s.now()); err != nil {
		return fmt.Errorf("release %s %s: %w", l.Pipeline, l.Partition, err)
	}
	return nil
}

// Commit implements Store.
func (s *MemStore) Commit(ctx context.Context, l Lease, c Commit) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("commit %s %s at %d: %w", l.Pipeline, l.Partition, c.Next, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.ledger(l.Pipeline).Commit(l, c, s.now()); err != nil {
		return fmt.Errorf("commit %s %s at %d: %w", l.Pipeline, l.Partition, c.Next, err)
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
	if _, err := s.ledger(pipeline).Reset(p, next, s.now()); err != nil {
		return fmt.Errorf("reset %s %s to %d: %w", pipeline, p, next, err)
	}
	return nil
}

// RecordVerification implements Store.
func (s *MemStore) RecordVerification(ctx context.Context, pipeline string, p catchup.Partition, v Verification) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("record verification of %s %s: %w", pipeline, p, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ledger(pipeline).RecordVerification(p, v)
	return nil
}

// Close does nothing: a MemStore holds no resources and stays usable.
func (s *MemStore) Close() error { return nil }

// ledger returns the Ledger of pipeline, creating it. The caller holds s.mu.
func (s *MemStore) ledger(pipeline string) Ledger {
	lg := s.pipelines[pipeline]
	if lg == nil {
		lg = make(Ledger)
		s.pipelines[pipeline] = lg
	}
	return lg
}
