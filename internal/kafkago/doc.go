// Package kafkago connects catchup to Kafka with segmentio/kafka-go:
// Source (replicate.Source) reads a source cluster, Target
// (replicate.Target) writes a target cluster, Dial builds the connection
// pool (TLS, SASL PLAIN/SCRAM, AWS_MSK_IAM, OAUTHBEARER, GSSAPI) both stand on.
//
// Files:
//
//	dial.go         Dial, Cluster: kafka-go Transport and Client, TLS, SASL, error naming
//	oauthbearer.go  SASL OAUTHBEARER (RFC 7628): a token from a file or an OAuth client-credentials endpoint
//	gssapi.go       SASL GSSAPI (RFC 4752, Kerberos with gokrb5): a keytab or a password, the broker's host in the service principal
//	exchange.go     exchange: a request that rides the Transport but writes itself (a wire.Request) and reads its own response
//	fetch.go        raw fetch: a wire.FetchRequest sent to the leader, its response read into wire.Fetched
//	idempotence.go  the idempotent producer: producer id and epoch, per-partition sequences, a lost producer
//	offsets.go      metadata from a broker, ListOffsets with one request per leader
//	logend.go       Target.LogEnd, LogEnds: partition leaders' log ends (OffsetForLeaderEpoch, one request per leader) and high watermarks
//	source.go       Source: Partitions, ListOffsets, OffsetsForTime, Fetch
//	target.go       Target: PartitionCounts, EndOffsets, Produce and its error classes, ReadBack
//	sink.go         sink: the batches of the partitions a broker leads share its produce requests (full ones at once, up to 5 in flight)
//	errors.go       retriable marking of read errors and broker codes
//	admin.go        topic configs and creation (create_topics), group offsets and members (translate)
//	acls.go         topic ACLs listed and created (sync_acls), errors naming the grant or SECURITY_DISABLED
//	permissions.go  Needs: every request sent per cluster role and feature, its ACL and MSK IAM action
//	doc.go          this overview
//
// The codec is internal/kafkago/wire, which does no I/O: fetch response and
// record batch decoding (CRC, decompression, aborted-transaction filter),
// produce request encoding with the provenance header, zstd, and the
// recycled buffers. This package dials, authenticates, routes each request
// through kafka-go's Transport to its broker, and classifies errors; the
// wire package's doc says which requests are wire's and which stay
// kafka-go's, and why catchup reads with a raw fetch rather than kafka-go's
// Reader.
//
// Produce errors fall in three classes (classifyProduce): not appended
// (catchup.ErrRetriable), maybe appended (catchup.ErrUnknownOutcome), and
// rejected (a plain error that names the record and the fix). Whether a
// request reached the wire is known exactly, because the request writes
// itself (exchange.sent).
package kafkago
