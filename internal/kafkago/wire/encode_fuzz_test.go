package wire

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/segmentio/kafka-go/compress"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// FuzzEncodeProduce encodes two records built from arbitrary fields into a
// produce request, reads it back with franz-go's kmsg (decodeProduce) and
// with catchup's own decoder, and wants the records as sent, nulls and
// empties apart, with the provenance header when stamped.
func FuzzEncodeProduce(f *testing.F) {
	f.Add([]byte("k"), []byte("v"), "h", []byte("hv"), int64(1_700_000_000_000), int64(-1), uint8(0), true, false)
	f.Add([]byte{}, []byte(nil), "", []byte{}, int64(0), int64(1<<40), uint8(4), false, true)
	f.Add([]byte(nil), []byte("x"), "null", []byte(nil), int64(-1), int64(0), uint8(2), true, true)
	f.Fuzz(func(t *testing.T, key, value []byte, hkey string, hval []byte, ts1, ts2 int64, codec uint8, v8, stamped bool) {
		// The fuzzer gives empty slices, never nil ones: make some nil.
		if len(key) == 0 && codec&0x10 != 0 {
			key = nil
		}
		if len(value) == 0 && codec&0x20 != 0 {
			value = nil
		}
		if len(hval) == 0 && codec&0x40 != 0 {
			hval = nil
		}
		in := []catchup.Record{
			{Offset: 100, Key: key, Value: value, Timestamp: time.UnixMilli(ts1), Headers: []catchup.Header{{Key: hkey, Value: hval}}},
			{Offset: 105, Key: value, Value: key, Timestamp: time.UnixMilli(ts2)},
		}
		c := []compress.Compression{compress.None, compress.Gzip, compress.Snappy, compress.Lz4, compress.Zstd}[int(codec&0x0f)%5]
		version := int16(3)
		if v8 {
			version = 8
		}
		var stamp *catchup.Provenance
		sent := in
		if stamped {
			stamp = &catchup.Provenance{Cluster: "src", Partition: catchup.Partition{Topic: "orders", Partition: 2}}
			sent = make([]catchup.Record, len(in))
			for i, r := range in {
				r.Headers = append(append([]catchup.Header(nil), r.Headers...), catchup.Header{Key: catchup.ProvenanceHeader,
					Value: catchup.AppendProvenance(nil, catchup.Provenance{Cluster: "src", Partition: stamp.Partition, Offset: r.Offset})})
				sent[i] = r
			}
		}
		r := ProduceRequest{Acks: -1, TimeoutMillis: 30_000, Compression: c,
			Batches: []ProduceBatch{{Partition: catchup.Partition{Topic: "orders", Partition: 5}, Records: in, Stamp: stamp}}}
		fr, err := EncodeRequest(&r, version, 42, "client-x")
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		defer fr.Release()
		_, b, recs := decodeProduce(t, fr.buf, version)
		if len(recs) != len(sent) || b.NumRecords != int32(len(sent)) {
			t.Fatalf("kmsg read %d records (count %d), want %d", len(recs), b.NumRecords, len(sent))
		}
		for i, kr := range recs {
			got := catchup.Record{Offset: sent[i].Offset, Key: kr.Key, Value: kr.Value,
				Timestamp: time.UnixMilli(b.FirstTimestamp + kr.TimestampDelta64)}
			for _, h := range kr.Headers {
				got.Headers = append(got.Headers, catchup.Header{Key: h.Key, Value: h.Value})
			}
			checkSame(t, "kmsg", i, sent[i], got)
		}
		if want := max(ts1, ts2); b.MaxTimestamp != want {
			t.Errorf("max timestamp %d, want %d", b.MaxTimestamp, want)
		}
		d, err := Decode(Fetched{Records: fr.buf[len(fr.buf)-int(b.Length)-batchLogOverlap:]}, 0, ReadUncommitted)
		if err != nil {
			t.Fatalf("catchup's decoder: %v", err)
		}
		if len(d.Records) != len(sent) {
			t.Fatalf("catchup's decoder read %d records, want %d", len(d.Records), len(sent))
		}
		for i, got := range d.Records {
			got.Offset = sent[i].Offset
			checkSame(t, "catchup", i, sent[i], got)
		}
	})
}

// checkSame fails unless got is sent, null and empty byte slices apart.
func checkSame(t *testing.T, decoder string, i int, sent, got catchup.Record) {
	t.Helper()
	if !catchup.SameContent(&sent, &got, false) {
		t.Errorf("%s, record %d (-sent +decoded):\n%s", decoder, i, cmp.Diff(sent, got))
	}
}
