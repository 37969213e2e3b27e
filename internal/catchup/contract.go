package catchup

// The data that crosses the contracts between the engine (internal/replicate
// and the packages beside it) and the Kafka adapter (internal/kafkago):
// results and arguments of replicate.Source, replicate.Target and the topic
// interfaces. They live here, in the vocabulary, so that the adapter
// implements those interfaces without importing the engine.

// Fetched is the result of one fetch (replicate.Source.Fetch).
type Fetched struct {
	Records []Record
	Next    int64
	Offsets Offsets // watermarks in the fetch response
	// Release, if not nil, hands the memory of Records (the records and
	// the bytes they point to) back to the Source for its next fetches.
	// The caller calls it at most once, when it no longer uses Records,
	// nor any key, value or header of them; not calling it only forgoes
	// the reuse.
	Release func()
}

// LogEnd is what the leader of a target partition holds; see
// replicate.Target.LogEnd.
type LogEnd struct {
	End           int64 // log end offset: one past the last record appended
	HighWatermark int64 // one past the last record replicated to every in-sync replica
	Epoch         int32 // leader epoch
}

// TopicSpec describes a topic: as the source has it
// (replicate.TopicDescriber) or as the target should get it
// (replicate.TopicCreator).
type TopicSpec struct {
	Topic      string
	Partitions int
	// ReplicationFactor of a topic to create; -1 is the target broker's
	// default (default.replication.factor). Unset by DescribeTopics.
	ReplicationFactor int
	// Configs are topic configs by name: those set explicitly on a source
	// topic, or those to set on a topic to create.
	Configs map[string]string
}
