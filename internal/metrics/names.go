package metrics

// Dimensions of catchup's metrics.
const (
	DimService  = "service"  // the deployment (the CloudFormation stack), for alarms across pipelines
	DimPipeline = "pipeline" // the pipeline name (for a backfill job too: a job mints no new dimension value)
	DimTopic    = "topic"    // the source topic
)

// Defaults of the functions' CATCHUP_METRICS_NAMESPACE and CATCHUP_SERVICE.
const (
	DefaultNamespace = "catchup" // CloudWatch namespace of the metrics
	DefaultService   = "catchup" // value of the service dimension
)

// Metrics of a replicate invocation, per pipeline and topic.
const (
	Records          = "Records"          // records copied and acknowledged (Count)
	BytesCopied      = "Bytes"            // their bytes (Bytes)
	Windows          = "Windows"          // partitions whose window was worked on: done or partial (Count)
	WindowsDone      = "WindowsDone"      // partitions copied to their window end (Count)
	Gaps             = "Gaps"             // partitions with a gap, skipped or failing (Count)
	FencedCommits    = "FencedCommits"    // partitions whose lease was lost while copying (Count)
	Retries          = "Retries"          // fetches and produces retried (Count)
	FailedPartitions = "FailedPartitions" // partitions that failed (Count)
	// InDoubtPartitions: partitions that ended in_doubt: the target's high
	// watermark stayed below its leader's log end for replication_wait, so
	// what it holds could not be read; their leases are kept (Count).
	InDoubtPartitions = "InDoubtPartitions"
)

// Metrics of a replicate invocation, per pipeline.
const (
	DynamoDBRequests = "DynamoDBRequests" // requests this run sent to the checkpoint table, retries included (Count)
	// Resent: produce requests of unknown outcome sent again, identical
	// (idempotent produce) (Count).
	Resent = "Resent"
	// ReplicationWaits and ReplicationWaited: the waits, before a
	// reconciliation, for the target's high watermark to reach its leader's
	// log end (Count), and their time summed (Milliseconds).
	ReplicationWaits  = "ReplicationWaits"
	ReplicationWaited = "ReplicationWaited"
	// ReplicationLatency is, over the partitions that copied records, the
	// longest time from the timestamp of the newest record copied to the
	// end of the invocation (Seconds); absent when nothing was copied.
	ReplicationLatency = "ReplicationLatency"
	// RecordAge is the age of the oldest record not yet copied at the end
	// of the invocation (Seconds); absent when nothing is left.
	RecordAge = "RecordAge"
	// RetentionHeadroom is the shortest time until the source's retention
	// may delete the oldest record not yet copied of a partition, as
	// `catchup plan` prints it in DELETED_IN (Seconds, negative when
	// overdue); absent when nothing is left or nothing deletes by time.
	RetentionHeadroom = "RetentionHeadroom"
	// TopicConfigChanges counts the target topic configs config sync
	// changed (create_topics) (Count).
	TopicConfigChanges = "TopicConfigChanges"
	// ACLSyncFailed is 1 when the invocation's topic ACL sync (sync_acls)
	// failed, so the target's ACLs may lag its source's, and 0 when it ran
	// and succeeded (Count); absent when ACL sync did not run this time
	// (off, or not due: acl_sync_interval). The run's exit code is the
	// copy's either way.
	ACLSyncFailed = "ACLSyncFailed"
	// TopicConfigSyncFailed is ACLSyncFailed for the topic config sync of
	// create_topics: 1 when the invocation's sync failed, so the target's
	// topic configs may lag its source's, 0 when it ran and succeeded
	// (Count); absent when it did not run (off, or not due:
	// config_sync_interval after one that succeeded).
	TopicConfigSyncFailed = "TopicConfigSyncFailed"
	// BackfillLatency and BackfillRecordAge are ReplicationLatency and
	// RecordAge of a backfill job's invocation, under names of their own:
	// a job copies old records by design, and must not fire the alarms
	// on how far the scheduled replica is behind.
	BackfillLatency   = "BackfillLatency"
	BackfillRecordAge = "BackfillRecordAge"
)

// Metrics of a dispatch invocation, per pipeline and topic (LagRecords and
// LagBytes) and per pipeline (all of them, and Gaps: partitions a gap blocks).
const (
	LagRecords         = "LagRecords"         // offsets left to copy (Count)
	LagBytes           = "LagBytes"           // estimated bytes left to copy (Bytes)
	Shards             = "Shards"             // replicate invocations sent (Count)
	LeasedPartitions   = "LeasedPartitions"   // partitions skipped because a live lease holds them (Count)
	DeferredPartitions = "DeferredPartitions" // partitions with lag left for the next dispatch: over the shard cap (Count)
	BlockedPartitions  = "BlockedPartitions"  // partitions that cannot be copied until an operator acts (gap, recreated topic) (Count)
	ETATicks           = "ETATicks"           // dispatches it takes to hand out the backlog, this one included; per service only (Count)
	// GroupOffsetsSynced and GroupOffsetsSkipped count the group partitions
	// group sync (sync_groups) committed on the target, and left alone
	// (active group, copy behind, target ahead), in the dispatch (Count).
	GroupOffsetsSynced  = "GroupOffsetsSynced"
	GroupOffsetsSkipped = "GroupOffsetsSkipped"
)

// Names lists every metric name above, for checks of the template.
var Names = []string{
	Records, BytesCopied, Windows, WindowsDone, Gaps, FencedCommits, Retries, FailedPartitions, LagRecords,
	DynamoDBRequests, LagBytes, Shards, LeasedPartitions, DeferredPartitions, BlockedPartitions, ETATicks,
	InDoubtPartitions, Resent, ReplicationWaits, ReplicationWaited,
	ReplicationLatency, RecordAge, RetentionHeadroom, TopicConfigChanges, GroupOffsetsSynced, GroupOffsetsSkipped,
	BackfillLatency, BackfillRecordAge, ACLSyncFailed, TopicConfigSyncFailed,
}
