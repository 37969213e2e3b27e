// Package config loads catchup's pipeline configuration: a YAML file with one
// or more pipelines, decoded strictly (an unknown key is an error naming the
// key, its line and the nearest valid key), with defaults applied and every
// problem reported at once.
package config

import (
	"regexp"
	"time"
)

// File is a whole configuration file.
type File struct {
	// Store is where checkpoints live: "file://PATH" (a directory; the
	// default is "file://.catchup") or "dynamodb://TABLE".
	Store     string     `yaml:"store"`
	Pipelines []Pipeline `yaml:"pipelines"`
}

// Pipeline copies selected topics of one source cluster into one target
// cluster. Its Name is the checkpoint namespace.
type Pipeline struct {
	Name   string  `yaml:"name"`
	Source Cluster `yaml:"source"`
	Target Cluster `yaml:"target"`
	Topics Topics  `yaml:"topics"`

	// TargetTopic names the target topic of each source topic: a template
	// with {topic} (the source topic) and optionally {source} (the source
	// cluster name), such as "{source}.{topic}" or "{topic}.mirror".
	// Default "{topic}": names are kept.
	TargetTopic string `yaml:"target_topic"`
	// LoopPrevention skips records whose provenance says they were copied
	// from the target cluster, so that two pipelines copying in opposite
	// directions (active-active) never copy a record back (default true).
	LoopPrevention *bool `yaml:"loop_prevention"`
	// CreateTopics creates missing target topics before copying, with the
	// source topic's partition count and those of its configs that decide
	// what the target keeps and accepts (cleanup.policy, retention.ms,
	// retention.bytes, max.message.bytes, min.insync.replicas, ...) that are
	// set on the source topic itself, and adds partitions to a target topic
	// whose source topic has grown. Default false: a missing or short target
	// topic fails that topic's partitions.
	CreateTopics bool `yaml:"create_topics"`
	// ReplicationFactor of the topics CreateTopics creates (default -1: the
	// target brokers' default.replication.factor).
	ReplicationFactor int `yaml:"replication_factor"`
	// ConfigSyncInterval is, with CreateTopics, the least time between two
	// syncs of the copied configs of existing target topics with their
	// source topics by one process (default 10m, as MirrorMaker 2; 0: every
	// run). A process that makes one run syncs once.
	ConfigSyncInterval time.Duration `yaml:"config_sync_interval"`
	// SyncACLs gives each copied target topic the topic ACLs of its source
	// topic, as MirrorMaker 2 (sync.topic.acls.enabled) and MSK Replicator
	// do and with their rules: LITERAL patterns only, never ALLOW WRITE,
	// ALLOW ALL made READ, DENY copied; target ACLs are never removed
	// (docs/configuration.md "ACL sync"). Default false.
	SyncACLs bool `yaml:"sync_acls"`
	// ACLSyncInterval is, with SyncACLs, the least time between two ACL
	// syncs by one process (default 10m, as MirrorMaker 2's
	// sync.topic.acls.interval.seconds; 0: every run).
	ACLSyncInterval time.Duration `yaml:"acl_sync_interval"`
	// SyncGroups, if set, commits the offsets of the selected source
	// consumer groups on the target, translated exactly through the
	// provenance headers (README "Group offset sync").
	SyncGroups *SyncGroups `yaml:"sync_groups"`

	// Start is where a partition without a checkpoint starts: "earliest"
	// (default), "latest", or an RFC 3339 timestamp.
	Start string `yaml:"start"`
	// StartOffsets overrides Start for given partitions: topic → partition → offset.
	StartOffsets map[string]map[int32]int64 `yaml:"start_offsets"`

	Window   Window   `yaml:"window"`
	Producer Producer `yaml:"producer"`

	// Isolation is "read_committed" (default) or "read_uncommitted".
	Isolation string `yaml:"isolation"`
	// OnGap is "fail" (default) or "skip".
	OnGap string `yaml:"on_gap"`
	// Provenance adds the provenance header to every copied record (default true).
	Provenance *bool `yaml:"provenance"`
	// CommitInterval is the longest time between two checkpoint commits of a
	// partition while it is copied (default 5s with a file store, 30s with DynamoDB).
	CommitInterval time.Duration `yaml:"commit_interval"`
	// Parallelism is how many partitions are copied at once (default 8).
	Parallelism int `yaml:"parallelism"`
	// FetchBytes is about the most bytes of records one fetch of a
	// partition holds once decompressed (default 1 MiB): a fetch of a
	// compressed topic asks for less by the ratio its batches decompress at.
	FetchBytes int32 `yaml:"fetch_bytes"`
	// LeaseDuration is how long a partition lease lasts without renewal
	// (default 20m: longer than the longest Lambda run, 15m, plus a margin).
	LeaseDuration time.Duration `yaml:"lease_duration"`
	// TakeoverSettle is how long the target partition's end must hold still
	// before a run that took over a lease its holder never released (a
	// killed process) reconciles with it: the dead run's last produce
	// request may still be on its way (default 1s; 0 turns the wait off).
	TakeoverSettle time.Duration `yaml:"takeover_settle"`
	// ReplicationWait bounds how long a run waits, before it reconciles
	// with the target (after a takeover, a produce of unknown outcome, or a
	// run stopped in doubt), for the target partition's high watermark to
	// reach its leader's log end, so that records appended but not yet
	// replicated are found rather than copied again. When it runs out the
	// partition ends in_doubt: lease kept, nothing re-sent, exit 1
	// (default 60s, above the broker's replica.lag.time.max.ms default of
	// 30s; 0 turns the wait off: only for targets with replication factor 1).
	ReplicationWait time.Duration `yaml:"replication_wait"`
}

// SyncGroups selects the consumer groups whose offsets are synced to the
// target and how often.
type SyncGroups struct {
	// Include and Exclude are regular expressions (RE2, matched against
	// the whole group id) as for topics; exclude wins.
	Include []string `yaml:"include"`
	Exclude []string `yaml:"exclude"`
	// Interval is the least time between two syncs by one process
	// (default 1m, as MirrorMaker 2's sync.group.offsets.interval.seconds;
	// 0: every run).
	Interval time.Duration `yaml:"interval"`

	groups Topics // Include and Exclude, compiled by Parse and Validate
}

// Match reports whether group is selected, as Topics.Match does for a
// topic; before Parse or Validate compiled the patterns it selects nothing.
func (g *SyncGroups) Match(group string) bool { return g.groups.Match(group) }

// Cluster is how to reach one Kafka cluster.
type Cluster struct {
	// Name names the cluster in provenance headers, logs and errors; it
	// defaults to "source" or "target" and may hold letters, digits, '.', '_' and '-'.
	Name     string   `yaml:"name"`
	Brokers  []string `yaml:"brokers"`
	ClientID string   `yaml:"client_id"` // default "catchup"
	TLS      *TLS     `yaml:"tls"`       // nil: plaintext
	SASL     *SASL    `yaml:"sasl"`      // nil: no authentication
	// DialTimeout bounds connecting to a broker: TCP, the TLS handshake and
	// SASL together (default 10s; 0 means the default).
	DialTimeout time.Duration `yaml:"dial_timeout"`
}

// TLS configures TLS to a cluster. Verification is on unless
// InsecureSkipVerify is set.
type TLS struct {
	Enabled            *bool  `yaml:"enabled"` // default true when the tls block is present
	CAFile             string `yaml:"ca_file"`
	CertFile           string `yaml:"cert_file"`
	KeyFile            string `yaml:"key_file"`
	ServerName         string `yaml:"server_name"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
}

// SASL configures SASL authentication. The password is never inline: it
// comes from exactly one of the environment variable PasswordEnv, the file
// PasswordFile, or the AWS Secrets Manager secret PasswordSecretARN.
type SASL struct {
	// Mechanism is "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512",
	// "AWS_MSK_IAM", "OAUTHBEARER" or "GSSAPI".
	Mechanism    string `yaml:"mechanism"`
	Username     string `yaml:"username"`
	PasswordEnv  string `yaml:"password_env"`
	PasswordFile string `yaml:"password_file"`
	// PasswordSecretARN is the ARN of an AWS Secrets Manager secret whose
	// SecretString is the password (or a JSON object with a "password"
	// member, as Amazon MSK keeps SCRAM secrets). The Lambda functions fetch
	// it once per execution environment, the CLI once per command.
	PasswordSecretARN string `yaml:"password_secret_arn"`
	Region            string `yaml:"region"` // AWS_MSK_IAM only; default from the AWS configuration
	// AWSRoleARN is an IAM role (arn:aws:iam::ACCOUNT:role/NAME) that
	// catchup assumes, with STS AssumeRole, for this cluster's AWS calls:
	// the AWS_MSK_IAM signature, and the password_secret_arn fetch. It
	// reaches a cluster or a secret in another AWS account. Empty: the
	// process's own credentials.
	AWSRoleARN string `yaml:"aws_role_arn"`
	// AWSExternalID is the external id the role's trust policy asks for
	// (sts:ExternalId), with AWSRoleARN only.
	AWSExternalID string `yaml:"aws_external_id"`
	// TokenFile, for OAUTHBEARER, holds the token, read again each time a
	// connection authenticates (a Kubernetes projected token is replaced
	// before it expires).
	TokenFile string `yaml:"token_file"`
	// TokenEndpointURL, for OAUTHBEARER, is the OAuth 2 token endpoint
	// asked for a token with the client credentials grant, as ClientID
	// with the client secret in PasswordEnv, PasswordFile or
	// PasswordSecretARN; Scope, if set, is the scope asked for
	// (space-separated).
	TokenEndpointURL string `yaml:"token_endpoint_url"`
	ClientID         string `yaml:"client_id"`
	Scope            string `yaml:"scope"`
	// Principal, for GSSAPI (Kerberos), is the client principal
	// (NAME[/INSTANCE][@REALM]; without a realm, krb5.conf's
	// default_realm), which logs in with the keys of KeytabFile or with
	// the password of PasswordEnv, PasswordFile or PasswordSecretARN.
	Principal  string `yaml:"principal"`
	KeytabFile string `yaml:"keytab_file"`
	// Krb5Conf, for GSSAPI, is the path of krb5.conf (the realm's KDCs);
	// empty: $KRB5_CONFIG, else /etc/krb5.conf.
	Krb5Conf string `yaml:"krb5_conf"`
	// ServiceName, for GSSAPI, is the first part of the brokers' service
	// principal SERVICE/HOST (Kafka's sasl.kerberos.service.name), HOST
	// being each broker's host as advertised; empty: "kafka".
	ServiceName string `yaml:"service_name"`

	fetched *Secret // the secret of PasswordSecretARN, set by File.ResolveSecrets
	// keyAt locates password_env and password_file in the file Parse read
	// ("FILE:LINE:COL"), for the errors of File.CheckPasswords.
	keyAt map[string]string
}

// Topics selects topics by regular expressions (Go RE2 syntax, anchored:
// the whole name must match). Exclude wins over include; internal topics
// (names starting with "__") are never selected.
type Topics struct {
	Include []string `yaml:"include"`
	Exclude []string `yaml:"exclude"`

	include, exclude []*regexp.Regexp
}

// Match reports whether topic is selected: it matches an include pattern
// and no exclude pattern, and is not internal. It uses the patterns as last
// compiled by Compile (which Parse and Validate call); before that it
// selects nothing.
func (t *Topics) Match(topic string) bool {
	if len(topic) >= 2 && topic[:2] == "__" {
		return false
	}
	for _, re := range t.exclude {
		if re.MatchString(topic) {
			return false
		}
	}
	for _, re := range t.include {
		if re.MatchString(topic) {
			return true
		}
	}
	return false
}

// Window limits what one run copies of one partition; zero means no limit.
type Window struct {
	MaxRecords  int64         `yaml:"max_records"`
	MaxBytes    int64         `yaml:"max_bytes"`
	MaxDuration time.Duration `yaml:"max_duration"`
}

// Producer configures writes to the target.
type Producer struct {
	// Acks is "all" (default), "leader", or "none". "none" can lose data and
	// is refused unless AllowDataLoss is set.
	Acks          string `yaml:"acks"`
	AllowDataLoss bool   `yaml:"allow_data_loss"`
	// Compression is "none" (default), "gzip", "snappy", "lz4" or "zstd".
	Compression string `yaml:"compression"`
	// CompressionLevel is the level of gzip (1 to 9) or zstd (1 to 22),
	// as the Java producer's compression.gzip.level and
	// compression.zstd.level; 0 (default) is the codec's default level,
	// gzip's 6 and zstd's 3. lz4 and snappy take none.
	CompressionLevel int `yaml:"compression_level"`
	// BatchRecords and BatchBytes bound one partition's record batch
	// (defaults 10000 records and 1000000 bytes, below the broker's default
	// message.max.bytes); a produce request carries the batches of up to
	// four partitions its broker leads.
	BatchRecords int `yaml:"batch_records"`
	BatchBytes   int `yaml:"batch_bytes"`
	// Retries is how many times a produce that wrote nothing is retried
	// (default 10; an explicit retries: 0 in a file means none); RetryBackoff is the first backoff, doubled each time up to 5s
	// (default 100ms).
	Retries      int           `yaml:"retries"`
	RetryBackoff time.Duration `yaml:"retry_backoff"`
	// Timeout is how long the broker may take to acknowledge one request (default 30s).
	Timeout time.Duration `yaml:"timeout"`
	// Idempotent (default true, with acks all) numbers every batch as an
	// idempotent producer, so that a request of unknown outcome is sent
	// again without duplicating; false for brokers or ACLs that refuse
	// InitProducerId (no IDEMPOTENT_WRITE before Kafka 2.8).
	Idempotent *bool `yaml:"idempotent"`
}
