package filestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
)

var _ checkpoint.Store = (*ReadOnly)(nil)

// ErrReadOnly is returned (wrapped) by every method of a ReadOnly store that
// would write.
var ErrReadOnly = errors.New("filestore: store opened read-only")

// ReadOnly is a checkpoint.Store over the directory of a Store that only
// loads: `catchup status` and `catchup plan` read the checkpoints while a
// run holds the pipeline's lock. It takes no lock to read: the snapshot is
// replaced by an atomic rename and the journal only grows (a torn last line
// is left out), so a read sees one whole state; a compaction between
// reading the snapshot and the journal is seen (the snapshot changed) and
// the read is done again.
// Where no process holds the lock, the leases in the file are a dead run's
// and Load reports them expired, as a Store that locks would.
type ReadOnly struct {
	dir string
}

// OpenReadOnly returns a ReadOnly store over dir. It reads nothing yet.
func OpenReadOnly(dir string) (*ReadOnly, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open checkpoint directory %s: %w", dir, err)
	}
	return &ReadOnly{dir: abs}, nil
}

// Load implements checkpoint.Store: the checkpoints in the pipeline's files
// as they are now, sorted by partition.
func (s *ReadOnly) Load(ctx context.Context, pipeline string) ([]checkpoint.Checkpoint, error) {
	cps, err := s.load(ctx, pipeline)
	if err != nil {
		return nil, err
	}
	return checkpoint.Ledger(cps).Sorted(), nil
}

// LoadPartitions implements checkpoint.Store: the checkpoints of those of
// ps that have one, sorted by partition.
func (s *ReadOnly) LoadPartitions(ctx context.Context, pipeline string, ps []catchup.Partition) ([]checkpoint.Checkpoint, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	cps, err := s.load(ctx, pipeline)
	if err != nil {
		return nil, err
	}
	return checkpoint.Ledger(cps).Select(ps), nil
}

// load returns the pipeline's checkpoints, their leases expired where no
// process holds the pipeline.
func (s *ReadOnly) load(ctx context.Context, pipeline string) (map[catchup.Partition]checkpoint.Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load %s: %w", pipeline, err)
	}
	if err := checkName(pipeline); err != nil {
		return nil, fmt.Errorf("load %s: %w", pipeline, err)
	}
	// A lock taken here means no run holds the pipeline: its leases are
	// dead. It is let go at once, before reading, and a run starting now
	// waits for it (lock).
	live := true
	if lk, err := lockOnce(filepath.Join(s.dir, pipeline+".lock"), pipeline); err == nil {
		live = false
		_ = lk.Truncate(0)
		_ = lk.Close()
	}
	cps, _, err := s.read(pipeline)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", pipeline, err)
	}
	for p, cp := range cps {
		if !live && cp.Owner != "" {
			cp.Expires = time.Time{}
			cps[p] = cp
		}
	}
	return cps, nil
}

// read reads the pipeline's state, again if a compaction replaced the
// snapshot meanwhile (its journal may then be gone).
func (s *ReadOnly) read(pipeline string) (map[catchup.Partition]checkpoint.Checkpoint, map[string]checkpoint.Begin, error) {
	path := filepath.Join(s.dir, pipeline+".json")
	for range 5 {
		before, _ := os.Stat(path)
		cps, begins, _, _, err := readState(path, filepath.Join(s.dir, pipeline+".journal"), pipeline)
		if err != nil {
			return nil, nil, err
		}
		after, _ := os.Stat(path)
		if before == nil && after == nil || before != nil && after != nil && os.SameFile(before, after) &&
			before.ModTime().Equal(after.ModTime()) && before.Size() == after.Size() {
			return cps, begins, nil
		}
	}
	return nil, nil, fmt.Errorf("read %s: it kept changing under a running catchup; try again", path)
}

func (s *ReadOnly) readOnly(op, pipeline string, p catchup.Partition) error {
	return fmt.Errorf("%s %s %s: %w", op, pipeline, p, ErrReadOnly)
}

// Acquire implements checkpoint.Store: it fails with ErrReadOnly.
func (s *ReadOnly) Acquire(_ context.Context, pipeline string, p catchup.Partition, _ string, _ time.Duration) (checkpoint.Lease, checkpoint.Checkpoint, error) {
	return checkpoint.Lease{}, checkpoint.Checkpoint{}, s.readOnly("acquire", pipeline, p)
}

// Renew implements checkpoint.Store: it fails with ErrReadOnly.
func (s *ReadOnly) Renew(_ context.Context, l checkpoint.Lease, _ time.Duration) (checkpoint.Lease, error) {
	return checkpoint.Lease{}, s.readOnly("renew", l.Pipeline, l.Partition)
}

// Release implements checkpoint.Store: it fails with ErrReadOnly.
func (s *ReadOnly) Release(_ context.Context, l checkpoint.Lease) error {
	return s.readOnly("release", l.Pipeline, l.Partition)
}

// Commit implements checkpoint.Store: it fails with ErrReadOnly.
func (s *ReadOnly) Commit(_ context.Context, l checkpoint.Lease, _ checkpoint.Commit) error {
	return s.readOnly("commit", l.Pipeline, l.Partition)
}

// Reset implements checkpoint.Store: it fails with ErrReadOnly.
func (s *ReadOnly) Reset(_ context.Context, pipeline string, p catchup.Partition, _ int64) error {
	return s.readOnly("reset", pipeline, p)
}

// RecordVerification implements checkpoint.Store: it fails with ErrReadOnly.
func (s *ReadOnly) RecordVerification(_ context.Context, pipeline string, p catchup.Partition, _ checkpoint.Verification) error {
	return s.readOnly("record the verification of", pipeline, p)
}

// Close implements checkpoint.Store; there is nothing to release.
func (s *ReadOnly) Close() error { return nil }
