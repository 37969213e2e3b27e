// Package wire is catchup's Kafka codec: it encodes requests and decodes
// responses and record batches, and does no I/O. Its caller, the adapter
// internal/kafkago, dials, authenticates and routes each request through
// kafka-go's Transport; a Request writes itself and a Response reads
// itself, as franz-go's kmsg.Request and kmsg.Response do.
//
// Files:
//
//	request.go  Request and Response, EncodeRequest (request header v1 and the frame), Kmsg: a kmsg request as a Request
//	fetch.go    FetchRequest and FetchResponse; record batch v2 decoding (kmsg): CRC, decompression, aborted-transaction filter (Decode, FirstBatch)
//	encode.go   ProduceRequest, encoded by hand into reused frames, with the provenance header; BatchLen
//	zstd.go     zstd batches compressed and decompressed whole by one klauspost encoder and decoder per process
//	recycle.go  Recycler: fetch buffers, record slices and decompression buffers kept for the next fetches
//	doc.go      this overview
//
// Which requests go through Request: Fetch (FetchRequest, its body
// encoded by kmsg, its response decoded by kmsg and this package),
// Produce (ProduceRequest, encoded by hand; its response is still read by
// kafka-go's protocol/produce) and OffsetForLeaderEpoch (a kmsg request,
// through Kmsg). The other requests (Metadata, ListOffsets, the admin and
// ACL requests, the SASL handshake) stay kafka-go's own protocol types,
// which encode and decode them faithfully; the adapter sends them as
// kafka-go does.
//
// Why not kafka-go's Reader, Conn.ReadBatch or Client.Fetch: they return
// transaction markers as messages or hide their offsets, do not filter
// aborted transactions, turn empty values into nulls, and the Reader skips
// silently to the log start after retention. kafka-go's own fetch decoder
// is faithful on nulls and exposes producer ids and control batches, but
// drops each batch's last offset delta, which a fetch needs to step past a
// batch whose tail was compacted away. So kmsg is used as a codec library
// only: it decodes the fetch response, the batch headers and the records;
// this package splits the batches, checks their CRC, decompresses them
// (zstd with klauspost/compress directly, the others with kafka-go's
// codecs) and filters aborted transactions.
//
// Every version a Request offers is non-flexible (request header v1,
// response header v0). The imports are held by a depguard rule
// (.golangci.yml, kafkago-wire): the standard library, kmsg,
// klauspost/compress, kafka-go's compress codecs and internal/catchup.
package wire
