// Package checkpoint defines where catchup keeps its progress: the Store
// contract, the errors it speaks, an in-memory implementation for tests, and
// (in checkpointtest) the conformance suite that every implementation runs.
//
// A checkpoint is, per pipeline and source partition, the next source offset
// to copy, plus the target end offset seen when it was written, counters and
// the lease. Implementations: memstore (this package, tests), filestore (the
// embedded default for local runs), dynamostore (AWS).
package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// ErrFenced is returned (wrapped) by Commit, Renew and Release when the lease
// is no longer held by the caller with the caller's epoch: another run took
// the partition over. A fenced run must stop producing for that partition.
var ErrFenced = errors.New("checkpoint: lease lost to another run (fenced)")

// ErrLeased is returned (wrapped) by Acquire when another owner holds a live
// lease on the partition.
var ErrLeased = errors.New("checkpoint: partition is leased by another run")

// LeasedError is the error Acquire returns, wrapped, when another owner
// holds a live lease: who holds it and until when. It matches ErrLeased
// with errors.Is.
type LeasedError struct {
	Owner   string
	Expires time.Time
}

func (e *LeasedError) Error() string {
	return fmt.Sprintf("held by %s until %s: %v", e.Owner, e.Expires.UTC().Format(time.RFC3339), ErrLeased)
}

// Is makes errors.Is(err, ErrLeased) true.
func (e *LeasedError) Is(target error) bool { return target == ErrLeased }

// ErrRegress is returned (wrapped) by Commit when Next is below the stored
// next offset: a checkpoint never moves backwards. Use Reset to move it back
// deliberately.
var ErrRegress = errors.New("checkpoint: commit would move the checkpoint backwards")

// Checkpoint is the stored state of one source partition of one pipeline.
// The zero Next with Exists false means the partition was never copied.
type Checkpoint struct {
	catchup.Partition
	// Exists is true once a Commit or a Reset succeeded on the partition,
	// and false until then whatever else was done to it. The engine does
	// not take false for "never copied": the target may hold copies that a
	// lost, new or restored store does not know of, and it reads them back.
	Exists    bool
	Next      int64 // next source offset to copy
	TargetEnd int64 // end offset of the target partition seen at the last commit; -1 if unknown

	// Start is the source offset where the pipeline first began copying
	// the partition (its start policy resolved: earliest, latest, a
	// timestamp or an explicit offset), written by the first Commit that
	// carries one and never changed after; nil if unknown (a checkpoint
	// written before starts were recorded, or one that only holds a
	// verification). verify compares from here by default.
	Start *int64

	Records int64 // records copied, all runs together
	Bytes   int64 // bytes copied (catchup.Record.Size), all runs together
	Commits int64 // commits written

	Owner   string    // lease owner, "" once released (a holder that died leaves it set)
	Epoch   int64     // fencing epoch, incremented by every Acquire
	Expires time.Time // lease expiry; the lease is free after it

	LastError string    // last error recorded by a commit, "" after a clean one
	Gaps      []Gap     // gaps skipped with on_gap: skip, oldest first; the last MaxGaps
	Updated   time.Time // time of the last write, RecordVerification excepted

	// LastVerification is the result RecordVerification stored last; nil if
	// the partition was never verified. No other method changes it.
	LastVerification *Verification
}

// Progress returns what planning needs of cp (internal/plan): whether it
// exists, its next offset and its counters.
func (cp Checkpoint) Progress() catchup.Progress {
	return catchup.Progress{Exists: cp.Exists, Next: cp.Next, Records: cp.Records, Bytes: cp.Bytes}
}

// Verification is what one `catchup verify` found for one partition; it
// lives in internal/catchup, the vocabulary verify and the stores share.
type Verification = catchup.Verification

// MaxGaps is the most gaps a checkpoint keeps: a Commit that records one
// more drops the oldest. A pipeline behind retention with on_gap: skip
// records a gap on every run, and a DynamoDB item holds 400 KB (about
// 12,000 gaps), past which every commit of the partition would fail.
const MaxGaps = 100

// Gap is a range of source offsets [From, To) that were deleted before they
// could be copied and were skipped deliberately (on_gap: skip).
type Gap struct {
	From, To int64
	At       time.Time // when the gap was recorded
}

// Lease is the proof that Owner holds a partition with Epoch until Expires.
type Lease struct {
	Pipeline string
	catchup.Partition
	Owner   string
	Epoch   int64
	Expires time.Time
}

// Commit is what a run writes after the produce covering it was acknowledged.
type Commit struct {
	Next      int64 // new next source offset; must not be below the stored one
	TargetEnd int64 // target partition end offset after the acknowledged produce
	Records   int64 // records copied since the previous commit (added to the counters)
	Bytes     int64 // bytes copied since the previous commit (added to the counters)
	Gap       *Gap  // a gap skipped since the previous commit, if any (appended; the oldest dropped past MaxGaps)
	Error     string
	// Start, if set, is stored as the checkpoint's Start when it has none
	// yet; a checkpoint's Start never changes once stored.
	Start *int64
	// Release frees the lease in the same write, as Release would: a run's
	// last commit, one write (and, in DynamoDB, one request) instead of two.
	// The lease is no longer valid afterwards.
	Release bool
}

// KeepStart returns the Start a checkpoint whose Start is cur has after
// Commit c: cur if set, else a copy of c.Start (nil if that is nil).
func (c Commit) KeepStart(cur *int64) *int64 {
	if cur != nil || c.Start == nil {
		return cur
	}
	start := *c.Start
	return &start
}

// Store keeps checkpoints and leases. All methods are safe for concurrent use
// by several goroutines and, where the implementation says so, processes.
type Store interface {
	// Load returns the checkpoints of every partition of pipeline that has
	// one, in one round trip where the backend allows (never one request per
	// partition). Partitions never leased or committed are absent.
	Load(ctx context.Context, pipeline string) ([]Checkpoint, error)

	// LoadPartitions returns the checkpoints of those of ps that have one in
	// pipeline, sorted by partition, each once however often ps names it.
	// Its cost grows with len(ps), not with the pipeline: a worker given a
	// shard of a large pipeline reads the shard's checkpoints only. An empty
	// ps returns none and sends no request.
	LoadPartitions(ctx context.Context, pipeline string, ps []catchup.Partition) ([]Checkpoint, error)

	// Acquire takes the lease on p for owner until now+ttl if it is free,
	// expired, or already held by owner, and increments the epoch. Otherwise
	// it returns an error wrapping ErrLeased. The returned Checkpoint is the
	// state after the acquire.
	Acquire(ctx context.Context, pipeline string, p catchup.Partition, owner string, ttl time.Duration) (Lease, Checkpoint, error)

	// Renew extends l to now+ttl if l.Owner still holds it with l.Epoch;
	// otherwise it returns an error wrapping ErrFenced. The epoch is unchanged.
	Renew(ctx context.Context, l Lease, ttl time.Duration) (Lease, error)

	// Release frees l if it is still held with l.Epoch (the epoch stays, so the
	// next Acquire increments it); otherwise it returns an error wrapping
	// ErrFenced.
	Release(ctx context.Context, l Lease) error

	// Commit writes c under l if l.Owner still holds the lease with l.Epoch
	// (an expired but untaken lease still commits), stores c.Start if the
	// checkpoint has no Start yet, and with c.Release frees
	// the lease (keeping the epoch); otherwise it returns an error wrapping
	// ErrFenced and changes nothing. A c.Next below the stored
	// Next returns an error wrapping ErrRegress and changes nothing.
	Commit(ctx context.Context, l Lease, c Commit) error

	// Reset sets p's next offset to next (forwards or backwards) and forgets
	// its target end offset, if no live lease is held on it; otherwise it
	// returns an error wrapping ErrLeased. A lease that expired without being
	// taken over is released (its epoch stays), so its holder's next Commit
	// is fenced instead of overwriting the reset. It is the deliberate way to
	// move a checkpoint after a gap or a recreated topic. It leaves Start as
	// it is.
	Reset(ctx context.Context, pipeline string, p catchup.Partition, next int64) error

	// RecordVerification stores v as p's LastVerification, replacing the one
	// before. It needs no lease and changes nothing else: Next, TargetEnd,
	// the counters, the lease, the epoch and Updated stay as they are, so it
	// may run while another run holds p, and that run's next Commit, Renew
	// and Release succeed as if it had not happened. A partition without a
	// checkpoint gets one that holds only v (Exists false, Next 0, TargetEnd
	// -1, epoch 0, zero Updated), which Load returns.
	RecordVerification(ctx context.Context, pipeline string, p catchup.Partition, v Verification) error

	// PutBegin stores b as the begin of topic in pipeline if the topic has
	// none yet, and returns the begin stored: b, or the one stored before
	// it. The first writer wins and every other reads the winner's, so
	// runs racing to begin a topic (the workers of a first fan-out round)
	// agree on one. A begin is never changed nor removed. It needs no lease
	// and is one write (DynamoDB: one conditional PutItem, and one GetItem
	// when it loses).
	PutBegin(ctx context.Context, pipeline, topic string, b Begin) (Begin, error)

	// LoadBegins returns the begins of those of topics that have one in
	// pipeline, by topic, in one request whatever the number of topics and
	// partitions (DynamoDB: one Query page per 1 MB of begins). An empty
	// topics returns none and sends no request. Load and LoadPartitions
	// never return begins, and a begin is not a checkpoint.
	LoadBegins(ctx context.Context, pipeline string, topics []string) (map[string]Begin, error)

	// Close releases the resources of the store (files, locks, connections).
	Close() error
}
