package mirrormaker

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/kafka-catchup/catchup/internal/config"
)

// consumerKey converts a key of a consumer config.
func (fc *propFile) consumerKey(k string) {
	v, _ := fc.get(k)
	if fc.common(k, v) {
		return
	}
	p := &fc.mp.p
	switch k {
	case "group.id":
		// namePipeline uses it once every key is read.
	case "auto.offset.reset":
		switch strings.ToLower(v) {
		case "smallest", "earliest":
			p.Start = "earliest"
		case "largest", "latest":
			p.Start = "latest"
		case "none":
			fc.note(k, NoticeWarning, "catchup has no \"none\": a partition without a checkpoint starts at start "+
				"(earliest, so nothing is lost); set start_offsets in the YAML to say exactly where each partition starts")
			return
		default:
			fc.note(k, NoticeInvalid, "%q is not valid; use earliest (or smallest), latest (or largest) or none", v)
			return
		}
		fc.set("start", k)
		old := ""
		if v == "smallest" || v == "largest" {
			old = " (the old consumer's name for " + p.Start + ")"
		}
		fc.note(k, NoticeMapped, "→ start: %s%s, for a partition without a checkpoint", p.Start, old)
	case "isolation.level":
		switch v {
		case "read_committed", "read_uncommitted":
			p.Isolation = v
			fc.set("isolation", k)
			fc.note(k, NoticeMapped, "→ isolation")
		default:
			fc.note(k, NoticeInvalid, "%q is not valid; use read_committed or read_uncommitted", v)
		}
	case "fetch.message.max.bytes", "max.partition.fetch.bytes":
		if k == "fetch.message.max.bytes" && fc.has("max.partition.fetch.bytes") {
			fc.note(k, NoticeNotApplicable, "the old consumer's name for max.partition.fetch.bytes, which is also set and wins")
			return
		}
		n, ok := fc.int(k, v, 1)
		if !ok {
			return
		}
		p.FetchBytes = int32(min(max(n, config.MinFetchBytes), config.MaxFetchBytes))
		fc.set("fetch_bytes", k)
		msg := "→ fetch_bytes, the most bytes of records one fetch holds per partition, decompressed"
		if int64(p.FetchBytes) != n {
			msg += fmt.Sprintf(" (%d: catchup's bounds are %d to %d)", p.FetchBytes, config.MinFetchBytes, config.MaxFetchBytes)
		}
		if k == "fetch.message.max.bytes" {
			msg += "; fetch.message.max.bytes is the old consumer's name for max.partition.fetch.bytes"
		}
		fc.note(k, NoticeMapped, "%s", msg)
	}
}

// codecOf is the codec catchup names for the value v of the producer key k,
// compression.type or the old producer's compression.codec.
func codecOf(k, v string) (string, bool) {
	codecs := map[string]string{"none": "none", "gzip": "gzip", "snappy": "snappy", "lz4": "lz4", "zstd": "zstd"}
	if k == "compression.codec" {
		// The old producer's codec numbers (kafka.message.CompressionCodec).
		maps.Copy(codecs, map[string]string{"0": "none", "1": "gzip", "2": "snappy", "3": "lz4", "4": "zstd"})
	}
	c, ok := codecs[strings.ToLower(v)]
	return c, ok
}

// compressionLevel converts compression.gzip.level or
// compression.zstd.level (v), which the Java producer applies only when
// its compression.type is that codec.
func (fc *propFile) compressionLevel(k, v string) {
	codec := strings.TrimSuffix(strings.TrimPrefix(k, "compression."), ".level")
	inUse := "none"
	for _, ck := range []string{"compression.codec", "compression.type"} { // compression.type wins
		if cv, ok := fc.get(ck); ok {
			if c, ok := codecOf(ck, cv); ok {
				inUse = c
			}
		}
	}
	if inUse != codec {
		fc.note(k, NoticeNotApplicable, "the level of %s, and the producer compresses with %s (compression.type): "+
			"the Java producer ignored it too", codec, inUse)
		return
	}
	n, err := strconv.Atoi(v)
	most := map[string]int{"gzip": config.MaxGzipLevel, "zstd": config.MaxZstdLevel}[codec]
	// The Java producer's least: gzip takes -1 (its default) or 1 to 9,
	// zstd down to its fastest negative level.
	least := map[string]int{"gzip": -1, "zstd": -131072}[codec]
	switch {
	case err != nil || n > most || n < least || codec == "gzip" && n == 0:
		fc.note(k, NoticeInvalid, "%q is not a %s level: use 1 to %d", v, codec, most)
	case codec == "gzip" && n == -1:
		fc.note(k, NoticeMapped, "gzip's default level: producer.compression_level stays 0, the codec's default (6)")
	case n < 1:
		fc.mp.p.Producer.CompressionLevel = 1
		fc.set("producer.compression_level", k)
		fc.note(k, NoticeWarning, "→ producer.compression_level: 1, catchup's fastest %s level: %s's levels below 1 "+
			"(zstd's fast modes) are not offered, and level 1 compresses more, at more CPU", codec, codec)
	default:
		fc.mp.p.Producer.CompressionLevel = n
		fc.set("producer.compression_level", k)
		fc.note(k, NoticeMapped, "→ producer.compression_level: %d", n)
	}
}

// producerKey converts a key of the producer config.
func (fc *propFile) producerKey(k string) {
	v, _ := fc.get(k)
	if fc.common(k, v) {
		return
	}
	w := &fc.mp.p.Producer
	newer := map[string]string{"request.required.acks": "acks", "message.send.max.retries": "retries", "compression.codec": "compression.type"}
	if n := newer[k]; n != "" && fc.has(n) {
		fc.note(k, NoticeNotApplicable, "the old producer's name for %s, which is also set and wins, as in the Java producer", n)
		return
	}
	switch k {
	case "acks", "request.required.acks":
		fc.acks(k, v)
	case "compression.type", "compression.codec":
		c, ok := codecOf(k, v)
		if !ok {
			fc.note(k, NoticeInvalid, "%q is not a compression codec; use none, gzip, snappy, lz4 or zstd", v)
			return
		}
		w.Compression = c
		fc.set("producer.compression", k)
		fc.note(k, NoticeMapped, "→ producer.compression: %s", c)
	case "compression.gzip.level", "compression.zstd.level":
		fc.compressionLevel(k, v)
	case "retries", "message.send.max.retries":
		n, ok := fc.int(k, v, 0)
		if !ok {
			return
		}
		w.Retries = int(min(n, 1<<31-1))
		fc.set("producer.retries", k)
		fc.mp.explicit["producer.retries"] = true
		fc.note(k, NoticeMapped, "→ producer.retries: retries of a produce that wrote nothing, within the run's deadline")
	case "retry.backoff.ms":
		if n, ok := fc.int(k, v, 1); ok {
			w.RetryBackoff = time.Duration(n) * time.Millisecond
			fc.set("producer.retry_backoff", k)
			fc.note(k, NoticeMapped, "→ producer.retry_backoff: the first backoff, doubled each retry up to 5s")
		}
	case "batch.num.messages":
		if n, ok := fc.int(k, v, 1); ok {
			w.BatchRecords = int(min(n, 1<<31-1))
			fc.set("producer.batch_records", k)
			fc.note(k, NoticeMapped, "→ producer.batch_records: the most records per produce request")
		}
	case "max.request.size":
		if n, ok := fc.int(k, v, 1); ok {
			w.BatchBytes = int(min(n, config.MaxBatchBytes))
			fc.set("producer.batch_bytes", k)
			msg := "→ producer.batch_bytes: the most bytes per produce request"
			if n > config.MaxBatchBytes {
				msg += fmt.Sprintf(" (%d: catchup's most, under the broker's default message.max.bytes)", config.MaxBatchBytes)
			}
			fc.note(k, NoticeMapped, "%s", msg)
		}
	case "request.timeout.ms":
		if n, ok := fc.int(k, v, 1); ok {
			w.Timeout = time.Duration(n) * time.Millisecond
			fc.set("producer.timeout", k)
			fc.note(k, NoticeMapped, "→ producer.timeout: how long the broker may take to acknowledge a request")
		}
	case "producer.type":
		switch v {
		case "sync":
			fc.note(k, NoticeNotApplicable, "catchup always waits for the acknowledgements of a request, as the sync producer did")
		case "async":
			fc.note(k, NoticeNotApplicable, "catchup always waits for the acknowledgements before it moves a checkpoint; "+
				"it batches up to producer.batch_records records per request")
		default:
			fc.note(k, NoticeInvalid, "%q is not valid; use sync or async", v)
		}
	case "queue.enqueue.timeout.ms":
		fc.enqueueTimeout(k, v)
	}
}

func (fc *propFile) acks(k, v string) {
	w := &fc.mp.p.Producer
	switch v {
	case "all", "-1":
		w.Acks = "all"
	case "1":
		w.Acks = "leader"
	case "0":
		if !fc.c.flags.AllowDataLoss {
			fc.note(k, NoticeRefused, "acks=0 can lose records silently: the producer never learns whether a write "+
				"arrived, yet the checkpoint would move past it; use acks=all (catchup's default), "+
				"or pass --allow-data-loss to accept the loss")
			return
		}
		w.Acks, w.AllowDataLoss = "none", true
		fc.set("producer.acks", k)
		fc.set("producer.allow_data_loss", k)
		fc.note(k, NoticeWarning, "→ producer.acks: none and producer.allow_data_loss: true (--allow-data-loss): "+
			"records lost on the way to the target are never noticed, and the checkpoint moves past them")
		return
	default:
		fc.note(k, NoticeInvalid, "%q is not valid; use all (or -1), 1 or 0", v)
		return
	}
	fc.set("producer.acks", k)
	fc.note(k, NoticeMapped, "→ producer.acks: %s", w.Acks)
}

// enqueueTimeout answers queue.enqueue.timeout.ms of the old async
// producer: -1 blocks when the queue is full, 0 or more drops records.
func (fc *propFile) enqueueTimeout(k, v string) {
	if typ, _ := fc.get("producer.type"); typ != "async" {
		fc.note(k, NoticeNotApplicable, "used only with producer.type=async")
		return
	}
	n, err := strconv.ParseInt(v, 10, 64)
	switch {
	case err != nil || n < -1:
		fc.note(k, NoticeInvalid, "%q is not valid; use -1 (block when the queue is full), 0 or a number of milliseconds", v)
	case n == -1:
		fc.note(k, NoticeNotApplicable, "the producer blocked when its queue was full instead of dropping records; catchup waits for the target too")
	case !fc.c.flags.AllowDataLoss:
		fc.note(k, NoticeRefused, "%s tells the old async producer to drop records when its queue is full, so MirrorMaker "+
			"could lose records silently with this file (check the target with catchup verify); catchup never drops records, "+
			"it waits for the target: remove the key to accept that, or pass --allow-data-loss", dropWhen(n))
	default:
		fc.note(k, NoticeWarning, "%s tells the old async producer to drop records when its queue is full "+
			"(accepted with --allow-data-loss); catchup never drops records, it waits for the target", dropWhen(n))
	}
}

func dropWhen(ms int64) string {
	if ms == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (after %dms)", ms, ms)
}
