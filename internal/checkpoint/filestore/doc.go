// Package filestore is the checkpoint.Store for local runs: a snapshot and a
// journal per pipeline in a directory, both JSON text, written durably, with
// a lock file that keeps two catchup processes off the same pipeline. It
// needs no service, so a laptop run resumes where the last one stopped.
//
// For a pipeline named p the directory holds:
//
//	p.json     the snapshot: every checkpoint, human-readable, {"version": 1, ...}
//	p.journal  the changes since the snapshot, one line each (absent when none)
//	p.lock     the lock, with the pid of the process that holds it
//
// # Writes
//
// Every change (a lease, a commit, a release, a reset, a verification) is
// one line appended to p.journal holding the partition's whole new state,
// fsynced before the change is visible: about 230 bytes whatever the size
// of the pipeline. A reader takes the snapshot and replays the journal, the
// last line of a partition winning. Once the journal is as large as the
// snapshot (and at least 64 KiB), the next change writes a new snapshot
// (temporary file, fsync, rename, fsync of the directory) and removes the
// journal, so the snapshot's bytes are paid for by as many bytes of
// changes: a run's write cost is amortised O(changes), not O(pipeline). Close
// folds the journal of a pipeline of up to 16 KiB (about 50 partitions) into
// its snapshot, so a small pipeline rests in one readable file.
//
// Crashes: each append is fsynced before the next begins, so only the last
// line can be torn; a last line without its newline is the write of a change
// that never returned, and the next Store drops it and cuts it off. Any other
// bad line is an error naming the file and line, as a damaged snapshot is: a
// damaged file is never taken for an empty one. A crash between a new
// snapshot and the journal's removal leaves lines that the snapshot already
// holds; replaying them changes nothing.
//
// Why a journal: rewriting and fsyncing the whole pipeline file on every
// change costs O(N) bytes per change and O(N²) per run at N partitions
// (BenchmarkRunWriteBytes measures a run's bytes). One file per topic would
// still rewrite O(partitions per topic) per change, and group commit (one
// rewrite for the changes of concurrent partitions) divides the rewrites by
// the parallelism but keeps each O(N). An embedded database such as bbolt
// writes whole dirty pages and a meta page per transaction, many times the
// journal's line, and would replace the text files that people read and
// edit with a binary one, needing a migration. The journal writes a line per
// change, keeps the snapshot's format unchanged (old files are read as they
// are: a snapshot without a journal), and is a few dozen lines.
//
// A topic's begin (checkpoint.Begin, written once) is a journal line of its
// own, {"begin": {"topic": ..., "at": ..., "offsets": [...]}}, and the
// snapshot's "begins" list. A catchup from before begins refuses a file
// that holds one (an unknown field), rather than dropping it.
//
// An older catchup reads p.json alone: it would resume a large pipeline
// from the snapshot's older checkpoints, behind the journal's.
//
// # Leases
//
// Leases arbitrate between the runs of one process only: the lock already
// keeps other processes out. So when a Store first reads a pipeline's file,
// the leases recorded in it belong to a process that is gone, and the Store
// treats them as expired (their owners and epochs stay, so the next Acquire
// increments the epochs and the old leases stay fenced, and Load shows
// which leases were never released). A crashed run therefore never makes
// the next local run wait for its ttl.
package filestore
