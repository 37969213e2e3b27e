package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestLogBytes: the bytes of a topic's log on a 3-broker cluster, each
// partition once although every broker describes it, and an empty
// partition at 0.
func TestLogBytes(t *testing.T) {
	const topic, n = "events", 5
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(3, topic))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(0), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for i := range n {
		// one batch a record: 61 bytes of batch header and a record of 109
		// (length 2, attributes, timestamp and offset deltas, key length 1
		// each, value length 2, value 100, header count 1)
		r := &kgo.Record{Topic: topic, Partition: int32(i % 2), Value: bytes.Repeat([]byte("v"), 100)}
		if err := cl.ProduceSync(t.Context(), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	got, err := logBytes(t.Context(), strings.Join(c.ListenAddrs(), ","), topic)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(n * (61 + 109)); got != want {
		t.Errorf("logBytes = %d, want %d", got, want)
	}
	if _, err := logBytes(t.Context(), c.ListenAddrs()[0], "absent"); err == nil || !strings.Contains(err.Error(), "absent does not exist") {
		t.Errorf("logBytes of an absent topic: %v, want it named as absent", err)
	}
}

// TestPayloads: lines of exactly the size asked, each a JSON object, the
// same every time, and compressible by zstd as orders in JSON are.
func TestPayloads(t *testing.T) {
	var a, b bytes.Buffer
	if err := writePayloads(&a, 1000, 1024); err != nil {
		t.Fatal(err)
	}
	if err := writePayloads(&b, 1000, 1024); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two calls wrote different lines")
	}
	lines := strings.Split(strings.TrimSuffix(a.String(), "\n"), "\n")
	if len(lines) != 1000 {
		t.Fatalf("%d lines, want 1000", len(lines))
	}
	for i, l := range lines {
		var v map[string]any
		if len(l) != 1024 || json.Unmarshal([]byte(l), &v) != nil {
			t.Fatalf("line %d: %d bytes, JSON error %v; want 1024 bytes of JSON: %s", i, len(l), json.Unmarshal([]byte(l), &v), l)
		}
	}
	enc, err := zstd.NewWriter(nil, zstd.WithWindowSize(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	ratio := func(b []byte) float64 { return float64(len(enc.EncodeAll(b, nil))) / float64(len(b)) }
	if r := ratio(a.Bytes()); r > 0.4 {
		t.Errorf("the payloads compress to %.2f of their size, want at most 0.4", r)
	}
	if err := writePayloads(&a, 1, 10); err == nil {
		t.Error("a 10-byte value: no error")
	}
}
