package kafkago

import (
	"slices"

	"github.com/segmentio/kafka-go/protocol"
)

// Role is the side of a pipeline a cluster is on.
type Role string

// The two roles.
const (
	RoleSource Role = "source"
	RoleTarget Role = "target"
)

// Need is one kind of Kafka request catchup sends to a cluster of one role,
// with the Kafka ACL and the Amazon MSK IAM action the broker checks for it.
// docs/permissions.md is this table in prose, template.yaml grants its IAM
// actions, and a test holds the requests the code sends to it.
type Need struct {
	Role Role
	API  protocol.ApiKey
	// ACL is the operation and resource type as kafka-acls names them.
	ACL string
	// IAM is the kafka-cluster: action of an MSK cluster with IAM access
	// control; "" when no action beyond kafka-cluster:Connect is checked.
	IAM string
	// Feature is when the request is sent: "" always, "create_topics" when
	// a pipeline creates target topics (and grows them and syncs their
	// configs), "idempotent" when producer.idempotent is on (the default),
	// "translate" by catchup translate only, "sync_groups" when a pipeline
	// sets sync_groups (by catchup run and the Lambda dispatcher),
	// "sync_acls" when a pipeline sets sync_acls.
	Feature string
}

// Features a Need may be sent for.
const (
	FeatureAlways       = ""
	FeatureCreateTopics = "create_topics"
	FeatureIdempotent   = "idempotent"
	FeatureTranslate    = "translate"
	FeatureSyncGroups   = "sync_groups"
	FeatureSyncACLs     = "sync_acls"
)

// Needs returns every kind of request catchup sends, by role. Metadata,
// ListOffsets and Fetch go to both clusters: the target is read back to
// reconcile a run's end, and by verify, translate and group sync.
// DescribeConfigs goes to the source always: a run that leaves lag reads
// the topics' retention for its time figures (plan and create_topics read
// it too). OffsetForLeaderEpoch (replica id -1, so DESCRIBE, not
// CLUSTER_ACTION) reads the target leader's log end when a run takes over
// an unreleased lease. With create_topics a run also grows target topics
// (CreatePartitions) and syncs their configs (DescribeConfigs, then
// IncrementalAlterConfigs). ListGroups is answered with the groups the
// caller may DESCRIBE (or all of them with DESCRIBE on the cluster). The
// idempotent producer's InitProducerId has no transactional id, so it needs
// IDEMPOTENT_WRITE on the cluster (kafka-cluster:WriteDataIdempotently);
// Kafka 2.8 and later also accept WRITE on any topic. OffsetCommit for an
// empty group is checked as READ on the group and READ on each topic.
// With sync_acls a run lists the topic ACLs of both clusters (DescribeAcls:
// DESCRIBE on the cluster) and creates those the target lacks (CreateAcls:
// ALTER on the cluster).
// Every request on MSK with IAM also needs kafka-cluster:Connect.
func Needs() []Need {
	const (
		describeTopic   = "kafka-cluster:DescribeTopic"
		readData        = "kafka-cluster:ReadData"
		describeGroup   = "kafka-cluster:DescribeGroup"
		alterGroup      = "kafka-cluster:AlterGroup"
		describeConfigs = "kafka-cluster:DescribeTopicDynamicConfiguration"
	)
	return []Need{
		{RoleSource, protocol.Metadata, "DESCRIBE TOPIC", describeTopic, FeatureAlways},
		{RoleSource, protocol.ListOffsets, "DESCRIBE TOPIC", describeTopic, FeatureAlways},
		{RoleSource, protocol.Fetch, "READ TOPIC", readData, FeatureAlways},
		{RoleSource, protocol.DescribeConfigs, "DESCRIBE_CONFIGS TOPIC", describeConfigs, FeatureAlways},
		{RoleSource, protocol.FindCoordinator, "DESCRIBE GROUP", describeGroup, FeatureTranslate},
		{RoleSource, protocol.OffsetFetch, "DESCRIBE GROUP", describeGroup, FeatureTranslate},
		{RoleSource, protocol.OffsetFetch, "DESCRIBE TOPIC", describeTopic, FeatureTranslate},
		{RoleSource, protocol.ListGroups, "DESCRIBE GROUP", describeGroup, FeatureSyncGroups},
		{RoleSource, protocol.FindCoordinator, "DESCRIBE GROUP", describeGroup, FeatureSyncGroups},
		{RoleSource, protocol.OffsetFetch, "DESCRIBE GROUP", describeGroup, FeatureSyncGroups},
		{RoleSource, protocol.OffsetFetch, "DESCRIBE TOPIC", describeTopic, FeatureSyncGroups},
		{RoleSource, protocol.DescribeAcls, "DESCRIBE CLUSTER", "kafka-cluster:DescribeCluster", FeatureSyncACLs},

		{RoleTarget, protocol.Metadata, "DESCRIBE TOPIC", describeTopic, FeatureAlways},
		{RoleTarget, protocol.ListOffsets, "DESCRIBE TOPIC", describeTopic, FeatureAlways},
		{RoleTarget, protocol.Fetch, "READ TOPIC", readData, FeatureAlways},
		{RoleTarget, protocol.Produce, "WRITE TOPIC", "kafka-cluster:WriteData", FeatureAlways},
		{RoleTarget, protocol.OffsetForLeaderEpoch, "DESCRIBE TOPIC", describeTopic, FeatureAlways},
		{RoleTarget, protocol.InitProducerId, "IDEMPOTENT_WRITE CLUSTER", "kafka-cluster:WriteDataIdempotently", FeatureIdempotent},
		{RoleTarget, protocol.CreateTopics, "CREATE TOPIC", "kafka-cluster:CreateTopic", FeatureCreateTopics},
		{RoleTarget, protocol.CreatePartitions, "ALTER TOPIC", "kafka-cluster:AlterTopic", FeatureCreateTopics},
		{RoleTarget, protocol.DescribeConfigs, "DESCRIBE_CONFIGS TOPIC", describeConfigs, FeatureCreateTopics},
		{RoleTarget, protocol.IncrementalAlterConfigs, "ALTER_CONFIGS TOPIC", "kafka-cluster:AlterTopicDynamicConfiguration", FeatureCreateTopics},
		{RoleTarget, protocol.FindCoordinator, "DESCRIBE GROUP", describeGroup, FeatureTranslate},
		{RoleTarget, protocol.DescribeGroups, "DESCRIBE GROUP", describeGroup, FeatureTranslate},
		{RoleTarget, protocol.OffsetCommit, "READ GROUP", alterGroup, FeatureTranslate},
		{RoleTarget, protocol.OffsetCommit, "READ TOPIC", readData, FeatureTranslate},
		{RoleTarget, protocol.FindCoordinator, "DESCRIBE GROUP", describeGroup, FeatureSyncGroups},
		{RoleTarget, protocol.DescribeGroups, "DESCRIBE GROUP", describeGroup, FeatureSyncGroups},
		{RoleTarget, protocol.OffsetFetch, "DESCRIBE GROUP", describeGroup, FeatureSyncGroups},
		{RoleTarget, protocol.OffsetFetch, "DESCRIBE TOPIC", describeTopic, FeatureSyncGroups},
		{RoleTarget, protocol.OffsetCommit, "READ GROUP", alterGroup, FeatureSyncGroups},
		{RoleTarget, protocol.OffsetCommit, "READ TOPIC", readData, FeatureSyncGroups},
		{RoleTarget, protocol.DescribeAcls, "DESCRIBE CLUSTER", "kafka-cluster:DescribeCluster", FeatureSyncACLs},
		{RoleTarget, protocol.CreateAcls, "ALTER CLUSTER", "kafka-cluster:AlterCluster", FeatureSyncACLs},
	}
}

// DispatchReads returns the requests the Lambda dispatcher sends to a
// cluster besides those of sync_groups: its survey of the source, and
// group sync's reading of the target's copies. template.yaml grants the
// dispatch function the actions of these and, with MskSyncGroups, those of
// sync_groups; nothing else (no Produce, no DescribeConfigs).
func DispatchReads() []protocol.ApiKey {
	return []protocol.ApiKey{protocol.Metadata, protocol.ListOffsets, protocol.Fetch}
}

// IAMActions returns the sorted kafka-cluster: actions a cluster of role
// needs for requests sent always and for features, kafka-cluster:Connect
// included.
func IAMActions(role Role, features ...string) []string {
	acts := []string{"kafka-cluster:Connect"}
	for _, n := range Needs() {
		if n.Role == role && n.IAM != "" && (n.Feature == FeatureAlways || slices.Contains(features, n.Feature)) {
			acts = append(acts, n.IAM)
		}
	}
	slices.Sort(acts)
	return slices.Compact(acts)
}
