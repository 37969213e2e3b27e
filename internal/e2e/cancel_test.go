package e2e

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// TestCancelMidWindow cancels a run in the middle of its windows: while a
// produce request is at the target broker (kfake only), and right after a
// produce was acknowledged. The run reports partial progress and leaves
// checkpoints the target backs (every source offset below a checkpoint is
// in the target, once); a second run, opened afresh as a new process
// would, completes an exact copy without duplicates.
func TestCancelMidWindow(t *testing.T) {
	t.Parallel()
	const perPartition = 100
	for _, tc := range []struct {
		name     string
		kfakeFor string // why the case needs kfake; "" if it runs on real brokers too
		// cancelling arranges for cancel to be called mid-window and
		// returns the options of the run.
		cancelling func(t *testing.T, e *env, cancel context.CancelFunc) pipeline.Options
	}{{
		name:     "during a produce request",
		kfakeFor: "cancel from inside a produce request (ControlKey)",
		cancelling: func(_ *testing.T, e *env, cancel context.CancelFunc) pipeline.Options {
			var n atomic.Int32
			e.dst.fake.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
				if n.Add(1) == 6 {
					cancel() // the broker still appends this request
				}
				return nil, nil, false
			})
			return pipeline.Options{}
		},
	}, {
		name: "after an acknowledged produce",
		cancelling: func(_ *testing.T, _ *env, cancel context.CancelFunc) pipeline.Options {
			var n atomic.Int64
			return pipeline.Options{OnProgress: func(records, _ int64) {
				if n.Add(records) >= 30 {
					cancel()
				}
			}}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.kfakeFor != "" {
				requireKfake(t, tc.kfakeFor)
			}
			e := newEnv(t)
			ctx := testContext(t)
			topic := e.topic(t, "cancel")
			topics := []string{topic}
			e.createTopics(ctx, t, 2, nil, topic)
			for p := range int32(2) {
				for first := 0; first < perPartition; first += 10 {
					e.src.produce(ctx, t, variedRecords(topic, p, first, 10, false)...)
				}
			}
			// One fetch and one produce request per 5 records, so that
			// the cancellation lands inside the windows.
			yaml := e.configYAML(topics, "producer: {batch_records: 5}", "fetch_bytes: 1024")
			runCtx, cancel := context.WithCancel(ctx)
			defer cancel()
			rep, err := run(runCtx, t, yaml, tc.cancelling(t, e, cancel))
			if err != nil {
				t.Fatalf("cancelled run: %v", err)
			}
			if runCtx.Err() == nil {
				t.Fatalf("the run ended without being cancelled")
			}
			total := int64(0)
			for _, r := range rep.Partitions {
				total += r.Copied
				switch r.Status {
				case replicate.StatusPartial, replicate.StatusNotStarted:
				case replicate.StatusDone:
					if r.Next != perPartition {
						t.Errorf("cancelled run: %s done at %d, want %d", r.Partition, r.Next, perPartition)
					}
				default:
					t.Errorf("cancelled run: %s: status %s, error %v; want partial", r.Partition, r.Status, r.Err)
				}
				if r.Err != nil {
					t.Errorf("cancelled run: %s: error %v", r.Partition, r.Err)
				}
			}
			if total >= 2*perPartition {
				t.Fatalf("cancelled run copied all %d records", total)
			}

			// The checkpoints are backed by the target: it holds exactly
			// the source offsets [0, k) with k at or above the checkpoint.
			src := e.src.read(ctx, t, "read_committed", topic)
			dst := e.dst.read(ctx, t, "read_uncommitted", topic)
			cps := e.checkpoints(ctx, t)
			held := map[catchup.Partition]int64{}
			for _, r := range rep.Partitions {
				p := r.Partition
				held[p] = int64(len(dst[p]))
				next := int64(0)
				if c, ok := cps[p]; ok && c.Exists {
					next = c.Next
				}
				if next != r.Next || next > held[p] {
					t.Errorf("cancelled run: %s: checkpoint %d, report next %d, %d records in the target: the checkpoint must match the report and not pass the target",
						p, next, r.Next, held[p])
				}
				if c := cps[p]; c.Owner != "" {
					t.Errorf("cancelled run: %s: lease still held by %q", p, c.Owner)
				}
				t.Logf("cancelled run: %s: status %s, checkpoint %d, %d records in the target", p, r.Status, next, held[p])
			}
			compareCopy(t, src, dst, copySpec{To: held})

			rep = mustRun(ctx, t, yaml, pipeline.Options{})
			copied, skipped := int64(0), int64(0)
			for _, r := range rep.Partitions {
				if r.Status != replicate.StatusDone || r.Next != perPartition {
					t.Errorf("resumed run: %s: status %s, next %d, error %v; want done at %d", r.Partition, r.Status, r.Next, r.Err, perPartition)
				}
				copied += r.Copied
				skipped += r.Skipped
			}
			inTarget := held[catchup.Partition{Topic: topic}] + held[catchup.Partition{Topic: topic, Partition: 1}]
			if copied != 2*perPartition-inTarget {
				t.Errorf("resumed run copied %d records (%d skipped as already in the target), want %d: the %d in the target are not copied again",
					copied, skipped, 2*perPartition-inTarget, inTarget)
			}
			verifyExactCopy(t, e.src, e.dst, topics)
		})
	}
}
