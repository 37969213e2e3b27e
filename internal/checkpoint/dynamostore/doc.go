// Package dynamostore keeps catchup's checkpoints and leases in a DynamoDB
// table: the checkpoint.Store for runs in AWS, where invocations overlap and
// progress must outlive both Kafka clusters.
//
// # Item schema
//
// One item per pipeline and source partition:
//
//	pipeline      S     partition key: the pipeline name
//	partition     S     sort key: topic + "#" + partition number in 10 digits, "orders#0000000012"
//	next          N     next source offset to copy (0 until the first commit)
//	exists        BOOL  true once a commit or a reset wrote next (Checkpoint.Exists)
//	target_end    N     target end offset seen at the last commit; -1 if unknown
//	start         N     source offset where copying began, set once by the first commit
//	                    that carries one; absent if unknown (items from before it)
//	owner         S     lease owner; absent when the lease is free
//	epoch         N     fencing epoch, incremented by every Acquire, never reset
//	lease_expires N     lease expiry, unix milliseconds; absent when free
//	records       N     records copied, all runs together
//	bytes         N     bytes copied, all runs together
//	commits       N     commits written
//	last_error    S     error recorded by the last commit; absent after a clean one
//	gaps          L     skipped gaps, oldest first, the last checkpoint.MaxGaps: maps {from N, to N, at N (unix ms)}
//	updated       N     time of the last write, unix milliseconds
//	last_op       S     random id of the last Acquire, Commit or Release (retry idempotency)
//	verification  M     last verify result, absent until one: {at N (unix ms), from N, to N,
//	                    source N, matched N, missing N, duplicated N, differing N,
//	                    out_of_order N, loop_skipped N, replaced N, foreign N, outside N,
//	                    target N, behind N (the seven absent in older items: zero),
//	                    stuck S, first S (absent when empty)}
//
// and one item per pipeline and topic begun under start: latest, under the
// partition key "!begins#" + pipeline and the sort key "!begin#" + topic, out
// of Load's way (begin.go has its attributes and why).
//
// Kafka topic names are [a-zA-Z0-9._-]{1,249}, so '#' cannot occur in one;
// it sorts below every character a topic may hold, and the partition number
// is zero-padded to the width of int32, so the sort key orders items exactly
// as catchup.Partition.Compare does. The key is split at the last '#', so it
// stays unambiguous even for a name Kafka would refuse.
//
// Numbers are written with strconv and read back with strconv: every int64 is
// stored exactly (DynamoDB numbers have 38 digits of precision). Times are
// kept to the millisecond and read back in UTC.
//
// # Conditions
//
// Every write of a lease or a checkpoint is one UpdateItem with a
// ConditionExpression; nothing needs transactions or TTL (dynalite has
// neither). Acquire succeeds if the lease is free (attribute_not_exists(owner):
// Release and Reset remove the owner, no write stores an empty one), expired
// (lease_expires < now) or already the caller's, and adds 1 to the epoch.
// Commit, Renew and Release require owner = me AND epoch = mine; Commit also
// requires that next does not move backwards. Reset requires that no live
// lease is held, and removes an expired owner so that the zombie's
// later Commit is fenced instead of overwriting the reset.
//
// RecordVerification is an UpdateItem without a condition that sets only
// verification: it needs no lease, and a run holding the partition keeps its
// lease and epoch, its commits and the verification being serialised by
// DynamoDB like any two writes. An item it creates has no next, exists,
// owner or epoch, so it reads as a partition never copied.
//
// When a Commit's condition fails, the store tells ErrFenced from ErrRegress
// from the item as it was: it asks for it with
// ReturnValuesOnConditionCheckFailure ALL_OLD (atomic on AWS) and, where the
// server returns no item (dynalite 4.0.0 ignores the parameter), reads it
// with one consistent GetItem. That read is not atomic with the failed write,
// but both answers change nothing and stop the caller, so a race between them
// only changes which of the two errors it gets.
//
// # Retries and idempotency
//
// The store sends its requests through its own retryer (see NewRetryer), so
// throttling, 5xx and connection errors are retried with jittered exponential
// backoff until the attempts or the caller's context deadline run out. A
// retried request may be one whose first attempt was applied but whose
// response was lost. Renew, Reset and RecordVerification are harmless to
// repeat; Commit is not (it adds to the counters), so every Commit carries
// a random id in last_op and its condition refuses an item that already
// holds that id: a repeat fails the condition, and the store reports the
// commit as done. Acquire does the same, since a repeat would add to the
// epoch again, which the engine reads as another run having held the
// lease (and settles before reconciling); the repeat returns the lease
// its first attempt took. Release uses the same id to recognise its own
// repeat.
//
// A Commit that runs out of context returns the context error. Its outcome is
// then unknown to the caller (on AWS the write may have landed just before
// the deadline), but the checkpoint is either the old one or the new one,
// never anything else: the caller stops and the next run reconciles.
//
// # Cost
//
// Load is one Query per 1 MB page, consistent: about one read unit per 4 KB
// of the pipeline's items (351 units at 10,000 partitions). LoadPartitions,
// what a worker given a shard calls, is one consistent BatchGetItem per 100
// partitions asked for, plus its retries of unprocessed keys: one read unit
// per checkpoint of up to 4 KB, whatever the pipeline's size (see
// LoadPartitions for why not a Query per sort key range). Reads reports the
// items read and the units consumed. Every other method is one
// UpdateItem (RecordVerification included), plus one GetItem after a failed
// Commit or Release condition, and one UpdateItem that drops the oldest gap
// after a Commit whose gap made the list longer than checkpoint.MaxGaps. LoadBegins is one Query of the pipeline's
// begin items; PutBegin one conditional PutItem, plus one GetItem when another
// writer's begin was there first.
// Requests counts every HTTP attempt the store makes, retries included.
package dynamostore
