package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// TestCompactedTopic copies a compacted topic, whose offsets have holes
// (and whose log start moved), in windows of 4 offsets that start and end
// inside the holes.
func TestCompactedTopic(t *testing.T) {
	t.Parallel()
	requireKfake(t, "compact a topic on demand (Cluster.Compact)")
	e := newEnv(t)
	ctx := testContext(t)
	topic := e.topic(t, "compacted")
	topics := []string{topic}
	e.createTopics(ctx, t, 2, map[string]string{"cleanup.policy": "compact"}, topic)
	for p := range int32(2) {
		for b := range 6 { // 6 batches of 5: keys repeat across batches
			var recs []*kgo.Record
			for i := b * 5; i < b*5+5; i++ {
				key := fmt.Sprintf("k%d", i%4)
				if i%7 == 6 {
					key = fmt.Sprintf("unique%d", i)
				}
				r := &kgo.Record{Topic: topic, Partition: p, Key: []byte(key), Value: fmt.Appendf(nil, "v%d", i), Timestamp: time.Now()}
				if i == 13 {
					r.Value = nil // a tombstone, recent enough to survive compaction
				}
				recs = append(recs, r)
			}
			e.src.produce(ctx, t, recs...)
		}
	}
	e.src.fake.Compact()

	src := e.src.read(ctx, t, "read_committed", topics...)
	marks := e.src.offsets(ctx, t, topic)
	for p, o := range marks {
		if n := int64(len(src[p])); n >= o.HighWatermark-o.LogStart {
			t.Fatalf("%s after compaction: %d records in [%d,%d): no holes to test (offsets %v)", p, n, o.LogStart, o.HighWatermark, sourceOffsets(src[p]))
		}
		t.Logf("%s after compaction: log [%d,%d), records at %v", p, o.LogStart, o.HighWatermark, sourceOffsets(src[p]))
	}

	yaml := e.configYAML(topics, "window: {max_records: 4}")
	copied := map[catchup.Partition]int64{}
	for i := 1; ; i++ {
		if i > 20 {
			t.Fatalf("not copied after 20 runs of 4 offsets")
		}
		rep := mustRun(ctx, t, yaml, pipeline.Options{})
		ends, finished := map[catchup.Partition]int64{}, true
		for _, r := range rep.Partitions {
			// Done only when the window reached the source end; partial
			// when max_records left some of it.
			want := replicate.StatusPartial
			if r.To == marks[r.Partition].HighWatermark {
				want = replicate.StatusDone
			}
			if r.Status != want || r.Err != nil || r.Next != r.To || r.To-r.From > 4 || r.To > marks[r.Partition].HighWatermark {
				t.Fatalf("run %d: %s: window [%d,%d) next %d status %s error %v; want a %s window of at most 4 offsets",
					i, r.Partition, r.From, r.To, r.Next, r.Status, r.Err, want)
			}
			ends[r.Partition] = r.Next
			copied[r.Partition] += r.Copied
			finished = finished && r.Copied == 0 && r.Next == marks[r.Partition].HighWatermark
		}
		verifyCopy(t, e.src, e.dst, topics, "read_committed", copySpec{To: ends})
		if finished {
			break
		}
	}
	for p, n := range copied {
		if n != int64(len(src[p])) {
			t.Errorf("%s: the reports count %d records copied, want %d", p, n, len(src[p]))
		}
	}
	e.wantCheckpoints(ctx, t, "after the copy", e.src.highWatermarks(ctx, t, topic))
	verifyExactCopy(t, e.src, e.dst, topics)
}

// inTxn writes recs in one transaction of cl and commits or aborts it.
func inTxn(ctx context.Context, t *testing.T, cl *kgo.Client, commit bool, recs ...*kgo.Record) {
	t.Helper()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatalf("begin transaction: %v", err)
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce in transaction: %v", err)
	}
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatalf("end transaction (commit %v): %v", commit, err)
	}
}

// waitStable polls until the last stable offset of every partition of
// topic reaches its high watermark: the broker writes transaction markers
// after EndTransaction returns.
func (c *cluster) waitStable(ctx context.Context, t *testing.T, topic string) {
	t.Helper()
	for {
		stable := true
		for _, o := range c.offsets(ctx, t, topic) {
			stable = stable && o.LastStable == o.HighWatermark
		}
		if stable {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: last stable offsets never reached the high watermarks: %v", topic, c.offsets(context.WithoutCancel(ctx), t, topic))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// seedTransactions writes to partitions 0 and 1 of topic: a committed
// transaction, plain records, an aborted transaction, another committed
// one, and a transaction left open, which the returned client can end.
// Values start with "c" (committed), "plain", "x" (aborted), "o" (open).
func (e *env) seedTransactions(ctx context.Context, t *testing.T, topic string) *kgo.Client {
	t.Helper()
	txn := newClient(t, e.src, kgo.TransactionalID("e2e-"+e.nonce+"-"+strings.ReplaceAll(t.Name(), "/", "-")),
		kgo.TransactionTimeout(time.Minute))
	both := func(v0, v1 []string) []*kgo.Record {
		return append(values(topic, 0, v0...), values(topic, 1, v1...)...)
	}
	inTxn(ctx, t, txn, true, both([]string{"c0", "c1"}, []string{"c0"})...)
	e.src.produce(ctx, t, both([]string{"plain0"}, []string{"plain0"})...)
	inTxn(ctx, t, txn, false, both([]string{"x0", "x1", "x2"}, []string{"x0"})...)
	inTxn(ctx, t, txn, true, both([]string{"c2"}, []string{"c1", "c2"})...)
	e.src.waitStable(ctx, t, topic)
	if err := txn.BeginTransaction(); err != nil {
		t.Fatalf("begin transaction: %v", err)
	}
	if err := txn.ProduceSync(ctx, both([]string{"o0", "o1"}, []string{"o0"})...).FirstErr(); err != nil {
		t.Fatalf("produce in the open transaction: %v", err)
	}
	return txn
}

// valuesIn returns the values of a snapshot partition as strings.
func valuesIn(s []stored) []string {
	out := make([]string, len(s))
	for i := range s {
		out[i] = string(s[i].rec.Value)
	}
	return out
}

// TestTransactions copies a transactional topic: under read_committed the
// target gets the committed records only, never the aborted ones, windows
// stop at the last stable offset, and the open transaction is copied by
// the run after it commits; under read_uncommitted everything is copied.
func TestTransactions(t *testing.T) {
	t.Parallel()
	t.Run("read_committed", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		ctx := testContext(t)
		topic := e.topic(t, "txn")
		topics := []string{topic}
		e.createTopics(ctx, t, 2, nil, topic)
		txn := e.seedTransactions(ctx, t, topic)

		marks := e.src.offsets(ctx, t, topic)
		src := e.src.read(ctx, t, "read_committed", topic)
		wantValues := map[int32][]string{0: {"c0", "c1", "plain0", "c2"}, 1: {"c0", "plain0", "c1", "c2"}}
		for p, o := range marks {
			if o.LastStable >= o.HighWatermark {
				t.Fatalf("%s: last stable offset %d, high watermark %d: the open transaction did not hold the LSO back", p, o.LastStable, o.HighWatermark)
			}
			if got := valuesIn(src[p]); !slices.Equal(got, wantValues[p.Partition]) {
				t.Fatalf("%s: the source read committed holds %q, want %q", p, got, wantValues[p.Partition])
			}
		}
		parts := sortedPartitions(marks)
		yaml := e.configYAML(topics)

		rep := mustRun(ctx, t, yaml, pipeline.Options{})
		wantWindows(t, "run 1", rep, each(parts, func(p catchup.Partition) window {
			lso := marks[p].LastStable
			return window{From: 0, To: lso, Next: lso, Copied: int64(len(src[p])), Status: replicate.StatusDone}
		}))
		dst := e.dst.read(ctx, t, "read_uncommitted", topic)
		compareCopy(t, src, dst, copySpec{})
		for p, recs := range dst {
			for _, v := range valuesIn(recs) {
				if !strings.HasPrefix(v, "c") && !strings.HasPrefix(v, "plain") {
					t.Errorf("%s: the target holds %q, which is not committed", p, v)
				}
			}
		}

		rep = mustRun(ctx, t, yaml, pipeline.Options{})
		wantWindows(t, "run 2, transaction still open", rep, each(parts, func(p catchup.Partition) window {
			lso := marks[p].LastStable
			return window{From: lso, To: lso, Next: lso, Status: replicate.StatusDone}
		}))

		if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatalf("commit the open transaction: %v", err)
		}
		e.src.waitStable(ctx, t, topic)
		after := e.src.offsets(ctx, t, topic)
		rep = mustRun(ctx, t, yaml, pipeline.Options{})
		opened := map[int32]int64{0: 2, 1: 1}
		wantWindows(t, "run 3, after the commit", rep, each(parts, func(p catchup.Partition) window {
			from, to := marks[p].LastStable, after[p].HighWatermark
			return window{From: from, To: to, Next: to, Copied: opened[p.Partition], Status: replicate.StatusDone}
		}))
		e.wantCheckpoints(ctx, t, "after run 3", e.src.highWatermarks(ctx, t, topic))
		verifyExactCopy(t, e.src, e.dst, topics)
	})

	t.Run("read_uncommitted", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		ctx := testContext(t)
		topic := e.topic(t, "txn")
		topics := []string{topic}
		e.createTopics(ctx, t, 2, nil, topic)
		e.seedTransactions(ctx, t, topic)

		marks := e.src.offsets(ctx, t, topic)
		src := e.src.read(ctx, t, "read_uncommitted", topic)
		wantValues := map[int32][]string{0: {"c0", "c1", "plain0", "x0", "x1", "x2", "c2", "o0", "o1"}, 1: {"c0", "plain0", "x0", "c1", "c2", "o0"}}
		for p := range marks {
			if got := valuesIn(src[p]); !slices.Equal(got, wantValues[p.Partition]) {
				t.Fatalf("%s: the source read uncommitted holds %q, want %q", p, got, wantValues[p.Partition])
			}
		}
		rep := mustRun(ctx, t, e.configYAML(topics, "isolation: read_uncommitted"), pipeline.Options{})
		wantWindows(t, "run", rep, each(slices.Collect(maps.Keys(marks)), func(p catchup.Partition) window {
			hwm := marks[p].HighWatermark
			return window{From: 0, To: hwm, Next: hwm, Copied: int64(len(src[p])), Status: replicate.StatusDone}
		}))
		compareCopy(t, src, e.dst.read(ctx, t, "read_uncommitted", topic), copySpec{})
	})
}
