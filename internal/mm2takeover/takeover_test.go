package mm2takeover

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// cluster is a fake Reader: topic → partition → records, offset = index.
// (The real clusters are in internal/brokers' TestMirrorMaker2Handover.)
type cluster map[string][][]catchup.Record

func (c cluster) Partitions(_ context.Context, match func(string) bool) ([]catchup.Partition, error) {
	var out []catchup.Partition
	for t, ps := range c {
		if match(t) {
			for p := range ps {
				out = append(out, catchup.Partition{Topic: t, Partition: int32(p)})
			}
		}
	}
	return out, nil
}

func (c cluster) ListOffsets(_ context.Context, ps []catchup.Partition) ([]catchup.Offsets, error) {
	var out []catchup.Offsets
	for _, p := range ps {
		n := int64(len(c[p.Topic][p.Partition]))
		out = append(out, catchup.Offsets{Partition: p, HighWatermark: n, LastStable: n})
	}
	return out, nil
}

func (c cluster) Fetch(_ context.Context, p catchup.Partition, from int64, _ int32) (catchup.Fetched, error) {
	rs := c[p.Topic][p.Partition]
	if from > int64(len(rs)) {
		return catchup.Fetched{}, fmt.Errorf("offset %d out of range", from)
	}
	return catchup.Fetched{Records: slices.Clone(rs[from:]), Next: int64(len(rs))}, nil
}

func (c cluster) append(topic string, p int, recs ...catchup.Record) {
	for len(c[topic]) <= p {
		c[topic] = append(c[topic], nil)
	}
	for _, r := range recs {
		r.Offset = int64(len(c[topic][p]))
		c[topic][p] = append(c[topic][p], r)
	}
}

// rec is the source record i of a partition.
func rec(p, i int) catchup.Record {
	return catchup.Record{Key: fmt.Appendf(nil, "k%d-%d", p, i), Value: []byte("v"), Timestamp: time.UnixMilli(int64(1000*p + i))}
}

// position is a record MirrorSourceTask writes to the offsets topic.
func position(connector, cluster, topic string, p int, off int64) catchup.Record {
	r := catchup.Record{Key: fmt.Appendf(nil, `["%s",{"cluster":"%s","partition":%d,"topic":"%s"}]`, connector, cluster, p, topic)}
	if off >= 0 {
		r.Value = fmt.Appendf(nil, `{"offset":%d}`, off)
	}
	return r
}

func TestPositions(t *testing.T) {
	const conn, offsets = "MirrorSourceConnector", "mm2-offsets.A.internal"
	// setup: the source topic t has 4 partitions of 10 records; MirrorMaker
	// 2 copied 0..5 of partition 0 and 0..2 of partition 1 and recorded
	// it, copied nothing of 2 and 3.
	setup := func() (src, dst cluster) {
		src, dst = cluster{}, cluster{}
		for p := range 4 {
			for i := range 10 {
				src.append("t", p, rec(p, i))
			}
		}
		for i := range 6 {
			dst.append("t", 0, rec(0, i))
		}
		for i := range 3 {
			dst.append("t", 1, rec(1, i))
		}
		dst.append("t", 3)
		dst.append(offsets, 0,
			position(conn, "A", "t", 0, 2), position(conn, "A", "t", 1, 2),
			position(conn, "A", "t", 0, 5),                                    // the last of a key wins
			position("other", "A", "t", 2, 7), position(conn, "B", "t", 2, 7), // another connector, another source
			position(conn, "A", "t", 3, 4), position(conn, "A", "t", 3, -1)) // a tombstone deletes the position
		return src, dst
	}
	flow := Flow{Connector: conn, Cluster: "A", OffsetsTopic: offsets, Match: func(t string) bool { return t == "t" },
		TargetTopic: func(t string) string { return t }}
	tests := []struct {
		name   string
		change func(src, dst cluster) // before the take-over
		during func(src, dst cluster) // while it settles
		want   map[string]map[int32]int64
		errs   []string // each must appear in the error
	}{
		{name: "stopped", want: map[string]map[int32]int64{"t": {0: 6, 1: 3}}},
		{name: "still copying", during: func(_, dst cluster) {
			dst.append("t", 1, rec(1, 3))
			dst.append(offsets, 0, position(conn, "A", "t", 1, 3))
		}, errs: []string{"t/1: MirrorMaker 2 is still copying it (its offset moved from 2 to 3"}},
		{name: "target still written", during: func(_, dst cluster) { dst.append("t", 3, rec(3, 0)) },
			errs: []string{"t/3: its target partition t/3 is still being written (end 0, then 1"}},
		{name: "wrote past its commit", change: func(_, dst cluster) { dst.append("t", 0, rec(0, 6)) },
			errs: []string{"t/0: the last record of t/0 (offset 6) is not source offset 5", "starting at 6 would copy records twice"}},
		{name: "target recreated", change: func(_, dst cluster) { dst["t"][1] = nil },
			errs: []string{"t/1: MirrorMaker 2 recorded source offset 2 as copied, but its target partition t/1 is empty"}},
		{name: "another writer", change: func(_, dst cluster) { dst.append("t", 2, rec(9, 9)) },
			errs: []string{"t/2: MirrorMaker 2 recorded no position for it, yet its target partition t/2 holds records up to offset 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, dst := setup()
			if tt.change != nil {
				tt.change(src, dst)
			}
			waited := time.Duration(0)
			opt := Options{Settle: 5 * time.Second, Wait: func(_ context.Context, d time.Duration) error {
				waited += d
				if tt.during != nil {
					tt.during(src, dst)
				}
				return nil
			}}
			got, err := Positions(t.Context(), Clusters{Offsets: dst, Source: src, Target: dst}, flow, opt)
			if waited != opt.Settle {
				t.Errorf("waited %v, want the settle %v", waited, opt.Settle)
			}
			if len(tt.errs) == 0 {
				if err != nil {
					t.Fatalf("Positions: %v", err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("Positions (-want +got):\n%s", diff)
				}
				return
			}
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("Positions error = %v, want ErrRefused", err)
			}
			for _, want := range tt.errs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Positions error:\n%v\nwant it to say %q", err, want)
				}
			}
		})
	}
}

func TestPositionsNoOffsetsTopic(t *testing.T) {
	src := cluster{}
	src.append("t", 0, rec(0, 0))
	_, err := Positions(t.Context(), Clusters{Offsets: cluster{}, Source: src, Target: cluster{}},
		Flow{Connector: "c", Cluster: "A", OffsetsTopic: "mirrormaker2-cluster-offsets", Match: func(string) bool { return true },
			TargetTopic: func(t string) string { return t }}, Options{Wait: func(context.Context, time.Duration) error { return nil }})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "--offsets-topic") {
		t.Errorf("Positions error = %v, want ErrRefused naming --offsets-topic", err)
	}
}
