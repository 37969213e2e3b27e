package wire

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/compress"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/encode_golden.txt from this encoder")

// goldenRecords are records whose encoding exercises what the encoder sizes
// and formats: keys, values and header values null, empty and set; record
// lengths on both sides of the varint boundaries (64 and 8192 bytes);
// timestamps before and after the first; offsets that follow one another
// across every decimal length from 1 to 7 digits and at the end of int64,
// with gaps (compaction), going back, and negative.
func goldenRecords() []catchup.Record {
	var offsets []int64
	for _, from := range []int64{-2, 7, 97, 998, 9_997, 99_998, 999_997, 1 << 40, math.MaxInt64 - 3} {
		for k := int64(0); k < 5 && from <= math.MaxInt64-k; k++ {
			offsets = append(offsets, from+k)
		}
	}
	offsets = append(offsets, 5, 5, 6, 1_000, 1_002, 10_000_000)
	r := rand.New(rand.NewPCG(7, 11))
	sizes := []int{0, 1, 2, 40, 45, 50, 55, 58, 59, 60, 61, 62, 63, 64, 65, 100, 127, 128, 8100, 8130, 8140, 8150, 8160, 8170, 8180, 8191, 8192, 9000}
	recs := make([]catchup.Record, len(offsets))
	for i, off := range offsets {
		rec := catchup.Record{Offset: off, Timestamp: time.UnixMilli(1_700_000_000_000 + int64(r.IntN(2_000_000)) - 1_000_000)}
		switch i % 4 {
		case 0:
			rec.Key = fmt.Appendf(nil, "key-%d", i)
		case 1:
			rec.Key = []byte{}
		}
		size := sizes[i%len(sizes)]
		if i%7 != 3 {
			rec.Value = bytes.Repeat([]byte{byte('a' + i%26)}, size)
		}
		switch i % 3 {
		case 1:
			rec.Headers = []catchup.Header{{Key: "trace", Value: []byte("0af7651916cd43dd")}}
		case 2:
			rec.Headers = []catchup.Header{{Key: "a", Value: nil}, {Key: "", Value: []byte{}},
				{Key: strings.Repeat("h", 70), Value: bytes.Repeat([]byte("v"), size/2)}}
		}
		recs[i] = rec
	}
	recs[len(recs)-1].Timestamp = time.UnixMilli(-1)
	recs[len(recs)-2].Timestamp = time.UnixMilli(0)
	return recs
}

// goldenRequests are produce requests of goldenRecords in every codec,
// stamped and not, idempotent and not, and of slices of them.
func goldenRequests() map[string]ProduceRequest {
	recs := goldenRecords()
	out := make(map[string]ProduceRequest)
	stamps := map[string]*catchup.Provenance{
		"unstamped": nil,
		"stamped":   {Cluster: "eu-prod", Partition: catchup.Partition{Topic: "orders.src", Partition: 11}},
		"stamped-long": {Cluster: strings.Repeat("c", 60), Partition: catchup.Partition{
			Topic: strings.Repeat("t", 200), Partition: math.MaxInt32}},
	}
	codecs := []struct {
		c     compress.Compression
		level int
	}{{compress.None, 0}, {compress.Gzip, 0}, {compress.Gzip, 1}, {compress.Gzip, 9}, {compress.Snappy, 0},
		{compress.Lz4, 0}, {compress.Zstd, 0}, {compress.Zstd, 1}, {compress.Zstd, 22}}
	seqs := map[string]ProducerSeq{"plain": {}, "idempotent": {On: true, ID: 123456789, Epoch: 3, Base: 2_000_000_000}}
	for sn, stamp := range stamps {
		for _, c := range codecs {
			for qn, seq := range seqs {
				for _, span := range [][2]int{{0, len(recs)}, {0, 1}, {5, 17}, {len(recs) - 3, len(recs)}} {
					name := fmt.Sprintf("%s/%s-%d/%s/%d-%d", sn, c.c, c.level, qn, span[0], span[1])
					out[name] = ProduceRequest{Acks: -1, TimeoutMillis: 30_000, Compression: c.c, Level: c.level,
						Batches: []ProduceBatch{{Partition: catchup.Partition{Topic: "orders", Partition: 5}, Records: recs[span[0]:span[1]], Stamp: stamp, Seq: seq}}}
				}
			}
		}
	}
	return out
}

// TestEncodeGolden wants every goldenRequests frame to hash as
// testdata/encode_golden.txt says: the frames the encoder wrote when
// records were sized and formatted one call at a time (written by
// -update-golden at that revision), so that a change to how the encoder
// sizes or formats records changes no byte it writes.
func TestEncodeGolden(t *testing.T) {
	path := filepath.Join("testdata", "encode_golden.txt")
	got := make(map[string]string)
	for name, r := range goldenRequests() {
		f, err := EncodeRequest(&r, 8, 42, "client-x")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sum := sha256.Sum256(f.Bytes())
		got[name] = hex.EncodeToString(sum[:])
		f.Release()
	}
	if *updateGolden {
		var b strings.Builder
		for _, name := range sortedKeys(got) {
			fmt.Fprintf(&b, "%s %s\n", name, got[name])
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := make(map[string]string)
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		name, sum, _ := strings.Cut(line, " ")
		want[name] = sum
	}
	if len(want) != len(got) {
		t.Errorf("%d golden frames, %d encoded", len(want), len(got))
	}
	for _, name := range sortedKeys(got) {
		if want[name] != got[name] {
			t.Errorf("%s: frame hashes %s, want %s", name, got[name], want[name])
		}
	}
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
