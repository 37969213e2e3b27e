package mm2takeover

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

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

// heartbeat is a record MirrorHeartbeatTask writes to the heartbeats
// topic (Heartbeat.recordKey and recordValue, version 0).
func heartbeat(src, dst string, millis int64) catchup.Record {
	key := binary.BigEndian.AppendUint16(nil, uint16(len(src)))
	key = append(key, src...)
	key = binary.BigEndian.AppendUint16(key, uint16(len(dst)))
	key = append(key, dst...)
	value := binary.BigEndian.AppendUint16(nil, 0)
	value = binary.BigEndian.AppendUint64(value, uint64(millis))
	return catchup.Record{Key: key, Value: value}
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
		dst.append(HeartbeatsTopic, 0, heartbeat("A", "B", 1_700_000_000_000), heartbeat("B", "A", 1_700_000_000_500))
		return src, dst
	}
	flow := Flow{Connector: conn, Cluster: "A", OffsetsTopic: offsets, Match: func(t string) bool { return t == "t" },
		TargetTopic: func(t string) string { return t }, Target: "B", HeartbeatsTopic: HeartbeatsTopic}
	beating := func(f *Flow) { f.Heartbeats, f.HeartbeatsInterval = true, time.Second }
	tests := []struct {
		name   string
		flow   func(*Flow)
		change func(src, dst cluster) // before the take-over
		during func(src, dst cluster) // while it settles
		want   map[string]map[int32]int64
		errs   []string // each must appear in the error
		note   string   // must appear in a note
		waited time.Duration
	}{
		{name: "stopped, heartbeats on", flow: beating, want: map[string]map[int32]int64{"t": {0: 6, 1: 3}},
			note: "no heartbeat of A->B in heartbeats during the 5s watched: MirrorMaker 2 has stopped (its last heartbeat: offset 0, 2023-11-14T22:13:20Z)"},
		{name: "running and idle", flow: beating, during: func(_, dst cluster) {
			dst.append(HeartbeatsTopic, 0, heartbeat("A", "B", 1_700_000_005_000), heartbeat("A", "B", 1_700_000_006_000))
		}, errs: []string{"MirrorMaker 2 is running: it wrote 2 heartbeats of A->B to heartbeats during the 5s the take-over watched (the last at offset 3, 2023-11-14T22:13:26Z)"}},
		{name: "another flow's heartbeats", flow: beating, during: func(_, dst cluster) {
			dst.append(HeartbeatsTopic, 0, heartbeat("B", "A", 1_700_000_005_000), heartbeat("C", "B", 1_700_000_005_000))
		}, want: map[string]map[int32]int64{"t": {0: 6, 1: 3}}, note: "MirrorMaker 2 has stopped"},
		{name: "heartbeats slower than the settle", flow: func(f *Flow) { f.Heartbeats, f.HeartbeatsInterval = true, 10*time.Second },
			want: map[string]map[int32]int64{"t": {0: 6, 1: 3}}, waited: 20 * time.Second, note: "during the 20s watched"},
		{name: "heartbeats off", flow: func(f *Flow) { f.HeartbeatsOff = "mm2.properties:9: emit.heartbeats.enabled = false" },
			want: map[string]map[int32]int64{"t": {0: 6, 1: 3}},
			note: "MirrorMaker 2's heartbeats of A->B are off (mm2.properties:9: emit.heartbeats.enabled = false): an idle MirrorMaker 2 that still runs cannot be told from a stopped one"},
		{name: "heartbeats on, none written", flow: beating, change: func(_, dst cluster) { delete(dst, HeartbeatsTopic) },
			want: map[string]map[int32]int64{"t": {0: 6, 1: 3}}, note: "no heartbeat of A->B in heartbeats (among its last 4096 records)"},
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
			var notes []string
			opt := Options{Settle: 5 * time.Second, Wait: func(_ context.Context, d time.Duration) error {
				waited += d
				if tt.during != nil {
					tt.during(src, dst)
				}
				return nil
			}, Note: func(msg string) { notes = append(notes, msg) }}
			fl := flow
			if tt.flow != nil {
				tt.flow(&fl)
			}
			got, err := Positions(t.Context(), Clusters{Offsets: dst, Source: src, Target: dst}, fl, opt)
			if want := cmp.Or(tt.waited, opt.Settle); waited != want {
				t.Errorf("waited %v, want %v", waited, want)
			}
			if tt.note != "" && !strings.Contains(strings.Join(notes, "\n"), tt.note) {
				t.Errorf("notes:\n%s\nwant one saying %q", strings.Join(notes, "\n"), tt.note)
			}
			if len(tt.errs) == 0 {
				if err != nil {
					t.Fatalf("Positions: %v", err)
				}
				if diff := gocmp.Diff(tt.want, got); diff != "" {
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
