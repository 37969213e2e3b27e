package e2e

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// rec is one record as the verification compares it: everything a copy must
// preserve. Offset is the source offset (for a target record, the one its
// provenance header names).
type rec struct {
	Offset    int64
	Key       []byte // nil and empty differ: go-cmp keeps them apart
	Value     []byte
	Headers   []catchup.Header
	Timestamp int64 // Unix milliseconds, what Kafka stores
}

// stored is a record as read from one cluster.
type stored struct {
	at  int64 // offset in the partition it was read from
	rec rec
}

// snapshot is the data records of some topics of one cluster, by partition,
// in offset order; every partition of the topics is present.
type snapshot map[catchup.Partition][]stored

// read reads every data record of topics from c with franz-go, under
// isolation "read_committed" or "read_uncommitted" (aborted transactions
// filtered by franz-go, an implementation independent of catchup's).
func (c *cluster) read(ctx context.Context, t *testing.T, isolation string, topics ...string) snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	level := kgo.ReadCommitted()
	if isolation == "read_uncommitted" {
		level = kgo.ReadUncommitted()
	}
	snap := snapshot{}
	// end is the offset to read up to: the last stable offset or the high
	// watermark. Control records are kept so that the reader sees the
	// offset of a trailing transaction marker too.
	ends := map[catchup.Partition]int64{}
	consume := map[string]map[int32]kgo.Offset{}
	for p, o := range c.offsets(ctx, t, topics...) {
		snap[p] = nil
		end := o.HighWatermark
		if isolation != "read_uncommitted" {
			end = o.LastStable
		}
		if end <= o.LogStart {
			continue
		}
		ends[p] = end
		if consume[p.Topic] == nil {
			consume[p.Topic] = map[int32]kgo.Offset{}
		}
		consume[p.Topic][p.Partition] = kgo.NewOffset().At(o.LogStart)
	}
	if len(ends) == 0 {
		return snap
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.addrs...), kgo.ConsumePartitions(consume),
		kgo.FetchIsolationLevel(level), kgo.KeepControlRecords(), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatalf("read the %s: %v", c.role, err)
	}
	defer cl.Close()
	seen := map[catchup.Partition]int64{}
	for len(ends) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read the %s: partitions not read to their end before the deadline: %v (last offsets seen %v)", c.role, ends, seen)
		}
		fs.EachError(func(topic string, partition int32, err error) {
			t.Fatalf("read %s/%d of the %s: %v", topic, partition, c.role, err)
		})
		fs.EachRecord(func(r *kgo.Record) {
			p := catchup.Partition{Topic: r.Topic, Partition: r.Partition}
			end, ok := ends[p]
			if !ok || r.Offset >= end {
				return
			}
			seen[p] = r.Offset
			if r.Offset == end-1 {
				delete(ends, p)
			}
			if r.Attrs.IsControl() {
				return
			}
			x := rec{Offset: r.Offset, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp.UnixMilli()}
			for _, h := range r.Headers {
				x.Headers = append(x.Headers, catchup.Header{Key: h.Key, Value: h.Value})
			}
			snap[p] = append(snap[p], stored{at: r.Offset, rec: x})
		})
	}
	return snap
}

// copySpec is the part of the source a copy should hold: per partition, the
// source offsets [From, To). An absent partition means all of it.
type copySpec struct {
	From, To map[catchup.Partition]int64
	// NoProvenance says the pipeline ran with provenance: false: target
	// records carry no provenance header and are matched to the source in
	// order.
	NoProvenance bool
}

// verifyExactCopy reads topics fully from both clusters and fails the test
// unless the target holds exactly the source's committed records.
func verifyExactCopy(t *testing.T, src, dst *cluster, topics []string) {
	t.Helper()
	ctx := t.Context()
	compareCopy(t, src.read(ctx, t, "read_committed", topics...), dst.read(ctx, t, "read_uncommitted", topics...), copySpec{})
}

// verifyCopy is verifyExactCopy for part of the source, read under isolation.
func verifyCopy(t *testing.T, src, dst *cluster, topics []string, isolation string, spec copySpec) {
	t.Helper()
	ctx := t.Context()
	compareCopy(t, src.read(ctx, t, isolation, topics...), dst.read(ctx, t, "read_uncommitted", topics...), spec)
}

// compareCopy fails the test unless every target partition holds, in
// order, exactly the source records spec selects, each once, with the
// provenance header of its source offset as its last header, and nothing
// else. It reports per partition the records missing, duplicated, out of
// order, different or unexpected, with their source and target offsets.
func compareCopy(t *testing.T, src, dst snapshot, spec copySpec) {
	t.Helper()
	parts := slices.SortedFunc(maps.Keys(src), catchup.Partition.Compare)
	for p := range dst {
		if _, ok := src[p]; !ok {
			parts = append(parts, p)
		}
	}
	for _, p := range parts {
		if probs := comparePartition(p, src[p], dst[p], spec); len(probs) > 0 {
			const most = 15
			if len(probs) > most {
				probs = append(probs[:most], fmt.Sprintf("... and %d more", len(probs)-most))
			}
			t.Errorf("target %s is not an exact copy of the source (%d source records expected, %d in the target):\n\t%s",
				p, len(want(p, src[p], spec)), len(dst[p]), strings.Join(probs, "\n\t"))
		}
	}
}

// bytesEqual compares byte slices fast (go-cmp's reflection over 200 KiB
// values is slow under -race), keeping null and empty apart.
var bytesEqual = cmp.Comparer(func(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) })

// want returns the source records of p that spec selects.
func want(p catchup.Partition, src []stored, spec copySpec) []stored {
	from, to := int64(0), int64(1<<62)
	if v, ok := spec.From[p]; ok {
		from = v
	}
	if v, ok := spec.To[p]; ok {
		to = v
	}
	var out []stored
	for _, s := range src {
		if s.rec.Offset >= from && s.rec.Offset < to {
			out = append(out, s)
		}
	}
	return out
}

func comparePartition(p catchup.Partition, src, dst []stored, spec copySpec) []string {
	var probs []string
	expected := want(p, src, spec)
	bySource := map[int64]rec{}
	for _, s := range expected {
		bySource[s.rec.Offset] = s.rec
	}
	copied := map[int64][]int64{} // source offset → target offsets
	last := int64(-1)
	for i, d := range dst {
		got := d.rec
		if spec.NoProvenance {
			if i >= len(expected) {
				probs = append(probs, fmt.Sprintf("target offset %d: more records in the target than the %d expected", d.at, len(expected)))
				continue
			}
			// Stamp the provenance the copy would have had.
			got.Headers = append(got.Headers[:len(got.Headers):len(got.Headers)], catchup.Header{
				Key:   catchup.ProvenanceHeader,
				Value: catchup.AppendProvenance(nil, catchup.Provenance{Cluster: srcName, Partition: p, Offset: expected[i].rec.Offset}),
			})
		}
		n := len(got.Headers)
		if n == 0 || got.Headers[n-1].Key != catchup.ProvenanceHeader {
			probs = append(probs, fmt.Sprintf("target offset %d: no %s header last (headers %q)", d.at, catchup.ProvenanceHeader, got.Headers))
			continue
		}
		pv, err := catchup.ParseProvenance(got.Headers[n-1].Value)
		if want := (catchup.Provenance{Cluster: srcName, Partition: p, Offset: pv.Offset}); err != nil || pv != want {
			probs = append(probs, fmt.Sprintf("target offset %d: provenance %q, want %q (%v)",
				d.at, got.Headers[n-1].Value, catchup.AppendProvenance(nil, want), err))
			continue
		}
		got.Headers = got.Headers[: n-1 : n-1]
		if len(got.Headers) == 0 {
			got.Headers = nil
		}
		got.Offset = pv.Offset
		copied[pv.Offset] = append(copied[pv.Offset], d.at)
		if pv.Offset <= last {
			probs = append(probs, fmt.Sprintf("target offset %d: source offset %d after source offset %d: out of order", d.at, pv.Offset, last))
		}
		last = max(last, pv.Offset)
		if len(copied[pv.Offset]) > 1 {
			probs = append(probs, fmt.Sprintf("source offset %d: duplicated at target offsets %v", pv.Offset, copied[pv.Offset]))
			continue
		}
		w, ok := bySource[pv.Offset]
		if !ok {
			probs = append(probs, fmt.Sprintf("target offset %d: source offset %d is not expected in the target (outside the window, aborted or not a source record)", d.at, pv.Offset))
			continue
		}
		if diff := cmp.Diff(w, got, bytesEqual); diff != "" {
			if len(diff) > 2000 {
				diff = diff[:2000] + "..."
			}
			probs = append(probs, fmt.Sprintf("target offset %d differs from source offset %d (-source +target):\n%s", d.at, pv.Offset, diff))
		}
	}
	var missing []int64
	for _, s := range expected {
		if len(copied[s.rec.Offset]) == 0 {
			missing = append(missing, s.rec.Offset)
		}
	}
	if n := len(missing); n > 0 {
		more := ""
		if n > 50 {
			missing, more = missing[:50], " ..."
		}
		probs = append(probs, fmt.Sprintf("%d source records missing, at source offsets %v%s", n, missing, more))
	}
	return probs
}

// sourceOffsets returns the source offsets of a snapshot's partition, for
// messages.
func sourceOffsets(s []stored) []int64 {
	out := make([]int64, len(s))
	for i := range s {
		out[i] = s[i].rec.Offset
	}
	return out
}
