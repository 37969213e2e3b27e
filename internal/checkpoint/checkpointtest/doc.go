// Package checkpointtest is the conformance suite of checkpoint.Store, in the
// spirit of testing/fstest: every implementation (memstore, filestore,
// dynamostore) runs Run in its tests, so that each sentence of the Store
// contract is proved once and holds everywhere.
package checkpointtest
