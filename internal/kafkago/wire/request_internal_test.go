package wire

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/fetch"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// TestFetchRequestAsKafkaGo wants the frame of a FetchRequest, at every
// version it offers, byte for byte the frame kafka-go wrote for the same
// fetch before the request went through Request: the fetch's move to kmsg
// changes nothing on the wire.
func TestFetchRequestAsKafkaGo(t *testing.T) {
	p := catchup.Partition{Topic: "orders", Partition: 5}
	r := &FetchRequest{Partition: p, Offset: 1234, MaxWait: 250 * time.Millisecond, MaxBytes: 1 << 20,
		RequestMaxBytes: 50 << 20, Isolation: ReadCommitted}
	kg := &fetch.Request{ReplicaID: -1, MaxWaitTime: 250, MinBytes: 1, MaxBytes: 50 << 20, IsolationLevel: ReadCommitted,
		SessionID: 0, SessionEpoch: -1,
		Topics: []fetch.RequestTopic{{Topic: p.Topic, Partitions: []fetch.RequestPartition{{
			Partition: p.Partition, CurrentLeaderEpoch: -1, FetchOffset: 1234, LogStartOffset: -1, PartitionMaxBytes: 1 << 20,
		}}}}}
	for v := r.MinVersion(); v <= r.MaxVersion(); v++ {
		f, err := EncodeRequest(r, v, 42, "catchup-test")
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		var want bytes.Buffer
		if err := protocol.WriteRequest(&want, v, 42, "catchup-test", kg); err != nil {
			t.Fatalf("v%d: kafka-go: %v", v, err)
		}
		if !bytes.Equal(f.Bytes(), want.Bytes()) {
			t.Errorf("fetch v%d frame:\n got %x\nwant %x", v, f.Bytes(), want.Bytes())
		}
		f.Release()
	}
}

// TestEncodeRequestRefuses wants a version outside the request's range and
// a flexible kmsg version refused, with nothing framed.
func TestEncodeRequestRefuses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		r       Request
		version int16
		want    string
	}{
		{"fetch v3", &FetchRequest{}, 3, "version 3, want 4 to 11"},
		{"fetch v12", &FetchRequest{}, 12, "version 12, want 4 to 11"},
		{"produce v9", &ProduceRequest{}, 9, "version 9, want 3 to 8"},
		{"flexible kmsg", Kmsg(&kmsg.OffsetForLeaderEpochRequest{Version: 4}), 4, "flexible"},
	} {
		f, err := EncodeRequest(tc.r, tc.version, 1, "c")
		if err == nil || !strings.Contains(err.Error(), tc.want) || f != nil {
			t.Errorf("%s: EncodeRequest = %v, %v; want no frame and an error containing %q", tc.name, f, err, tc.want)
		}
	}
}

// TestKmsgFrame wants a kmsg request framed by EncodeRequest as kmsg's own
// formatter frames it (request header v1 at a non-flexible version).
func TestKmsgFrame(t *testing.T) {
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.Version, req.ReplicaID = 3, -1
	rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
	rt.Topic = "orders"
	rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
	rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = 5, 7, 7
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	f, err := EncodeRequest(Kmsg(req), 3, 9, "catchup-test")
	if err != nil {
		t.Fatal(err)
	}
	want := kmsg.NewRequestFormatter(kmsg.FormatterClientID("catchup-test")).AppendRequest(nil, req, 9)
	if !bytes.Equal(f.Bytes(), want) {
		t.Errorf("frame:\n got %x\nwant %x", f.Bytes(), want)
	}
}

// BenchmarkEncodeFetch measures framing one fetch request, sent once per
// fetch: its allocations are per fetch.
func BenchmarkEncodeFetch(b *testing.B) {
	r := &FetchRequest{Partition: catchup.Partition{Topic: "orders", Partition: 5}, Offset: 1234,
		MaxWait: 250 * time.Millisecond, MaxBytes: 1 << 20, RequestMaxBytes: 50 << 20}
	b.ReportAllocs()
	for b.Loop() {
		f, err := EncodeRequest(r, 11, 1, "catchup")
		if err != nil {
			b.Fatal(err)
		}
		f.Release()
	}
}
