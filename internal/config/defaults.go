package config

import (
	"fmt"
	"strings"
	"time"
)

// Defaults; each is also documented on the field it fills.
const (
	DefaultStore           = "file://.catchup"
	DefaultClientID        = "catchup"
	DefaultStart           = "earliest"
	DefaultTargetTopic     = "{topic}"
	DefaultIsolation       = "read_committed"
	DefaultOnGap           = "fail"
	DefaultParallelism     = 8
	DefaultFetchBytes      = 1 << 20
	DefaultLeaseDuration   = 20 * time.Minute
	DefaultTakeoverSettle  = time.Second
	DefaultReplicationWait = time.Minute
	DefaultFileCommit      = 5 * time.Second
	DefaultDynamoDBCommit  = 30 * time.Second
	DefaultAcks            = "all"
	DefaultCompression     = "none"
	DefaultBatchRecords    = 10000
	DefaultBatchBytes      = 1000000
	DefaultRetries         = 10
	DefaultRetryBackoff    = 100 * time.Millisecond
	DefaultTimeout         = 30 * time.Second
	// DefaultDialTimeout bounds TCP, the TLS handshake and SASL together.
	DefaultDialTimeout = 10 * time.Second
	// DefaultReplicationFactor asks the target for its default.replication.factor.
	DefaultReplicationFactor = -1
	// DefaultConfigSyncInterval is MirrorMaker 2's sync.topic.configs.interval.seconds.
	DefaultConfigSyncInterval = 10 * time.Minute
	// DefaultACLSyncInterval is MirrorMaker 2's sync.topic.acls.interval.seconds.
	DefaultACLSyncInterval = 10 * time.Minute
	// DefaultGroupSyncInterval is MirrorMaker 2's sync.group.offsets.interval.seconds.
	DefaultGroupSyncInterval = time.Minute
)

// SetDefaults fills every unset field with its default, as Parse does.
// Here a zero value means unset, so a File built in code cannot ask for
// zero retries; Parse, which sees which keys are present, can.
func (f *File) SetDefaults() {
	f.setDefaults(func(string) bool { return false })
}

// setDefaults fills zero fields whose key is not present in the file;
// present reports that for a path like "pipelines[0].producer.retries".
func (f *File) setDefaults(present func(path string) bool) {
	setDefault(&f.Store, DefaultStore, present("store"))
	commit := DefaultFileCommit
	if strings.HasPrefix(f.Store, "dynamodb://") {
		commit = DefaultDynamoDBCommit
	}
	for i := range f.Pipelines {
		p := &f.Pipelines[i]
		at := func(field string) bool { return present(fmt.Sprintf("pipelines[%d].%s", i, field)) }
		p.Source.setDefaults("source", func(field string) bool { return at("source." + field) })
		p.Target.setDefaults("target", func(field string) bool { return at("target." + field) })
		setDefault(&p.TargetTopic, DefaultTargetTopic, at("target_topic"))
		if p.LoopPrevention == nil {
			p.LoopPrevention = ptr(true)
		}
		setDefault(&p.ReplicationFactor, DefaultReplicationFactor, at("replication_factor"))
		setDefault(&p.ConfigSyncInterval, DefaultConfigSyncInterval, at("config_sync_interval"))
		setDefault(&p.ACLSyncInterval, DefaultACLSyncInterval, at("acl_sync_interval"))
		if p.SyncGroups != nil {
			setDefault(&p.SyncGroups.Interval, DefaultGroupSyncInterval, at("sync_groups.interval"))
		}
		setDefault(&p.Start, DefaultStart, at("start"))
		setDefault(&p.Isolation, DefaultIsolation, at("isolation"))
		setDefault(&p.OnGap, DefaultOnGap, at("on_gap"))
		if p.Provenance == nil {
			p.Provenance = ptr(true)
		}
		setDefault(&p.CommitInterval, commit, at("commit_interval"))
		setDefault(&p.Parallelism, DefaultParallelism, at("parallelism"))
		setDefault(&p.FetchBytes, DefaultFetchBytes, at("fetch_bytes"))
		setDefault(&p.LeaseDuration, DefaultLeaseDuration, at("lease_duration"))
		setDefault(&p.TakeoverSettle, DefaultTakeoverSettle, at("takeover_settle"))
		setDefault(&p.ReplicationWait, DefaultReplicationWait, at("replication_wait"))

		p.Producer.setDefaults(func(field string) bool { return at("producer." + field) })
	}
}

// SetDefaults fills every zero field of p with its default, as
// File.SetDefaults does (a zero value means unset).
func (w *Producer) SetDefaults() {
	w.setDefaults(func(string) bool { return false })
}

// DefaultProducer returns the producer settings a file that sets none gets.
func DefaultProducer() Producer {
	var p Producer
	p.SetDefaults()
	return p
}

func (w *Producer) setDefaults(present func(field string) bool) {
	setDefault(&w.Acks, DefaultAcks, present("acks"))
	setDefault(&w.Compression, DefaultCompression, present("compression"))
	setDefault(&w.BatchRecords, DefaultBatchRecords, present("batch_records"))
	setDefault(&w.BatchBytes, DefaultBatchBytes, present("batch_bytes"))
	setDefault(&w.Retries, DefaultRetries, present("retries"))
	setDefault(&w.RetryBackoff, DefaultRetryBackoff, present("retry_backoff"))
	setDefault(&w.Timeout, DefaultTimeout, present("timeout"))
}

func (c *Cluster) setDefaults(name string, present func(field string) bool) {
	setDefault(&c.Name, name, present("name"))
	setDefault(&c.ClientID, DefaultClientID, present("client_id"))
	// An explicit 0 means the default too: no connection should wait for ever.
	setDefault(&c.DialTimeout, DefaultDialTimeout, false)
	if c.TLS != nil && c.TLS.Enabled == nil {
		c.TLS.Enabled = ptr(true)
	}
	if c.SASL != nil {
		c.SASL.setKerberosDefaults()
	}
}

// setDefault sets *v to def if it is zero and was not written explicitly.
func setDefault[T comparable](v *T, def T, present bool) {
	var zero T
	if *v == zero && !present {
		*v = def
	}
}

func ptr[T any](v T) *T { return &v }

// TLSEnabled reports whether connections to c use TLS: a tls block is
// present and does not say enabled: false.
func (c *Cluster) TLSEnabled() bool {
	return c.TLS != nil && (c.TLS.Enabled == nil || *c.TLS.Enabled)
}

// ProvenanceEnabled reports whether p adds the provenance header; true
// unless provenance: false.
func (p *Pipeline) ProvenanceEnabled() bool {
	return p.Provenance == nil || *p.Provenance
}

// IdempotentEnabled reports whether p produces as an idempotent producer
// (with acks all); true unless idempotent: false.
func (w *Producer) IdempotentEnabled() bool {
	return w.Idempotent == nil || *w.Idempotent
}

// LoopPreventionEnabled reports whether p skips records that came from its
// target cluster; true unless loop_prevention: false.
func (p *Pipeline) LoopPreventionEnabled() bool {
	return p.LoopPrevention == nil || *p.LoopPrevention
}

// MapTopic returns the target topic of source topic t.
func (p *Pipeline) MapTopic(t string) string {
	tmpl := p.TargetTopic
	if tmpl == "" {
		tmpl = DefaultTargetTopic
	}
	return strings.NewReplacer("{topic}", t, "{source}", p.Source.Name).Replace(tmpl)
}
