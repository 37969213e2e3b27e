package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Default is one row of the configuration reference's table of defaults
// (docs/configuration.md, "Defaults"): a key, the value a file that leaves it out gets, and
// what a 0 (or false) written explicitly means.
type Default struct {
	Key   string
	Value string
	Zero  string
}

// Defaults returns the table of every default Parse fills in, made from
// the Default* constants; the table of docs/configuration.md is checked against it
// (TestDefaultsTable), and the engine and the adapters fill in none
// of their own. "refused" means that Validate rejects 0, naming the key.
func Defaults() []Default {
	const (
		refused = "refused"
		noWait  = "no wait"
		every   = "every run"
	)
	return []Default{
		{"store", DefaultStore, ""},
		{"source.name, target.name", "source, target", ""},
		{"source.client_id, target.client_id", DefaultClientID, ""},
		{"source.dial_timeout, target.dial_timeout", duration(DefaultDialTimeout), duration(DefaultDialTimeout)},
		{"source.tls.enabled, target.tls.enabled", "true when the tls block is present", "TLS off"},
		{"source.sasl.service_name, target.sasl.service_name", DefaultKerberosService + " (GSSAPI)", ""},
		{"source.sasl.krb5_conf, target.sasl.krb5_conf", "$KRB5_CONFIG, else " + DefaultKrb5Conf + " (GSSAPI)", ""},
		{"target_topic", DefaultTargetTopic, ""},
		{"loop_prevention", "true", "records from the target are copied back"},
		{"create_topics", "false", ""},
		{"replication_factor", strconv.Itoa(DefaultReplicationFactor) + " (the target's default.replication.factor)", "the target's default"},
		{"config_sync_interval", duration(DefaultConfigSyncInterval), every},
		{"sync_acls", "false", ""},
		{"acl_sync_interval", duration(DefaultACLSyncInterval), every},
		{"sync_groups.interval", duration(DefaultGroupSyncInterval), every},
		{"start", DefaultStart, ""},
		{"window.max_records, window.max_bytes, window.max_duration", "0", "no limit"},
		{"isolation", DefaultIsolation, ""},
		{"on_gap", DefaultOnGap, ""},
		{"provenance", "true", "no header, no reconciliation"},
		{"commit_interval", duration(DefaultFileCommit) + " (file://), " + duration(DefaultDynamoDBCommit) + " (dynamodb://)", refused},
		{"parallelism", strconv.Itoa(DefaultParallelism), refused},
		{"fetch_bytes", strconv.Itoa(DefaultFetchBytes), refused},
		{"lease_duration", duration(DefaultLeaseDuration), refused},
		{"takeover_settle", duration(DefaultTakeoverSettle), noWait},
		{"replication_wait", duration(DefaultReplicationWait), noWait},
		{"producer.acks", DefaultAcks, ""},
		{"producer.compression", DefaultCompression, ""},
		{"producer.compression_level", "the codec's: gzip 6, zstd 3", "the codec's default"},
		{"producer.batch_records", strconv.Itoa(DefaultBatchRecords), refused},
		{"producer.batch_bytes", strconv.Itoa(DefaultBatchBytes), refused},
		{"producer.retries", strconv.Itoa(DefaultRetries), "no retries"},
		{"producer.retry_backoff", duration(DefaultRetryBackoff), refused},
		{"producer.timeout", duration(DefaultTimeout), refused},
		{"producer.idempotent", "true (with acks all)", "not idempotent"},
	}
}

// DefaultsTable returns Defaults as the Markdown table of docs/configuration.md.
func DefaultsTable() string {
	var b strings.Builder
	b.WriteString("| key | default | 0 (or false) |\n|---|---|---|\n")
	for _, d := range Defaults() {
		keys := strings.Split(d.Key, ", ")
		for i, k := range keys {
			keys[i] = "`" + k + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", strings.Join(keys, ", "), d.Value, d.Zero)
	}
	return b.String()
}

// duration writes d as a configuration file would: 10m, 1s, 100ms.
func duration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
