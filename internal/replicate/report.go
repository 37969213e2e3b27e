package replicate

import (
	"errors"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/plan"
)

// Status is how the copy of one partition ended. It is the one definition
// of a partition's outcome: the CLI's report, its --json and exit code, the
// Lambda summary and the EMF metrics all read it (see Report.Done).
type Status string

const (
	StatusDone       Status = "done"        // the window was copied to the source end fixed at the start of the run
	StatusPartial    Status = "partial"     // stopped early (deadline, cancellation, a window limit: max_records, max_bytes, max_duration); the checkpoint is consistent
	StatusLeased     Status = "leased"      // another run holds the partition (Result.LeaseOwner until Result.LeaseExpires); nothing was done
	StatusFenced     Status = "fenced"      // the lease was lost while copying; production stopped
	StatusFailed     Status = "failed"      // an error stopped the partition; see Result.Err
	StatusNotStarted Status = "not_started" // the run ended before this partition's turn
	// StatusInDoubt: records may have been appended to the target that it
	// does not show yet (its high watermark stayed below its leader's log
	// end for Options.ReplicationWait), so the run could not find out what
	// the target holds. The lease is kept, nothing was re-sent, and the
	// checkpoint holds only what was acknowledged: the next run waits for
	// the target again before it reconciles. See Result.Err.
	StatusInDoubt Status = "in_doubt"
)

// Failed reports whether s is a failure that needs attention: failed,
// fenced or in_doubt (Report.Totals counts them; the Lambda worker logs
// them as errors). Partial, leased and not_started partitions only wait
// for the next run.
func (s Status) Failed() bool {
	return s == StatusFailed || s == StatusFenced || s == StatusInDoubt
}

// Report is the outcome of one Engine.Run.
type Report struct {
	Pipeline   string
	Partitions []Result // in the order of the source partitions
	Duration   time.Duration
	// StoreRequests is how many requests this run made to the checkpoint
	// store, where the store counts them (DynamoDB; 0 otherwise): the
	// store's count at the end of Run minus its count at the start, so a
	// store that serves several runs in turn (run --every, a warm Lambda)
	// reports each run's own. Runs sharing one store at the same time
	// count each other's requests.
	StoreRequests int64
	// Resent is how many produce requests of unknown outcome (a timeout
	// after the leader may have appended) the target sent again, identical,
	// as an idempotent producer: the leader appended each at most once.
	Resent int64
	// ReplicationWaits is how many times a partition waited, before
	// reconciling, for the target's high watermark to reach its leader's
	// log end (Options.ReplicationWait), and ReplicationWaited the time
	// those waits took, summed over the partitions.
	ReplicationWaits  int64
	ReplicationWaited time.Duration
	// ConfigChanges are the topic configs config sync changed on the target
	// before copying (Options.CreateTopics).
	ConfigChanges []ConfigChange
	// ConfigSynced is whether config sync ran in this run (CreateTopics,
	// and due: ConfigSyncInterval after the last that succeeded), and
	// ConfigSyncError why it failed, "" when it did not; the copy goes on.
	ConfigSynced    bool
	ConfigSyncError string
	// ACLs is what ACL sync did before copying (Options.SyncACLs); nil when
	// it did not run.
	ACLs *ACLSync
	// Now is when the run ended and its time figures were taken (Latency,
	// RecordAge, Headroom).
	Now time.Time
}

// resentCounter is a Target that re-sends requests of unknown outcome itself
// (kafkago.Target with idempotent produce) and counts them.
type resentCounter interface{ Resent() int64 }

// Result is the outcome of one partition.
type Result struct {
	catchup.Partition
	From, To    int64 // the window [From, To) planned, after reconciliation
	End         int64 // the source end fixed at the start of the run (plan.Planned.End); above To when max_records cut the window
	Next        int64 // the checkpoint committed at the end
	Copied      int64 // records produced and acknowledged
	Bytes       int64 // their bytes as written (catchup.Record.Size, provenance header included)
	Skipped     int64 // offsets found already copied in the target by reconciliation at the start
	LoopSkipped int64 // records not copied because they came from the target cluster
	Retries     int   // produces and fetches retried
	Reconciled  int   // reconciliations with the target
	// Settled is how far the target partition's end moved while a run that
	// took over an unreleased lease waited for it to hold still (see
	// Options.TakeoverSettle): records its dead holder had in flight.
	Settled int64
	// ReplicationWaits and ReplicationWaited: see Report.
	ReplicationWaits  int64
	ReplicationWaited time.Duration
	// Newest is the largest timestamp of the records copied (zero if none).
	Newest time.Time
	// Oldest is the timestamp of the oldest record not copied, read after
	// the run for a partition with lag left; zero if none or unknown.
	Oldest time.Time
	// Deletion is when the source's retention may delete Oldest.
	Deletion plan.Deletion
	Gap      *catchup.GapError
	// LeaseOwner and LeaseExpires name the run that held a StatusLeased
	// partition and when its lease runs out (the partition is free then,
	// even if its holder died); empty when the store did not say.
	LeaseOwner   string
	LeaseExpires time.Time
	Duration     time.Duration
	Status       Status
	Err          error
}

// GapSkipped returns the gap that on_gap: skip skipped in the run, nil if
// none: a gap that failed the partition is its Err, not a skipped one.
func (r *Result) GapSkipped() *catchup.GapError {
	var ge *catchup.GapError
	if r.Gap == nil || errors.As(r.Err, &ge) && *ge == *r.Gap {
		return nil
	}
	return r.Gap
}

// Lag is the number of offsets left to copy up to the source end fixed at
// the start of the run: what a window limit (max_records too) left.
func (r *Result) Lag() int64 { return max(0, max(r.To, r.End)-r.Next) }

// Done reports whether every partition of the run is StatusDone: copied to
// the end fixed at the start of the run. It is the only outcome of a run that
// exits 0 (CLI) and counts as done (Lambda summary); partial, leased, failed,
// fenced and not_started partitions all leave lag behind. A run that selected
// no partition is not done: it copied nothing it was asked to.
func (r *Report) Done() bool {
	if len(r.Partitions) == 0 {
		return false
	}
	for i := range r.Partitions {
		if r.Partitions[i].Status != StatusDone {
			return false
		}
	}
	return true
}

// Totals sums the results.
func (r *Report) Totals() (copied, bytes int64, failed int) {
	for _, p := range r.Partitions {
		copied += p.Copied
		bytes += p.Bytes
		if p.Status.Failed() {
			failed++
		}
	}
	return copied, bytes, failed
}
