// Package crashtest proves that catchup's copies are exactly resumable, end
// to end: it runs the real catchup binary against two in-process kfake
// clusters, kills it with SIGKILL at random moments again and again, lets it
// finish, and compares the target with the source record for record, with
// the checkpoint store on disk and in DynamoDB (dynalite), with provenance
// off, and behind a connection that drops produce responses. The package
// holds tests only; `make crashtest` runs them with more kills.
package crashtest
