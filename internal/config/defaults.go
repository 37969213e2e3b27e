package config

import (
	"fmt"
	"strings"
	"time"
)

// Defaults; each is also documented on the field it fills.
const (
	defaultStore           = "file://.catchup"
	defaultClientID        = "catchup"
	defaultStart           = "earliest"
	defaultTargetTopic     = "{topic}"
	defaultIsolation       = "read_committed"
	defaultOnGap           = "fail"
	defaultParallelism     = 8
	defaultFetchBytes      = 1 << 20
	defaultLeaseDuration   = 20 * time.Minute
	defaultTakeoverSettle  = time.Second
	defaultReplicationWait = time.Minute
	defaultFileCommit      = 5 * time.Second
	defaultDynamoDBCommit  = 30 * time.Second
	defaultAcks            = "all"
	defaultCompression     = "none"
	defaultBatchRecords    = 10000
	defaultBatchBytes      = 1000000
	defaultRetries         = 10
	defaultRetryBackoff    = 100 * time.Millisecond
	defaultTimeout         = 30 * time.Second
	// defaultReplicationFactor asks the target for its default.replication.factor.
	defaultReplicationFactor = -1
	// defaultConfigSyncInterval is MirrorMaker 2's sync.topic.configs.interval.seconds.
	defaultConfigSyncInterval = 10 * time.Minute
	// defaultGroupSyncInterval is MirrorMaker 2's sync.group.offsets.interval.seconds.
	defaultGroupSyncInterval = time.Minute
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
	setDefault(&f.Store, defaultStore, present("store"))
	commit := defaultFileCommit
	if strings.HasPrefix(f.Store, "dynamodb://") {
		commit = defaultDynamoDBCommit
	}
	for i := range f.Pipelines {
		p := &f.Pipelines[i]
		at := func(field string) bool { return present(fmt.Sprintf("pipelines[%d].%s", i, field)) }
		p.Source.setDefaults("source", func(field string) bool { return at("source." + field) })
		p.Target.setDefaults("target", func(field string) bool { return at("target." + field) })
		setDefault(&p.TargetTopic, defaultTargetTopic, at("target_topic"))
		if p.LoopPrevention == nil {
			p.LoopPrevention = ptr(true)
		}
		setDefault(&p.ReplicationFactor, defaultReplicationFactor, at("replication_factor"))
		setDefault(&p.ConfigSyncInterval, defaultConfigSyncInterval, at("config_sync_interval"))
		if p.SyncGroups != nil {
			setDefault(&p.SyncGroups.Interval, defaultGroupSyncInterval, at("sync_groups.interval"))
		}
		setDefault(&p.Start, defaultStart, at("start"))
		setDefault(&p.Isolation, defaultIsolation, at("isolation"))
		setDefault(&p.OnGap, defaultOnGap, at("on_gap"))
		if p.Provenance == nil {
			p.Provenance = ptr(true)
		}
		setDefault(&p.CommitInterval, commit, at("commit_interval"))
		setDefault(&p.Parallelism, defaultParallelism, at("parallelism"))
		setDefault(&p.FetchBytes, defaultFetchBytes, at("fetch_bytes"))
		setDefault(&p.LeaseDuration, defaultLeaseDuration, at("lease_duration"))
		setDefault(&p.TakeoverSettle, defaultTakeoverSettle, at("takeover_settle"))
		setDefault(&p.ReplicationWait, defaultReplicationWait, at("replication_wait"))

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
	setDefault(&w.Acks, defaultAcks, present("acks"))
	setDefault(&w.Compression, defaultCompression, present("compression"))
	setDefault(&w.BatchRecords, defaultBatchRecords, present("batch_records"))
	setDefault(&w.BatchBytes, defaultBatchBytes, present("batch_bytes"))
	setDefault(&w.Retries, defaultRetries, present("retries"))
	setDefault(&w.RetryBackoff, defaultRetryBackoff, present("retry_backoff"))
	setDefault(&w.Timeout, defaultTimeout, present("timeout"))
}

func (c *Cluster) setDefaults(name string, present func(field string) bool) {
	setDefault(&c.Name, name, present("name"))
	setDefault(&c.ClientID, defaultClientID, present("client_id"))
	if c.TLS != nil && c.TLS.Enabled == nil {
		c.TLS.Enabled = ptr(true)
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
		tmpl = defaultTargetTopic
	}
	return strings.NewReplacer("{topic}", t, "{source}", p.Source.Name).Replace(tmpl)
}
