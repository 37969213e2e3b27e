package e2e

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// oldTime is long before any test runs: timestamps must be copied, not
// replaced by the time of the copy.
var oldTime = time.Date(2019, 3, 1, 12, 0, 0, 0, time.UTC)

// largeValueBytes is the size of the large values: several of them exceed
// one produce request of the target (batch_bytes defaults to 1 MB).
const largeValueBytes = 200 << 10

// variedRecords returns n records for topic/partition, numbered from first,
// whose shapes cover what a copy must keep apart: null and empty keys,
// values and header values, repeated header keys, binary data, timestamps
// out of order, the Unix epoch, and (with large) values of largeValueBytes.
func variedRecords(topic string, partition int32, first, n int, large bool) []*kgo.Record {
	out := make([]*kgo.Record, 0, n)
	for i := first; i < first+n; i++ {
		r := &kgo.Record{Topic: topic, Partition: partition, Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "v%d", i)}
		// Old timestamps, one second apart, every fifth an hour earlier
		// than its predecessor (a negative delta inside a batch).
		r.Timestamp = oldTime.Add(time.Duration(i) * time.Second)
		if i%5 == 4 {
			r.Timestamp = r.Timestamp.Add(-time.Hour)
		}
		switch i % 10 {
		case 0:
			r.Key = nil
		case 1:
			r.Key, r.Value = nil, nil
		case 2:
			r.Key, r.Value = []byte{}, []byte{}
		case 3:
			r.Value = nil // a tombstone
		case 4:
			r.Value = []byte{}
		case 5:
			r.Headers = []kgo.RecordHeader{
				{Key: "h", Value: nil}, {Key: "h", Value: []byte{}}, {Key: "h", Value: []byte("1")},
				{Key: "other", Value: []byte("x")}, {Key: "h", Value: []byte("2")}, {Key: "", Value: []byte("empty key")},
			}
		case 6:
			r.Key = []byte{0, 0xff, ':', 0}
			r.Value = make([]byte, 256)
			for j := range r.Value {
				r.Value[j] = byte(j)
			}
			r.Headers = []kgo.RecordHeader{{Key: "bin", Value: []byte{0, 1, 0xfe}}}
		case 8:
			r.Timestamp = time.UnixMilli(0) // the Unix epoch: not "no timestamp", not "now"
		case 7:
			if large {
				r.Value = bytes.Repeat(fmt.Appendf(nil, "large %d|", i), largeValueBytes/8)[:largeValueBytes]
			}
		}
		out = append(out, r)
	}
	return out
}

// checkShapes fails the test if snap lacks one of the shapes the fidelity
// test needs: a check of the test itself, so that a reader that folded
// null into empty could not make it pass vacuously.
func checkShapes(t *testing.T, snap snapshot) {
	t.Helper()
	shapes := map[string]func(r rec) bool{
		"null key":          func(r rec) bool { return r.Key == nil },
		"empty key":         func(r rec) bool { return r.Key != nil && len(r.Key) == 0 },
		"null value":        func(r rec) bool { return r.Value == nil },
		"empty value":       func(r rec) bool { return r.Value != nil && len(r.Value) == 0 },
		"large value":       func(r rec) bool { return len(r.Value) >= largeValueBytes },
		"null header value": func(r rec) bool { return len(r.Headers) > 0 && r.Headers[0].Value == nil },
		"empty header value": func(r rec) bool {
			return len(r.Headers) > 1 && r.Headers[1].Value != nil && len(r.Headers[1].Value) == 0
		},
		"old timestamp":   func(r rec) bool { return r.Timestamp < oldTime.Add(24*time.Hour).UnixMilli() },
		"epoch timestamp": func(r rec) bool { return r.Timestamp == 0 },
	}
	for name, has := range shapes {
		found := false
		for _, recs := range snap {
			for _, s := range recs {
				found = found || has(s.rec)
			}
		}
		if !found {
			t.Errorf("the source as read back holds no record with a %s", name)
		}
	}
}

// TestFidelity copies 3 topics of 4 partitions whose records cover every
// field shape, and checks the copy record for record, the report, the
// checkpoints, and that a second run copies nothing: with the default
// settings, and with fetches smaller than one record batch, small produce
// requests and compression.
func TestFidelity(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		extra []string
	}{
		{"defaults", nil},
		{"small fetches and batches, zstd", []string{"fetch_bytes: 1024", "producer: {batch_records: 3, batch_bytes: 300000, compression: zstd}"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testFidelity(t, tc.extra...)
		})
	}
}

func testFidelity(t *testing.T, extra ...string) {
	e := newEnv(t)
	ctx := testContext(t)
	topics := []string{e.topic(t, "a"), e.topic(t, "b"), e.topic(t, "c")}
	e.createTopics(ctx, t, 4, nil, topics...)
	for ti, topic := range topics {
		for p := range int32(4) {
			for first := 0; first < 30; first += 10 { // three batches of ten
				e.src.produce(ctx, t, variedRecords(topic, p, first, 10, ti == 0)...)
			}
		}
	}
	src := e.src.read(ctx, t, "read_committed", topics...)
	checkShapes(t, src)
	hwm := e.src.highWatermarks(ctx, t, topics...)
	parts := sortedPartitions(hwm)
	if len(parts) != 12 {
		t.Fatalf("source has %d partitions, want 12", len(parts))
	}

	yaml := e.configYAML(topics, extra...)
	rep := mustRun(ctx, t, yaml, pipeline.Options{})
	wantWindows(t, "first run", rep, each(parts, func(p catchup.Partition) window {
		return window{From: 0, To: hwm[p], Next: hwm[p], Copied: int64(len(src[p])), Status: replicate.StatusDone}
	}))
	compareCopy(t, src, e.dst.read(ctx, t, "read_uncommitted", topics...), copySpec{})

	dstEnd := e.dst.highWatermarks(ctx, t, topics...)
	cps := e.wantCheckpoints(ctx, t, "after the first run", hwm)
	for _, p := range parts {
		c := cps[p]
		if c.TargetEnd != dstEnd[p] || c.Records != int64(len(src[p])) || c.LastError != "" {
			t.Errorf("checkpoint of %s: TargetEnd %d, Records %d, LastError %q; want %d, %d, \"\"",
				p, c.TargetEnd, c.Records, c.LastError, dstEnd[p], len(src[p]))
		}
	}

	rep = mustRun(ctx, t, yaml, pipeline.Options{})
	wantWindows(t, "second run", rep, each(parts, func(p catchup.Partition) window {
		return window{From: hwm[p], To: hwm[p], Next: hwm[p], Status: replicate.StatusDone}
	}))
	if diff := cmp.Diff(dstEnd, e.dst.highWatermarks(ctx, t, topics...)); diff != "" {
		t.Errorf("the second run wrote to the target (-before +after):\n%s", diff)
	}
	verifyExactCopy(t, e.src, e.dst, topics)
}
