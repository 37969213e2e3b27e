// Command franzcopy is the copier a Go engineer would write instead of
// adopting catchup, a benchmark peer of bench/run.sh: a franz-go consumer of
// the source topic's partitions (assigned, no consumer group) and an
// idempotent franz-go producer (acks=all) with a manual partitioner, so that
// every record keeps its partition, key, headers and timestamp. It copies
// each partition from its log start to the end offset it found at start,
// then flushes and exits:
//
//	franzcopy -from SRC -to DST -topic T [-compression none|zstd]
//
// Every other setting is franz-go's default (1 MB batches, 10 ms linger,
// 50 MB fetches of up to 1 MB per partition). It prints one JSON object:
// records and value bytes copied. No checkpoint, no resume, no provenance:
// a crash means starting again from the log start.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/twmb/franz-go/pkg/kgo"

	benchtopic "github.com/kafka-catchup/catchup/bench/internal/topic"
)

func main() { os.Exit(mainErr()) }

func mainErr() int {
	from := flag.String("from", "", "source bootstrap brokers, comma separated (required)")
	to := flag.String("to", "", "target bootstrap brokers, comma separated (required)")
	topic := flag.String("topic", "", "topic, the same name on both sides (required)")
	compression := flag.String("compression", "none", "producer compression: none or zstd")
	flag.Parse()
	if *from == "" || *to == "" || *topic == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: franzcopy -from SRC -to DST -topic T [-compression none|zstd]")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	n, bytes, err := copyTopic(ctx, strings.Split(*from, ","), strings.Split(*to, ","), *topic, *compression)
	if err == nil {
		err = json.NewEncoder(os.Stdout).Encode(map[string]int64{"records": n, "bytes": bytes})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "franzcopy:", err)
		return 1
	}
	return 0
}

func copyTopic(ctx context.Context, from, to []string, topic, compression string) (records, bytes int64, err error) {
	codec := kgo.NoCompression()
	switch compression {
	case "none":
	case "zstd":
		codec = kgo.ZstdCompression()
	default:
		return 0, 0, fmt.Errorf("compression %q: want none or zstd", compression)
	}
	admin, err := kgo.NewClient(kgo.SeedBrokers(from...))
	if err != nil {
		return 0, 0, err
	}
	start, err := benchtopic.Offsets(ctx, admin, topic, -2)
	var end map[int32]int64
	if err == nil {
		end, err = benchtopic.Offsets(ctx, admin, topic, -1)
	}
	admin.Close()
	if err != nil {
		return 0, 0, err
	}
	assign := map[int32]kgo.Offset{}
	for p, e := range end {
		if e > start[p] {
			assign[p] = kgo.NewOffset().At(start[p])
		}
	}
	src, err := kgo.NewClient(kgo.SeedBrokers(from...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: assign}))
	if err != nil {
		return 0, 0, err
	}
	defer src.Close()
	dst, err := kgo.NewClient(kgo.SeedBrokers(to...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(codec), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		return 0, 0, err
	}
	defer dst.Close()

	var (
		mu      sync.Mutex
		prodErr error
	)
	failed := func(r *kgo.Record, err error) {
		if err != nil {
			mu.Lock()
			prodErr = cmpOr(prodErr, fmt.Errorf("produce %s/%d: %w", topic, r.Partition, err))
			mu.Unlock()
		}
	}
	for len(assign) > 0 {
		fs := src.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return records, bytes, err
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) { ferr = cmpOr(ferr, fmt.Errorf("fetch %s/%d: %w", t, p, err)) })
		if ferr != nil {
			return records, bytes, ferr
		}
		var done []int32
		fs.EachRecord(func(r *kgo.Record) {
			if _, ok := assign[r.Partition]; !ok || r.Offset >= end[r.Partition] {
				return // past the end captured at start
			}
			dst.Produce(ctx, &kgo.Record{Topic: topic, Partition: r.Partition, Key: r.Key, Value: r.Value,
				Headers: r.Headers, Timestamp: r.Timestamp}, failed)
			records++
			bytes += int64(len(r.Value))
			if r.Offset+1 >= end[r.Partition] {
				delete(assign, r.Partition)
				done = append(done, r.Partition)
			}
		})
		if len(done) > 0 {
			src.PauseFetchPartitions(map[string][]int32{topic: done})
		}
	}
	if err := dst.Flush(ctx); err != nil {
		return records, bytes, err
	}
	mu.Lock()
	defer mu.Unlock()
	return records, bytes, prodErr
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
