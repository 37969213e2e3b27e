package brokers_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// Helpers that talk to the brokers with franz-go, independently of the
// kafka-go code under test: topic creation, seeding, reading back.

// newClient returns a franz-go client of the PLAINTEXT listeners brokers
// (comma separated).
func newClient(t *testing.T, brokers string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	// A short metadata age: a topic just created, or a broker just
	// restarted, is seen within a fraction of a second, not kgo's 5s.
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.MetadataMinAge(100 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// uniqueTopic returns a topic name no other test or run uses: the clusters
// outlive a test, and auto creation is off.
func uniqueTopic(prefix string) string {
	return fmt.Sprintf("%s-%s-%04x", prefix, strconv.FormatInt(time.Now().UnixMilli(), 36), rand.N(1<<16))
}

// createTopic creates topic with n partitions (replication factor 1) on the
// cluster at brokers and waits until every partition answers ListOffsets.
func createTopic(ctx context.Context, t *testing.T, brokers, topic string, n int32) {
	t.Helper()
	cl := newClient(t, brokers)
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, n, 1
	req.Topics = append(req.Topics, rt)
	res, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("create topic %s on %s: %v", topic, brokers, err)
	}
	for _, tr := range res.Topics {
		if err := kerr.ErrorForCode(tr.ErrorCode); err != nil {
			t.Fatalf("create topic %s on %s: %v (%s)", topic, brokers, err, deref(tr.ErrorMessage))
		}
	}
	for {
		_, err := endOffsets(ctx, cl, topic, n)
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("topic %s on %s never got ready: %v", topic, brokers, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// endOffsets returns the high watermark of partitions 0..n-1 of topic; cl
// is a client, or one broker of it (kgo.Client.Broker) to ask that broker.
func endOffsets(ctx context.Context, cl kmsg.Requestor, topic string, n int32) ([]int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for p := range n {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = p, -1, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	res, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	out := make([]int64, n)
	seen := 0
	for _, t := range res.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, fmt.Errorf("list offsets of %s/%d: %w", t.Topic, p.Partition, err)
			}
			out[p.Partition] = p.Offset
			seen++
		}
	}
	if seen != int(n) {
		return nil, fmt.Errorf("list offsets of %s: %d of %d partitions answered", topic, seen, n)
	}
	return out, nil
}

// mustEndOffsets is endOffsets on a fresh client, failing the test on error.
func mustEndOffsets(ctx context.Context, t *testing.T, brokers, topic string, n int32) []int64 {
	t.Helper()
	offs, err := endOffsets(ctx, newClient(t, brokers), topic, n)
	if err != nil {
		t.Fatalf("end offsets of %s on %s: %v", topic, brokers, err)
	}
	return offs
}

// makeRecords returns perPartition records for each of n partitions of
// topic, exercising what a copy must keep: null and empty keys and values,
// binary data, null and empty header values, repeated header keys, and
// explicit timestamps (millisecond precision, as Kafka stores them).
func makeRecords(topic string, n int32, perPartition, valueBytes int) [][]*kgo.Record {
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	out := make([][]*kgo.Record, n)
	for p := range n {
		for i := range perPartition {
			r := &kgo.Record{Topic: topic, Partition: p, Timestamp: base.Add(time.Duration(i) * time.Millisecond)}
			switch i % 7 {
			case 0: // null key
			case 1:
				r.Key = []byte{}
			default:
				r.Key = fmt.Appendf(nil, "key-%d-%d", p, i)
			}
			switch i % 11 {
			case 0: // tombstone
			case 1:
				r.Value = []byte{}
			default:
				r.Value = make([]byte, valueBytes/2+i%valueBytes)
				for j := range r.Value {
					r.Value[j] = byte(i*31 + j*7 + int(p))
				}
			}
			switch i % 3 {
			case 1:
				r.Headers = []kgo.RecordHeader{{Key: "trace", Value: fmt.Appendf(nil, "t-%d", i)}, {Key: "null", Value: nil}}
			case 2:
				r.Headers = []kgo.RecordHeader{{Key: "empty", Value: []byte{}}, {Key: "dup", Value: []byte("a")}, {Key: "dup", Value: []byte("b")}}
			}
			out[p] = append(out[p], r)
		}
	}
	return out
}

// seed produces recs to their partitions with acks=all, in record batches
// of at most batchBytes, so that a copy fetching small amounts makes many
// fetches.
func seed(ctx context.Context, t *testing.T, brokers string, recs [][]*kgo.Record, batchBytes int32) {
	t.Helper()
	cl := newClient(t, brokers, kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchMaxBytes(batchBytes), kgo.ProducerLinger(0), kgo.RequiredAcks(kgo.AllISRAcks()))
	var all []*kgo.Record
	for _, rs := range recs {
		all = append(all, rs...)
	}
	if err := cl.ProduceSync(ctx, all...).FirstErr(); err != nil {
		t.Fatalf("seed %d records: %v", len(all), err)
	}
}

// readAll reads every record of partitions 0..n-1 of topic, up to the high
// watermark each has now, uncommitted ones included.
func readAll(ctx context.Context, t *testing.T, brokers, topic string, n int32) [][]*kgo.Record {
	t.Helper()
	return readAllAs(ctx, t, brokers, topic, n, kgo.ReadUncommitted())
}

// readAllAs is readAll with the isolation level iso.
func readAllAs(ctx context.Context, t *testing.T, brokers, topic string, n int32, iso kgo.IsolationLevel) [][]*kgo.Record {
	t.Helper()
	ends := mustEndOffsets(ctx, t, brokers, topic, n)
	starts := map[int32]kgo.Offset{}
	left := 0
	for p := range n {
		starts[p] = kgo.NewOffset().AtStart()
		if ends[p] > 0 {
			left++
		}
	}
	cl := newClient(t, brokers, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: starts}),
		kgo.FetchIsolationLevel(iso))
	out := make([][]*kgo.Record, n)
	for left > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read %s from %s: %v (%d partitions not read to their end %v)", topic, brokers, err, left, ends)
		}
		fs.EachError(func(topic string, p int32, err error) {
			t.Logf("read %s/%d from %s: %v", topic, p, brokers, err)
		})
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset >= ends[r.Partition] {
				return
			}
			out[r.Partition] = append(out[r.Partition], r)
			if r.Offset == ends[r.Partition]-1 {
				left--
			}
		})
	}
	return out
}

// provenance is the header value catchup writes for a record copied from
// offset off of partition p of topic in cluster.
func provenance(cluster, topic string, p int32, off int64) []byte {
	return catchup.AppendProvenance(nil, catchup.Provenance{Cluster: cluster, Partition: catchup.Partition{Topic: topic, Partition: p}, Offset: off})
}

// sameBytes compares with null and empty kept apart.
func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func showBytes(b []byte) string {
	if b == nil {
		return "null"
	}
	if len(b) > 24 {
		return fmt.Sprintf("%q...(%d bytes)", b[:24], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// recordDiff describes how got differs from want ("" if it does not): key,
// value, headers in order, timestamp, partition and offset. With cluster
// set, got must also carry the provenance header naming want, last.
func recordDiff(got, want *kgo.Record, cluster string) string {
	var d []string
	if got.Partition != want.Partition || got.Offset != want.Offset {
		d = append(d, fmt.Sprintf("at %d/%d, want %d/%d", got.Partition, got.Offset, want.Partition, want.Offset))
	}
	if !sameBytes(got.Key, want.Key) {
		d = append(d, fmt.Sprintf("key %s, want %s", showBytes(got.Key), showBytes(want.Key)))
	}
	if !sameBytes(got.Value, want.Value) {
		d = append(d, fmt.Sprintf("value %s, want %s", showBytes(got.Value), showBytes(want.Value)))
	}
	if !got.Timestamp.Equal(want.Timestamp) {
		d = append(d, fmt.Sprintf("timestamp %s, want %s", got.Timestamp.Format(time.RFC3339Nano), want.Timestamp.Format(time.RFC3339Nano)))
	}
	wantH := want.Headers
	if cluster != "" {
		wantH = append(wantH[:len(wantH):len(wantH)], kgo.RecordHeader{Key: catchup.ProvenanceHeader,
			Value: provenance(cluster, want.Topic, want.Partition, want.Offset)})
	}
	if len(got.Headers) != len(wantH) {
		d = append(d, fmt.Sprintf("%d headers %s, want %d %s", len(got.Headers), showHeaders(got.Headers), len(wantH), showHeaders(wantH)))
	} else {
		for i := range wantH {
			if got.Headers[i].Key != wantH[i].Key || !sameBytes(got.Headers[i].Value, wantH[i].Value) {
				d = append(d, fmt.Sprintf("headers %s, want %s", showHeaders(got.Headers), showHeaders(wantH)))
				break
			}
		}
	}
	return strings.Join(d, "; ")
}

func showHeaders(hs []kgo.RecordHeader) string {
	s := make([]string, len(hs))
	for i, h := range hs {
		s[i] = h.Key + "=" + showBytes(h.Value)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// copyStats counts, per target partition, the source offsets found in the
// provenance headers: lost (in want, not in got), duplicated (seen twice or
// more) and foreign (no provenance header of this source partition).
type copyStats struct{ lost, duplicated, foreign int }

func statsOf(got, want []*kgo.Record, cluster, topic string, p int32) copyStats {
	seen := map[int64]int{}
	var s copyStats
	for _, r := range got {
		off, ok := sourceOffset(r, cluster, topic, p)
		if !ok {
			s.foreign++
			continue
		}
		seen[off]++
	}
	for _, r := range want {
		switch n := seen[r.Offset]; {
		case n == 0:
			s.lost++
		case n > 1:
			s.duplicated += n - 1
		}
	}
	return s
}

func sourceOffset(r *kgo.Record, cluster, topic string, p int32) (int64, bool) {
	cr := catchup.Record{}
	for _, h := range r.Headers {
		cr.Headers = append(cr.Headers, catchup.Header{Key: h.Key, Value: h.Value})
	}
	return catchup.SourceOffset(&cr, cluster, catchup.Partition{Topic: topic, Partition: p})
}

// checkExactCopy fails the test unless got holds exactly want, record for
// record in every partition (see recordDiff); cluster is the source cluster
// name the provenance headers must carry, "" for none.
func checkExactCopy(t *testing.T, what string, got, want [][]*kgo.Record, cluster string) {
	t.Helper()
	var total copyStats
	for p := range want {
		if cluster != "" && len(want[p]) > 0 {
			s := statsOf(got[p], want[p], cluster, want[p][0].Topic, int32(p))
			total.lost += s.lost
			total.duplicated += s.duplicated
			total.foreign += s.foreign
		}
		if len(got[p]) != len(want[p]) {
			t.Errorf("%s: partition %d holds %d records, want %d", what, p, len(got[p]), len(want[p]))
		}
		bad := 0
		for i := range min(len(got[p]), len(want[p])) {
			if d := recordDiff(got[p][i], want[p][i], cluster); d != "" {
				if bad++; bad <= 3 {
					t.Errorf("%s: partition %d record %d: %s", what, p, i, d)
				}
			}
		}
		if bad > 3 {
			t.Errorf("%s: partition %d: %d records differ in all", what, p, bad)
		}
	}
	if total != (copyStats{}) {
		t.Errorf("%s: %d records lost, %d duplicated, %d without provenance", what, total.lost, total.duplicated, total.foreign)
	}
}
