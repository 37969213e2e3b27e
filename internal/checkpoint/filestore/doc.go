// Package filestore is the checkpoint.Store for local runs: one JSON file per
// pipeline in a directory, written atomically and durably, with a lock file
// that keeps two catchup processes off the same pipeline. It needs no
// service, so a laptop run resumes where the last one stopped.
//
// For a pipeline named p the directory holds:
//
//	p.json  the checkpoints, human-readable, {"version": 1, ...}
//	p.lock  the lock, with the pid of the process that holds it
//
// Leases arbitrate between the runs of one process only: the lock already
// keeps other processes out. So when a Store first reads a pipeline's file,
// the leases recorded in it belong to a process that is gone, and the Store
// treats them as expired (their owners and epochs stay, so the next Acquire
// increments the epochs and the old leases stay fenced, and Load shows
// which leases were never released). A crashed run therefore never makes
// the next local run wait for its ttl.
package filestore
