package kafkago

import (
	"math/rand/v2"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// TestCompressedFetchReleasesItsResponse: a fetch whose records were all
// decompressed gives its response buffer back to the Recycler at once,
// before its records are produced, so that each partition copied at once
// holds its decompressed records and not the response too; a fetch of
// uncompressed batches keeps it, since its records are in it.
func TestCompressedFetchReleasesItsResponse(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "zstd", "none"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := t.Context()
	r := rand.New(rand.NewPCG(1, 2))
	value := func() []byte { // half random: compressed (franz-go sends a batch it cannot shrink uncompressed) to over 64 KiB, which the Recycler keeps
		b := make([]byte, 1024)
		for i := range 512 {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	for topic, codec := range map[string]kgo.CompressionCodec{"zstd": kgo.ZstdCompression(), "none": kgo.NoCompression()} {
		prod, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ProducerBatchCompression(codec),
			kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			t.Fatal(err)
		}
		recs := make([]*kgo.Record, 200)
		for i := range recs {
			recs[i] = &kgo.Record{Value: value()}
		}
		err = prod.ProduceSync(ctx, recs...).FirstErr()
		prod.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	s, err := NewSource(Settings{Name: "src", Brokers: c.ListenAddrs()}, "read_committed")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tc := range []struct {
		topic string
		kept  int // response buffers back in the Recycler before the release
	}{{"zstd", 1}, {"none", 0}} {
		f, err := s.Fetch(ctx, catchup.Partition{Topic: tc.topic}, 0, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Records) != 200 {
			t.Fatalf("%s: %d records, want 200", tc.topic, len(f.Records))
		}
		if got := s.recycle.Bodies(); got != tc.kept {
			t.Errorf("%s: %d response buffers recycled before the records were released, want %d", tc.topic, got, tc.kept)
		}
		f.Release()
		if got := s.recycle.Bodies(); got != 1 {
			t.Errorf("%s: %d response buffers recycled after the release, want 1", tc.topic, got)
		}
		s.recycle.Body(64 << 10) // taken, for the next topic
	}
}
