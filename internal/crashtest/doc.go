// Package crashtest proves that catchup's copies are exactly resumable, end
// to end: it runs the real catchup binary against two in-process kfake
// clusters, kills it with SIGKILL again and again at moments it aims at
// (aim_test.go), lets it finish, and compares the target with the source
// record for record, with the checkpoint store on disk and in DynamoDB
// (dynalite), with provenance off, behind a connection that drops produce
// responses, and with the store lost or rolled back between kills
// (loss_test.go). The package holds tests only; `make crashtest` runs them
// with more kills (docs/crash-harness.md).
package crashtest
