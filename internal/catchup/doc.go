// Package catchup holds the vocabulary of the catchup replicator: partitions,
// windows, records and the errors every other package speaks in. It imports
// nothing but the standard library.
//
// catchup copies bounded windows of a source Kafka cluster into a target
// cluster. Its contract, which the tests of the other packages prove:
//
//  1. No loss. A checkpoint never moves past a record whose produce was not
//     acknowledged with the configured acks. A gap (source records that no
//     longer exist but were never copied) fails the partition with the exact
//     missing range, unless the pipeline says on_gap: skip, which records it.
//  2. No duplicates, with provenance on. Every copied record carries a
//     provenance header (see Provenance). After a crash, a timeout or an
//     ambiguous produce error, a run reads the target partition backwards from
//     its end, never below the target offset stored at the last commit, finds
//     the highest source offset already written and resumes after it.
//  3. Fidelity. Key (nil stays nil, empty stays empty), value, headers,
//     timestamp and partition number are preserved. Aborted transactional
//     records are not copied under read_committed.
//  4. Fencing. Every checkpoint write is conditional on the lease epoch; a run
//     that lost its lease stops producing for that partition.
//  5. Deadline. A run stops before its deadline and leaves a consistent
//     checkpoint; partial progress is success.
package catchup
