package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// logBytes returns the bytes of topic's log (DescribeLogDirs of every
// broker), each partition counted once, at its largest replica: what one
// copy of the data costs the target on disk, whatever the replication
// factor.
func logBytes(ctx context.Context, brokers, topic string) (int64, error) {
	addrs := strings.Split(brokers, ",")
	n, err := topicPartitions(ctx, &kafka.Client{Addr: kafka.TCP(addrs[0])}, topic)
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, fmt.Errorf("topic %s does not exist", topic)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	req := kmsg.NewPtrDescribeLogDirsRequest()
	rt := kmsg.NewDescribeLogDirsRequestTopic()
	rt.Topic = topic
	for p := range int32(n) {
		rt.Partitions = append(rt.Partitions, p)
	}
	req.Topics = append(req.Topics, rt)
	size := make(map[int32]int64, n)
	for _, sh := range cl.RequestSharded(ctx, req) {
		if sh.Err != nil {
			return 0, fmt.Errorf("describe log dirs of broker %d: %w", sh.Meta.NodeID, sh.Err)
		}
		resp := sh.Resp.(*kmsg.DescribeLogDirsResponse)
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			return 0, fmt.Errorf("describe log dirs of broker %d: %w", sh.Meta.NodeID, err)
		}
		for _, d := range resp.Dirs {
			if err := kerr.ErrorForCode(d.ErrorCode); err != nil {
				return 0, fmt.Errorf("log dir %s of broker %d: %w", d.Dir, sh.Meta.NodeID, err)
			}
			for _, t := range d.Topics {
				for _, p := range t.Partitions {
					if t.Topic == topic {
						size[p.Partition] = max(size[p.Partition], p.Size)
					}
				}
			}
		}
	}
	if len(size) != n {
		return 0, fmt.Errorf("topic %s: the brokers describe %d of its %d partitions", topic, len(size), n)
	}
	var sum int64
	for _, s := range size {
		sum += s
	}
	return sum, nil
}

// writePayloads writes n lines of exactly size bytes each to w: JSON
// objects of orders with random ids, names, amounts and timestamps, padded
// with random letters. They compress as such data does (zstd at its default
// level to about a third), where ProducerPerformance's own values,
// random letters with no repeated run, hold no match for an LZ compressor.
// The same seed gives the same lines.
func writePayloads(w io.Writer, n, size int) error {
	const open, closing = `{"orders":[`, `],"pad":""}`
	if size < len(open)+len(closing) {
		return fmt.Errorf("value of %d bytes: want at least %d", size, len(open)+len(closing))
	}
	r := rand.New(rand.NewPCG(1, 2))
	bw := bufio.NewWriter(w)
	line := make([]byte, 0, 2*size)
	for range n {
		line = append(line[:0], open...)
		for i := 0; ; i++ {
			at := len(line)
			if i > 0 {
				line = append(line, ',')
			}
			line = fmt.Appendf(line, `{"id":%d,"customer":"cust-%05d","sku":"SKU-%04X","qty":%d,"price":%d.%02d,"ts":"2026-12-%02dT%02d:%02d:%02d.%03dZ"}`,
				r.Int64N(1e12), r.IntN(100000), r.IntN(1<<16), 1+r.IntN(20), r.IntN(1000), r.IntN(100),
				1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1000))
			if len(line)+len(closing) > size {
				line = line[:at]
				break
			}
		}
		line = append(line, closing[:len(closing)-2]...)
		for len(line) < size-2 {
			line = append(line, 'a'+byte(r.IntN(26)))
		}
		line = append(line, closing[len(closing)-2:]...)
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}
