package kafkago_test

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/config"
)

// TestLogEnd: LogEnd asks the partition's leader, with OffsetForLeaderEpoch
// v3 as a client (replica id -1) for the current leader epoch, fenced by
// that epoch, for its log end, and reads the high watermark after it. kfake
// has no followers (its log end is its high watermark), so the leader's
// answer is also replaced by one above the high watermark, as a real leader
// whose followers stall gives. A stale epoch is retriable.
func TestLogEnd(t *testing.T) {
	p := catchup.Partition{Topic: "t", Partition: 1}
	for _, tc := range []struct {
		name  string
		reply func(req *kmsg.OffsetForLeaderEpochRequest) (kmsg.Response, error, bool)
		want  catchup.LogEnd
		err   error // nil: success
	}{
		{"kfake's own answer", nil, catchup.LogEnd{End: 5, HighWatermark: 5}, nil},
		{"log end above the high watermark", func(req *kmsg.OffsetForLeaderEpochRequest) (kmsg.Response, error, bool) {
			res := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
			rt := kmsg.NewOffsetForLeaderEpochResponseTopic()
			rt.Topic = p.Topic
			rp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			rp.Partition, rp.LeaderEpoch, rp.EndOffset = p.Partition, req.Topics[0].Partitions[0].LeaderEpoch, 8
			rt.Partitions = append(rt.Partitions, rp)
			res.Topics = append(res.Topics, rt)
			return res, nil, true
		}, catchup.LogEnd{End: 8, HighWatermark: 5}, nil},
		{"fenced leader epoch", func(req *kmsg.OffsetForLeaderEpochRequest) (kmsg.Response, error, bool) {
			res := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
			rt := kmsg.NewOffsetForLeaderEpochResponseTopic()
			rt.Topic = p.Topic
			rp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, kerr.FencedLeaderEpoch.Code
			rt.Partitions = append(rt.Partitions, rp)
			res.Topics = append(res.Topics, rt)
			return res, nil, true
		}, catchup.LogEnd{}, catchup.ErrRetriable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			c := newCluster(t, kfake.SeedTopics(2, "t"))
			tg := newTarget(t, c, config.Producer{})
			if _, _, err := produceAll(ctx, tg, p, copyRecords(5, time.UnixMilli(1_700_000_000_000))); err != nil {
				t.Fatal(err)
			}
			requests := watchOffsetForLeaderEpoch(c, tc.reply)
			got, err := tg.LogEnd(ctx, p)
			switch {
			case tc.err == nil && err != nil:
				t.Fatalf("LogEnd: %v", err)
			case tc.err != nil && !errors.Is(err, tc.err):
				t.Fatalf("LogEnd error %v; want one wrapping %v", err, tc.err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("LogEnd (-want +got):\n%s", diff)
			}
			seen := requests()
			if len(seen) != 1 {
				t.Fatalf("%d OffsetForLeaderEpoch requests; want 1", len(seen))
			}
			req := seen[0]
			if req.Version != 3 || req.ReplicaID != -1 || len(req.Topics) != 1 || req.Topics[0].Topic != p.Topic ||
				len(req.Topics[0].Partitions) != 1 {
				t.Fatalf("request v%d replica %d topics %+v; want v3, replica -1, one partition of t", req.Version, req.ReplicaID, req.Topics)
			}
			if rp := req.Topics[0].Partitions[0]; rp.Partition != p.Partition || rp.CurrentLeaderEpoch != got.Epoch || rp.LeaderEpoch != got.Epoch {
				t.Errorf("asked partition %d, current epoch %d, epoch %d; want %d and the leader's epoch %d twice",
					rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch, p.Partition, got.Epoch)
			}
		})
	}
}

// TestLogEndsOneRequestPerLeader: LogEnds asks the log ends of many
// partitions of several topics with one OffsetForLeaderEpoch request per
// leader broker, each partition once, and answers each with LogEnd's end;
// a partition its leader refuses is left out, the others answered.
func TestLogEndsOneRequestPerLeader(t *testing.T) {
	ctx := testContext(t)
	c := newCluster(t, kfake.NumBrokers(3), kfake.SeedTopics(6, "t", "u"))
	tg := newTarget(t, c, config.Producer{})
	var ps []catchup.Partition
	want := map[catchup.Partition]catchup.LogEnd{}
	for _, topic := range []string{"u", "t"} {
		for i := range int32(6) {
			p := catchup.Partition{Topic: topic, Partition: i}
			n := int(i % 3) // 0, 1 or 2 records
			if n > 0 {
				if _, _, err := produceAll(ctx, tg, p, copyRecords(n, time.UnixMilli(1_700_000_000_000))); err != nil {
					t.Fatal(err)
				}
			}
			le, err := tg.LogEnd(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if le.End != int64(n) {
				t.Fatalf("LogEnd of %s: %+v; want end %d", p, le, n)
			}
			ps, want[p] = append(ps, p, p), le // each asked twice
		}
	}
	refused := catchup.Partition{Topic: "t", Partition: 4}
	requests := watchOffsetForLeaderEpoch(c, func(req *kmsg.OffsetForLeaderEpochRequest) (kmsg.Response, error, bool) {
		for _, rt := range req.Topics {
			for _, rp := range rt.Partitions {
				if rt.Topic == refused.Topic && rp.Partition == refused.Partition {
					// Answer for the whole request, refusing one partition.
					res := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
					for _, rt := range req.Topics {
						st := kmsg.NewOffsetForLeaderEpochResponseTopic()
						st.Topic = rt.Topic
						for _, rp := range rt.Partitions {
							sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
							sp.Partition, sp.LeaderEpoch = rp.Partition, rp.LeaderEpoch
							sp.EndOffset = want[catchup.Partition{Topic: rt.Topic, Partition: rp.Partition}].End
							if rt.Topic == refused.Topic && rp.Partition == refused.Partition {
								sp.ErrorCode, sp.EndOffset = kerr.FencedLeaderEpoch.Code, -1
							}
							st.Partitions = append(st.Partitions, sp)
						}
						res.Topics = append(res.Topics, st)
					}
					return res, nil, true
				}
			}
		}
		return nil, nil, false
	})
	got, err := tg.LogEnds(ctx, ps)
	if err != nil {
		t.Fatal(err)
	}
	wantEnds := map[catchup.Partition]catchup.LogEnd{}
	for p, le := range want {
		if p != refused {
			wantEnds[p] = catchup.LogEnd{End: le.End, HighWatermark: -1, Epoch: le.Epoch}
		}
	}
	if diff := cmp.Diff(wantEnds, got); diff != "" {
		t.Errorf("LogEnds (-want +got):\n%s", diff)
	}
	seen := requests()
	leaders := map[int32]bool{}
	for p := range want {
		leaders[c.LeaderFor(p.Topic, p.Partition)] = true
	}
	leaders[c.LeaderFor(refused.Topic, refused.Partition)] = true
	asked := map[catchup.Partition]int{}
	for _, req := range seen {
		for _, rt := range req.Topics {
			for _, rp := range rt.Partitions {
				asked[catchup.Partition{Topic: rt.Topic, Partition: rp.Partition}]++
			}
		}
	}
	if len(leaders) < 2 || len(seen) != len(leaders) || len(asked) != 12 {
		t.Errorf("%d OffsetForLeaderEpoch requests asking %d partitions; want one per leader (%d), 12 partitions, over 2 leaders or more",
			len(seen), len(asked), len(leaders))
	}
	for p, n := range asked {
		if n != 1 {
			t.Errorf("%s asked %d times; want once", p, n)
		}
	}
}

// watchOffsetForLeaderEpoch keeps every OffsetForLeaderEpoch request c
// receives from now on, answered by reply (nil, or a reply that declines:
// by c itself); the func it returns takes those kept so far.
func watchOffsetForLeaderEpoch(c *kfake.Cluster, reply func(*kmsg.OffsetForLeaderEpochRequest) (kmsg.Response, error, bool)) func() []*kmsg.OffsetForLeaderEpochRequest {
	var (
		mu   sync.Mutex
		seen []*kmsg.OffsetForLeaderEpochRequest
	)
	c.ControlKey(int16(kmsg.OffsetForLeaderEpoch), func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := r.(*kmsg.OffsetForLeaderEpochRequest)
		mu.Lock()
		seen = append(seen, req)
		mu.Unlock()
		if reply == nil {
			return nil, nil, false
		}
		return reply(req)
	})
	return func() []*kmsg.OffsetForLeaderEpochRequest {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}
