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
	// a pipeline creates target topics, "idempotent" when producer.idempotent
	// is on (the default), "translate" by catchup translate only, "plan" by
	// catchup plan only (topic retention).
	Feature string
}

// Features a Need may be sent for.
const (
	FeatureAlways       = ""
	FeatureCreateTopics = "create_topics"
	FeatureIdempotent   = "idempotent"
	FeatureTranslate    = "translate"
	FeaturePlan         = "plan"
)

// Needs returns every kind of request catchup sends, by role. Metadata,
// ListOffsets and Fetch go to both clusters: the target is read back to
// reconcile a run's end, and by verify and translate. The idempotent
// producer's InitProducerId has no transactional id, so it needs
// IDEMPOTENT_WRITE on the cluster (kafka-cluster:WriteDataIdempotently);
// Kafka 2.8 and later also accept WRITE on any topic. OffsetCommit for an
// empty group is checked as READ on the group and READ on each topic.
// Every request on MSK with IAM also needs kafka-cluster:Connect.
func Needs() []Need {
	const (
		describeTopic = "kafka-cluster:DescribeTopic"
		readData      = "kafka-cluster:ReadData"
		describeGroup = "kafka-cluster:DescribeGroup"
	)
	return []Need{
		{RoleSource, protocol.Metadata, "DESCRIBE TOPIC", describeTopic, FeatureAlways},
		{RoleSource, protocol.ListOffsets, "DESCRIBE TOPIC", describeTopic, FeatureAlways},
		{RoleSource, protocol.Fetch, "READ TOPIC", readData, FeatureAlways},
		{RoleSource, protocol.DescribeConfigs, "DESCRIBE_CONFIGS TOPIC", "kafka-cluster:DescribeTopicDynamicConfiguration", FeatureCreateTopics},
		{RoleSource, protocol.DescribeConfigs, "DESCRIBE_CONFIGS TOPIC", "kafka-cluster:DescribeTopicDynamicConfiguration", FeaturePlan},
		{RoleSource, protocol.FindCoordinator, "DESCRIBE GROUP", describeGroup, FeatureTranslate},
		{RoleSource, protocol.OffsetFetch, "DESCRIBE GROUP", describeGroup, FeatureTranslate},
		{RoleSource, protocol.OffsetFetch, "DESCRIBE TOPIC", describeTopic, FeatureTranslate},

		{RoleTarget, protocol.Metadata, "DESCRIBE TOPIC", describeTopic, FeatureAlways},
		{RoleTarget, protocol.ListOffsets, "DESCRIBE TOPIC", describeTopic, FeatureAlways},
		{RoleTarget, protocol.Fetch, "READ TOPIC", readData, FeatureAlways},
		{RoleTarget, protocol.Produce, "WRITE TOPIC", "kafka-cluster:WriteData", FeatureAlways},
		{RoleTarget, protocol.InitProducerId, "IDEMPOTENT_WRITE CLUSTER", "kafka-cluster:WriteDataIdempotently", FeatureIdempotent},
		{RoleTarget, protocol.CreateTopics, "CREATE TOPIC", "kafka-cluster:CreateTopic", FeatureCreateTopics},
		{RoleTarget, protocol.FindCoordinator, "DESCRIBE GROUP", describeGroup, FeatureTranslate},
		{RoleTarget, protocol.DescribeGroups, "DESCRIBE GROUP", describeGroup, FeatureTranslate},
		{RoleTarget, protocol.OffsetCommit, "READ GROUP", "kafka-cluster:AlterGroup", FeatureTranslate},
		{RoleTarget, protocol.OffsetCommit, "READ TOPIC", readData, FeatureTranslate},
	}
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
