package mirrormaker

import "strings"

// fileKind says which MirrorMaker file a property file is: a consumer config
// (a source cluster) or the producer config (the target cluster).
type fileKind int

const (
	consumerFile fileKind = iota
	producerFile
)

func (s fileKind) String() string {
	if s == producerFile {
		return "producer"
	}
	return "consumer"
}

// answer is what a key means on one side: mapped (converted by code in
// properties.go, clients.go or security.go) or a fixed answer, obsolete
// or not applicable, with why.
type answer struct {
	kind NoticeKind // "" when the key is not one of this side
	why  string
}

// keyAnswers is what a key means in a consumer and in a producer config.
type keyAnswers [2]answer

// Reasons shared by several keys.
const (
	whyOldConsumer = "a setting of the old ZooKeeper-based consumer (removed in Kafka 2.0); "
	whyNoGroup     = "catchup does not join a consumer group: it leases each partition in its checkpoint store"
	whyJavaTuning  = "connection tuning of the Java client; catchup's Kafka client (kafka-go) uses its own"
	whyJavaPlugin  = "a Java plugin class, which catchup cannot load"
	whyBytes       = "catchup copies keys and values as bytes, unchanged"
	whyNoWait      = "catchup copies a fixed window up to the end offset it saw when the run started, so it never waits for new records"
	whyTLSTuning   = "Go's TLS stack negotiates TLS 1.2 or 1.3 with its own cipher suites and providers"
	whyCommitted   = "catchup commits its checkpoints to its own store, after the target acknowledged the records, " +
		"every commit_interval (--offset.commit.interval.ms)"
	whyMemory = "catchup's memory is bounded by fetch_bytes: at most two fetches per partition, parallelism partitions at once"
)

// knownKeys lists every key catchup knows an answer for. Keys answered by
// prefix (zookeeper.*, metrics.*) are in prefixAnswer.
func knownKeys() map[string]keyAnswers {
	t := map[string]keyAnswers{}
	add := func(s fileKind, kind NoticeKind, why string, keys ...string) {
		for _, k := range keys {
			e := t[k]
			e[s] = answer{kind: kind, why: why}
			t[k] = e
		}
	}
	both := func(kind NoticeKind, why string, keys ...string) {
		add(consumerFile, kind, why, keys...)
		add(producerFile, kind, why, keys...)
	}

	// Keys converted by code, on both sides.
	both(NoticeMapped, "", "bootstrap.servers", "metadata.broker.list", "client.id", "security.protocol",
		"sasl.mechanism", "sasl.jaas.config", "sasl.client.callback.handler.class", "sasl.login.callback.handler.class",
		"sasl.oauthbearer.token.endpoint.url", "sasl.oauthbearer.client.credentials.client.id",
		"sasl.oauthbearer.client.credentials.client.secret", "sasl.oauthbearer.scope", "sasl.kerberos.service.name",
		"ssl.truststore.location", "ssl.truststore.type", "ssl.truststore.password", "ssl.truststore.certificates",
		"ssl.keystore.location", "ssl.keystore.type", "ssl.keystore.password", "ssl.key.password",
		"ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.endpoint.identification.algorithm")
	add(consumerFile, NoticeMapped, "", "group.id", "auto.offset.reset", "isolation.level",
		"fetch.message.max.bytes", "max.partition.fetch.bytes")
	add(producerFile, NoticeMapped, "", "acks", "request.required.acks", "compression.type", "compression.codec",
		"retries", "message.send.max.retries", "retry.backoff.ms", "batch.num.messages", "max.request.size",
		"request.timeout.ms", "producer.type", "queue.enqueue.timeout.ms", "compression.gzip.level", "compression.zstd.level")

	// The old consumer.
	add(consumerFile, NoticeObsolete, whyOldConsumer+"a run ends when its windows are copied", "consumer.timeout.ms")
	add(consumerFile, NoticeObsolete, whyOldConsumer+whyCommitted, "auto.commit.enable")
	add(consumerFile, NoticeObsolete, whyOldConsumer+whyNoGroup, "rebalance.max.retries", "rebalance.backoff.ms",
		"consumer.id", "refresh.leader.backoff.ms")
	add(consumerFile, NoticeObsolete, whyOldConsumer+whyCommitted, "offsets.storage", "dual.commit.enabled",
		"offsets.channel.backoff.ms", "offsets.channel.socket.timeout.ms", "offsets.commit.max.retries")
	add(consumerFile, NoticeObsolete, whyOldConsumer+whyJavaTuning, "socket.receive.buffer.bytes", "socket.timeout.ms",
		"num.consumer.fetchers")
	add(consumerFile, NoticeObsolete, whyOldConsumer+whyNoWait, "fetch.wait.max.ms")
	add(consumerFile, NoticeObsolete, whyOldConsumer+whyMemory, "queued.max.message.chunks")

	// The Java consumer.
	add(consumerFile, NoticeNotApplicable, whyBytes, "key.deserializer", "value.deserializer")
	add(consumerFile, NoticeNotApplicable, whyCommitted, "enable.auto.commit", "auto.commit.interval.ms")
	add(consumerFile, NoticeNotApplicable, whyNoGroup, "partition.assignment.strategy", "session.timeout.ms",
		"heartbeat.interval.ms", "max.poll.interval.ms", "group.instance.id", "group.protocol", "group.remote.assignor")
	add(consumerFile, NoticeNotApplicable, "catchup fetches by bytes per partition (fetch_bytes), not by records",
		"max.poll.records")
	add(consumerFile, NoticeNotApplicable, "one fetch is bounded per partition by fetch_bytes", "fetch.max.bytes")
	add(consumerFile, NoticeNotApplicable, whyNoWait, "fetch.min.bytes", "fetch.max.wait.ms")
	add(consumerFile, NoticeNotApplicable, "the broker and kafka-go check record batches", "check.crcs")
	add(consumerFile, NoticeNotApplicable, "catchup fetches from partition leaders", "client.rack")
	add(consumerFile, NoticeNotApplicable, "catchup never creates source topics", "allow.auto.create.topics")
	add(consumerFile, NoticeNotApplicable, "internal topics (names starting with \"__\") are never copied",
		"exclude.internal.topics")
	add(consumerFile, NoticeNotApplicable, whyJavaTuning, "default.api.timeout.ms", "request.timeout.ms",
		"retry.backoff.ms")

	// The producers, old and new.
	add(producerFile, NoticeNotApplicable, whyBytes, "key.serializer", "value.serializer", "serializer.class",
		"key.serializer.class")
	add(producerFile, NoticeNotApplicable, "catchup writes every record to the partition number it has on the source, "+
		"which keeps offsets translatable and resume exact", "partitioner.class")
	add(producerFile, NoticeNotApplicable, "catchup sends at window speed: a produce request goes out as soon as a "+
		"fetched batch is ready, and the next fetch overlaps it", "linger.ms", "queue.buffering.max.ms")
	add(producerFile, NoticeNotApplicable, "catchup groups up to producer.batch_records records and "+
		"producer.batch_bytes bytes per produce request", "batch.size")
	add(producerFile, NoticeNotApplicable, whyMemory, "buffer.memory", "queue.buffering.max.messages")
	add(producerFile, NoticeNotApplicable, "catchup waits for every acknowledgement before it moves a checkpoint",
		"max.block.ms")
	add(producerFile, NoticeNotApplicable, "catchup has one produce request in flight per partition, so records keep "+
		"their order", "max.in.flight.requests.per.connection")
	add(producerFile, NoticeNotApplicable, "catchup writes as an idempotent producer whenever acks is all "+
		"(producer.idempotent: false in the YAML turns that off); the provenance header makes a resume "+
		"after a crash exact (see docs/guarantees.md)", "enable.idempotence")
	add(producerFile, NoticeNotApplicable, "catchup does not write in transactions; the provenance header makes a "+
		"resume exact instead (see docs/guarantees.md)", "transactional.id", "transaction.timeout.ms")
	add(producerFile, NoticeNotApplicable, "a produce is retried producer.retries times within the run's deadline",
		"delivery.timeout.ms", "retry.backoff.max.ms")
	add(producerFile, NoticeNotApplicable, "catchup compresses lz4 at its codec's only level (producer.compression_level "+
		"is for gzip and zstd)", "compression.lz4.level")
	add(producerFile, NoticeNotApplicable, "producer.compression applies to every topic", "compressed.topics")
	add(producerFile, NoticeObsolete, "a setting of the old Scala producer (removed in Kafka 2.0); "+whyJavaTuning,
		"topic.metadata.refresh.interval.ms")

	// Both sides.
	both(NoticeNotApplicable, whyJavaTuning, "reconnect.backoff.ms", "reconnect.backoff.max.ms",
		"connections.max.idle.ms", "receive.buffer.bytes", "send.buffer.bytes", "socket.connection.setup.timeout.ms",
		"socket.connection.setup.timeout.max.ms", "metadata.max.age.ms", "metadata.max.idle.ms", "client.dns.lookup",
		"enable.metrics.push")
	both(NoticeNotApplicable, whyJavaPlugin+"; catchup writes its metrics as CloudWatch embedded metrics",
		"interceptor.classes", "metric.reporters", "auto.include.jmx.reporter")
	both(NoticeNotApplicable, whyJavaPlugin, "security.providers", "sasl.login.class",
		"ssl.engine.factory.class")
	both(NoticeNotApplicable, whyTLSTuning, "ssl.protocol", "ssl.enabled.protocols", "ssl.cipher.suites", "ssl.provider",
		"ssl.keymanager.algorithm", "ssl.trustmanager.algorithm", "ssl.secure.random.implementation")
	both(NoticeNotApplicable, "tuning of the Java client's Kerberos login; catchup logs in with a keytab or a password "+
		"(never kinit's ticket cache) and renews its ticket-granting ticket before it expires",
		"sasl.kerberos.kinit.cmd", "sasl.kerberos.min.time.before.relogin",
		"sasl.kerberos.ticket.renew.jitter", "sasl.kerberos.ticket.renew.window.factor")
	return t
}

// prefixAnswer answers keys known by their prefix.
func prefixAnswer(key string) (answer, bool) {
	switch {
	case strings.HasPrefix(key, "zookeeper."):
		return answer{NoticeObsolete, whyOldConsumer + "catchup reads from the brokers named by bootstrap.servers, never from ZooKeeper"}, true
	case strings.HasPrefix(key, "metrics."):
		return answer{NoticeNotApplicable, "metrics of the Java client; catchup writes its metrics as CloudWatch embedded metrics"}, true
	case strings.HasPrefix(key, "sasl.login."), strings.HasPrefix(key, "sasl.oauthbearer."):
		return answer{NoticeNotApplicable, "tuning of the Java client's SASL login; catchup authenticates once per connection"}, true
	}
	return answer{}, false
}
