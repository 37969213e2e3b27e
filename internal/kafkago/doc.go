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
//	exchange.go     exchange: a request that rides the Transport but writes itself and reads its own response
//	fetch.go        raw fetch; fetch response and record batch v2 decoding (kmsg), CRC, decompression, aborted-transaction filter
//	recycle.go      recycler: fetch buffers, record slices and decompression buffers kept for the next fetches
//	zstd.go         zstd batches compressed and decompressed whole by one klauspost encoder and decoder per process
//	encode.go       produce requests encoded by hand into reused frames, with the provenance header
//	idempotence.go  the idempotent producer: producer id and epoch, per-partition sequences, a lost producer
//	offsets.go      metadata from a broker, ListOffsets with one request per leader
//	logend.go       Target.LogEnd: a partition leader's log end (OffsetForLeaderEpoch) and high watermark
//	source.go       Source: Partitions, ListOffsets, OffsetsForTime, Fetch
//	target.go       Target: PartitionCounts, EndOffsets, Produce and its error classes, ReadBack
//	errors.go       retriable marking of read errors and broker codes
//	admin.go        topic configs and creation (create_topics), group offsets and members (translate)
//	acls.go         topic ACLs listed and created (sync_acls), errors naming the grant or SECURITY_DISABLED
//	permissions.go  Needs: every request sent per cluster role and feature, its ACL and MSK IAM action
//	doc.go          this overview
//
// Why not kafka-go's Reader, Conn.ReadBatch or Client.Fetch: they return
// transaction markers as messages or hide their offsets, do not filter
// aborted transactions, turn empty values into nulls, and the Reader skips
// silently to the log start after retention. kafka-go's own fetch decoder
// is faithful on nulls and exposes producer ids and control batches, but
// drops each batch's last offset delta, which Fetch needs to step past a
// batch whose tail was compacted away. So Fetch sends kafka-go's
// fetch.Request through the Transport (which routes it to the leader over a
// pooled, authenticated connection) and decodes the response with franz-go's
// kmsg, used as a codec library only: kmsg decodes the fetch response, the
// batch headers and the records; catchup splits the batches, checks their
// CRC, decompresses them (zstd with klauspost/compress directly, the others
// with kafka-go's codecs) and filters aborted transactions.
//
// Produce errors fall in three classes (classifyProduce): not appended
// (catchup.ErrRetriable), maybe appended (catchup.ErrUnknownOutcome), and
// rejected (a plain error that names the record and the fix). Whether a
// request reached the wire is known exactly, because the request writes
// itself (exchange.sent).
package kafkago
