package filestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
)

var _ checkpoint.Store = (*Store)(nil)

// ErrLocked is returned (wrapped) by every Store method that needs a pipeline
// whose lock file another process, or another Store in this process, holds.
// The message names the lock file and the holder's pid.
var ErrLocked = errors.New("filestore: pipeline locked")

// ErrClosed is returned (wrapped) by every Store method called after Close.
var ErrClosed = errors.New("filestore: store is closed")

// Store is a checkpoint.Store that keeps each pipeline in a JSON file of one
// directory. It is safe for concurrent use by the goroutines of one process;
// a lock file keeps other processes off the pipelines it uses (see the
// package doc).
//
// On first use of a pipeline, a Store locks it and reads its snapshot and
// journal, then keeps the whole pipeline in memory, and writes every change
// durably to disk (one journal line, or now and then a new snapshot) before
// the change is visible. Changes are serialized: one write at a time for the
// whole Store.
type Store struct {
	dir string
	now func() time.Time

	mu        sync.Mutex
	closed    bool
	pipelines map[string]*pipeline
	written   int64 // bytes written to snapshots and journals
}

// pipeline is the state of one pipeline the Store holds the lock of.
type pipeline struct {
	name     string
	path     string   // <dir>/<name>.json, the snapshot
	journal  string   // <dir>/<name>.journal, the changes since the snapshot
	lock     *os.File // <dir>/<name>.lock, flocked until closed
	cps      map[catchup.Partition]checkpoint.Checkpoint
	begins   map[string]checkpoint.Begin // by topic (begin.go)
	snapshot int64                       // bytes of the snapshot as last read or written
	logged   int64                       // bytes of the journal, all complete lines; 0 if there is none
}

// Open returns a Store over dir, creating dir if needed, that reads the time
// from now (time.Now if nil). It locks and reads nothing yet: each pipeline is
// locked on first use and stays locked until Close.
func Open(dir string, now func() time.Time) (*Store, error) {
	if now == nil {
		now = time.Now
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open checkpoint directory %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("open checkpoint directory %s: %w", dir, err)
	}
	return &Store{dir: abs, now: now, pipelines: make(map[string]*pipeline)}, nil
}

// BytesWritten returns the bytes the Store has written to snapshots and
// journals: what the disk is asked to store, before the file system's own
// blocks and metadata.
func (s *Store) BytesWritten() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.written
}

// Load implements checkpoint.Store. It returns the checkpoints sorted by
// partition, from memory after the first read of the pipeline's file.
func (s *Store) Load(ctx context.Context, pipeline string) ([]checkpoint.Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load %s: %w", pipeline, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pl, err := s.open(pipeline)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", pipeline, err)
	}
	return checkpoint.Ledger(pl.cps).Sorted(), nil
}

// LoadPartitions implements checkpoint.Store, from memory after the first
// read of the pipeline's file.
func (s *Store) LoadPartitions(ctx context.Context, pipeline string, ps []catchup.Partition) ([]checkpoint.Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load %d partitions of %s: %w", len(ps), pipeline, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pl, err := s.open(pipeline)
	if err != nil {
		return nil, fmt.Errorf("load %d partitions of %s: %w", len(ps), pipeline, err)
	}
	return checkpoint.Ledger(pl.cps).Select(ps), nil
}

// Acquire implements checkpoint.Store. It returns an error for an empty owner
// or a non-positive ttl.
func (s *Store) Acquire(ctx context.Context, pipeline string, p catchup.Partition, owner string, ttl time.Duration) (checkpoint.Lease, checkpoint.Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return checkpoint.Lease{}, checkpoint.Checkpoint{}, fmt.Errorf("acquire %s %s: %w", pipeline, p, err)
	}
	if owner == "" || ttl <= 0 {
		return checkpoint.Lease{}, checkpoint.Checkpoint{}, fmt.Errorf("acquire %s %s: owner %q and ttl %s: need an owner and a positive ttl", pipeline, p, owner, ttl)
	}
	cp, err := s.update(pipeline, p, func(lg checkpoint.Ledger, now time.Time) (checkpoint.Checkpoint, error) {
		return lg.Acquire(p, owner, ttl, now)
	})
	if err != nil {
		return checkpoint.Lease{}, checkpoint.Checkpoint{}, fmt.Errorf("acquire %s %s for %s: %w", pipeline, p, owner, err)
	}
	l := checkpoint.Lease{Pipeline: pipeline, Partition: p, Owner: owner, Epoch: cp.Epoch, Expires: cp.Expires}
	return l, cp, nil
}

// Renew implements checkpoint.Store. It returns an error for a non-positive
// ttl.
func (s *Store) Renew(ctx context.Context, l checkpoint.Lease, ttl time.Duration) (checkpoint.Lease, error) {
	if err := ctx.Err(); err != nil {
		return checkpoint.Lease{}, fmt.Errorf("renew %s %s: %w", l.Pipeline, l.Partition, err)
	}
	if ttl <= 0 {
		return checkpoint.Lease{}, fmt.Errorf("renew %s %s: ttl %s: need a positive ttl", l.Pipeline, l.Partition, ttl)
	}
	cp, err := s.update(l.Pipeline, l.Partition, func(lg checkpoint.Ledger, now time.Time) (checkpoint.Checkpoint, error) {
		return lg.Renew(l, ttl, now)
	})
	if err != nil {
		return checkpoint.Lease{}, fmt.Errorf("renew %s %s: %w", l.Pipeline, l.Partition, err)
	}
	l.Expires = cp.Expires
	return l, nil
}

// Release implements checkpoint.Store.
func (s *Store) Release(ctx context.Context, l checkpoint.Lease) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("release %s %s: %w", l.Pipeline, l.Partition, err)
	}
	_, err := s.update(l.Pipeline, l.Partition, func(lg checkpoint.Ledger, now time.Time) (checkpoint.Checkpoint, error) {
		return lg.Release(l, now)
	})
	if err != nil {
		return fmt.Errorf("release %s %s: %w", l.Pipeline, l.Partition, err)
	}
	return nil
}

// Commit implements checkpoint.Store. The commit is on disk when it returns
// nil.
func (s *Store) Commit(ctx context.Context, l checkpoint.Lease, c checkpoint.Commit) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("commit %s %s at %d: %w", l.Pipeline, l.Partition, c.Next, err)
	}
	_, err := s.update(l.Pipeline, l.Partition, func(lg checkpoint.Ledger, now time.Time) (checkpoint.Checkpoint, error) {
		return lg.Commit(l, c, now)
	})
	if err != nil {
		return fmt.Errorf("commit %s %s at %d: %w", l.Pipeline, l.Partition, c.Next, err)
	}
	return nil
}

// Reset implements checkpoint.Store.
func (s *Store) Reset(ctx context.Context, pipeline string, p catchup.Partition, next int64) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("reset %s %s to %d: %w", pipeline, p, next, err)
	}
	_, err := s.update(pipeline, p, func(lg checkpoint.Ledger, now time.Time) (checkpoint.Checkpoint, error) {
		return lg.Reset(p, next, now)
	})
	if err != nil {
		return fmt.Errorf("reset %s %s to %d: %w", pipeline, p, next, err)
	}
	return nil
}

// RecordVerification implements checkpoint.Store. The verification is on
// disk when it returns nil.
func (s *Store) RecordVerification(ctx context.Context, pipeline string, p catchup.Partition, v checkpoint.Verification) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("record verification of %s %s: %w", pipeline, p, err)
	}
	_, err := s.update(pipeline, p, func(lg checkpoint.Ledger, _ time.Time) (checkpoint.Checkpoint, error) {
		return lg.RecordVerification(p, v), nil
	})
	if err != nil {
		return fmt.Errorf("record verification of %s %s: %w", pipeline, p, err)
	}
	return nil
}

// Close unlocks every pipeline the Store holds, folding the journal of a
// small pipeline (up to 16 KiB) into its snapshot first, so that it rests in
// one file. Leases still held are left in the files; the next Store to read
// them treats them as expired. Methods called after Close return an error
// wrapping ErrClosed; Close itself may be called again and then does
// nothing.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	for _, pl := range s.pipelines {
		if pl.logged > 0 && pl.snapshot+pl.logged <= compactOnCloseBytes {
			if err := s.compact(pl); err != nil {
				errs = append(errs, err) // the journal still holds every change
			}
		}
		_ = pl.lock.Truncate(0) // forget our pid; the lock, not the pid, is what protects
		if err := pl.lock.Close(); err != nil {
			errs = append(errs, fmt.Errorf("unlock %s: %w", pl.lock.Name(), err))
		}
	}
	s.pipelines = nil
	return errors.Join(errs...)
}

// update applies f, one of the Ledger's rules, to p's checkpoint in
// pipeline name. If f succeeds it writes p's new state to disk, and if that
// fails puts the old state back; it returns f's result.
func (s *Store) update(name string, p catchup.Partition, f func(lg checkpoint.Ledger, now time.Time) (checkpoint.Checkpoint, error)) (checkpoint.Checkpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pl, err := s.open(name)
	if err != nil {
		return checkpoint.Checkpoint{}, err
	}
	old, found := pl.cps[p]
	cp, err := f(pl.cps, s.now())
	if err != nil {
		return checkpoint.Checkpoint{}, err
	}
	if err := s.persist(pl, cp); err != nil {
		if found {
			pl.cps[p] = old
		} else {
			delete(pl.cps, p)
		}
		return checkpoint.Checkpoint{}, err
	}
	return cp, nil
}

// open returns the state of pipeline name, locking it and reading its
// file on first use. Leases found in the file are dropped (see the package
// doc). The caller holds s.mu.
func (s *Store) open(name string) (*pipeline, error) {
	if s.closed {
		return nil, ErrClosed
	}
	if pl := s.pipelines[name]; pl != nil {
		return pl, nil
	}
	if err := checkName(name); err != nil {
		return nil, err
	}
	lk, err := lock(filepath.Join(s.dir, name+".lock"), name)
	if err != nil {
		return nil, err
	}
	pl := &pipeline{name: name, path: filepath.Join(s.dir, name+".json"), journal: filepath.Join(s.dir, name+".journal"), lock: lk}
	if err := pl.read(); err != nil {
		_ = lk.Close() // unlock: the error to report is the file's
		return nil, err
	}
	cps := pl.cps
	for p, cp := range cps {
		// The lock is ours, so the process that wrote this lease is gone:
		// the lease is expired, and its owner stays, which tells Load's
		// callers that it was never released (the engine then lets a
		// produce request the dead run had in flight land first).
		if cp.Owner != "" {
			cp.Expires = time.Time{}
		}
		cps[p] = cp
	}
	s.pipelines[name] = pl
	return pl, nil
}

// read reads the pipeline's snapshot and journal (readState), cutting off
// a torn last line of the journal. The caller holds the pipeline's lock.
func (pl *pipeline) read() error {
	var err error
	if pl.cps, pl.begins, pl.snapshot, pl.logged, err = readState(pl.path, pl.journal, pl.name); err != nil {
		return err
	}
	if fi, err := os.Stat(pl.journal); err == nil && fi.Size() > pl.logged {
		if err := os.Truncate(pl.journal, pl.logged); err != nil {
			return fmt.Errorf("cut the torn last line of %s: %w", pl.journal, err)
		}
	}
	return nil
}

// readState reads the snapshot at path (none if there is no file yet) and
// replays the journal over it. It returns the state (checkpoints and
// begins), the snapshot's length and the length of the journal's complete
// lines. It changes no file.
func readState(path, journal, pipeline string) (cps map[catchup.Partition]checkpoint.Checkpoint, begins map[string]checkpoint.Begin,
	snapshot, logged int64, err error) {
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		cps, begins = make(map[catchup.Partition]checkpoint.Checkpoint), make(map[string]checkpoint.Begin)
	case err != nil:
		return nil, nil, 0, 0, fmt.Errorf("read %s: %w", path, err)
	default:
		if cps, begins, err = decode(path, pipeline, data); err != nil {
			return nil, nil, 0, 0, err
		}
	}
	if logged, err = replay(journal, pipeline, cps, begins); err != nil {
		return nil, nil, 0, 0, err
	}
	return cps, begins, int64(len(data)), logged, nil
}

// persist writes cp, the new state of one partition already in pl.cps, to
// disk: one line appended to the journal. Once the journal has grown as
// large as the snapshot (and at least 64 KiB), it then writes a new
// snapshot of the whole pipeline that replaces both: the change is durable
// before, so a failed compaction is not the change's failure, and the next
// change tries again. The caller holds s.mu.
func (s *Store) persist(pl *pipeline, cp checkpoint.Checkpoint) error {
	line, err := entry(cp)
	if err != nil {
		return fmt.Errorf("encode %s: %w", pl.journal, err)
	}
	return s.persistLine(pl, line)
}

// persistLine appends line, a journal line already applied to pl's state in
// memory, to the journal, and compacts as persist says. The caller holds
// s.mu.
func (s *Store) persistLine(pl *pipeline, line []byte) error {
	n, err := appendJournal(pl.journal, pl.name, pl.logged, line)
	if err != nil {
		return err
	}
	pl.logged += n
	s.written += n
	if pl.logged >= max(pl.snapshot, compactAfterBytes) {
		_ = s.compact(pl) // the journal still holds every change
	}
	return nil
}

// compact replaces the pipeline's snapshot with its state in memory
// (atomically and durably), then removes the journal. The journal's last
// line of each partition is its state in memory, so a crash between the two
// leaves a journal that the snapshot already holds: replaying it changes
// nothing. The caller holds s.mu.
func (s *Store) compact(pl *pipeline) error {
	data, err := encode(pl.name, pl.cps, pl.begins)
	if err != nil {
		return fmt.Errorf("encode %s: %w", pl.path, err)
	}
	if err := writeFile(pl.path, data); err != nil {
		return err
	}
	pl.snapshot = int64(len(data))
	s.written += pl.snapshot
	if pl.logged == 0 {
		return nil
	}
	if err := os.Remove(pl.journal); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", pl.journal, err)
	}
	pl.logged = 0
	return nil
}

// lockWait is how long lock tries again while the lock is held: long
// enough for a ReadOnly store's probe, which holds it for the time of an
// open, a flock, a truncate and a close, and far shorter than any run.
const lockWait = 250 * time.Millisecond

// lock is lockOnce, tried again every few milliseconds for up to lockWait
// while another open file holds the lock, so that `catchup status` reading
// the pipeline at the instant a run starts does not fail that run.
func lock(path, pipeline string) (*os.File, error) {
	deadline := time.Now().Add(lockWait)
	for {
		f, err := lockOnce(path, pipeline)
		if err == nil || !errors.Is(err, ErrLocked) || time.Now().After(deadline) {
			return f, err
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// checkName accepts the pipeline names that make safe file names in one
// directory: not empty, at most 200 bytes, no path separator or NUL, and no
// leading dot (which the temporary files use).
func checkName(name string) error {
	switch {
	case name == "":
		return errors.New("pipeline name is empty")
	case len(name) > 200:
		return fmt.Errorf("pipeline name %.20q... is longer than 200 bytes", name)
	case strings.ContainsAny(name, "/\\\x00"):
		return fmt.Errorf("pipeline name %q holds a path separator or NUL", name)
	case strings.HasPrefix(name, "."):
		return fmt.Errorf("pipeline name %q starts with a dot", name)
	}
	return nil
}
