package fanout

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

func part(topic string, n int32) catchup.Partition {
	return catchup.Partition{Topic: topic, Partition: n}
}

func TestSplit(t *testing.T) {
	w := func(pipeline, topic string, n int32, bytes int64, urgency float64) Work {
		return Work{Pipeline: pipeline, Partition: part(topic, n), LagRecords: bytes / 100, LagBytes: bytes, Urgency: urgency}
	}
	tests := []struct {
		name         string
		work         []Work
		limits       Limits
		want         []Shard
		wantDeferred []Work
	}{
		{
			name:   "nothing to do",
			limits: Limits{MaxShards: 4, MaxPartitions: 4, MaxBytes: 1000},
		},
		{
			name:   "small partitions share a shard",
			work:   []Work{w("p", "a", 0, 100, 0), w("p", "a", 1, 200, 0), w("p", "b", 0, 300, 0)},
			limits: Limits{MaxShards: 4, MaxPartitions: 4, MaxBytes: 1000},
			want:   []Shard{{Pipeline: "p", Partitions: []catchup.Partition{part("b", 0), part("a", 1), part("a", 0)}, LagBytes: 600}},
		},
		{
			name:   "bytes bound a shard; a large partition gets its own",
			work:   []Work{w("p", "a", 0, 600, 0), w("p", "a", 1, 600, 0), w("p", "a", 2, 5000, 0)},
			limits: Limits{MaxShards: 4, MaxPartitions: 4, MaxBytes: 1000},
			want: []Shard{
				{Pipeline: "p", Partitions: []catchup.Partition{part("a", 2)}, LagBytes: 5000},
				{Pipeline: "p", Partitions: []catchup.Partition{part("a", 0)}, LagBytes: 600},
				{Pipeline: "p", Partitions: []catchup.Partition{part("a", 1)}, LagBytes: 600},
			},
		},
		{
			name:   "partitions bound a shard",
			work:   []Work{w("p", "a", 0, 1, 0), w("p", "a", 1, 1, 0), w("p", "a", 2, 1, 0)},
			limits: Limits{MaxShards: 4, MaxPartitions: 2, MaxBytes: 1000},
			want: []Shard{
				{Pipeline: "p", Partitions: []catchup.Partition{part("a", 0), part("a", 1)}, LagBytes: 2},
				{Pipeline: "p", Partitions: []catchup.Partition{part("a", 2)}, LagBytes: 1},
			},
		},
		{
			name:   "one pipeline per shard",
			work:   []Work{w("p", "a", 0, 1, 0), w("q", "a", 0, 1, 0)},
			limits: Limits{MaxShards: 4, MaxPartitions: 4, MaxBytes: 1000},
			want: []Shard{
				{Pipeline: "p", Partitions: []catchup.Partition{part("a", 0)}, LagBytes: 1},
				{Pipeline: "q", Partitions: []catchup.Partition{part("a", 0)}, LagBytes: 1},
			},
		},
		{
			name:         "the most urgent go first; the rest is deferred",
			work:         []Work{w("p", "a", 0, 900, 0.1), w("p", "a", 1, 100, 0.99), w("p", "a", 2, 900, 0.5)},
			limits:       Limits{MaxShards: 1, MaxPartitions: 4, MaxBytes: 1000},
			want:         []Shard{{Pipeline: "p", Partitions: []catchup.Partition{part("a", 1), part("a", 2)}, LagBytes: 1000}},
			wantDeferred: []Work{w("p", "a", 0, 900, 0.1)},
		},
		{
			name:   "a partition named twice goes in one shard",
			work:   []Work{w("p", "a", 0, 600, 0), w("p", "a", 0, 600, 0)},
			limits: Limits{MaxShards: 4, MaxPartitions: 4, MaxBytes: 1000},
			want:   []Shard{{Pipeline: "p", Partitions: []catchup.Partition{part("a", 0)}, LagBytes: 600}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, deferred := Split(tt.work, tt.limits)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Split shards (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantDeferred, deferred); diff != "" {
				t.Errorf("Split deferred (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSplitInvariants checks random backlogs: every partition is in
// exactly one shard or deferred, and every bound holds.
func TestSplitInvariants(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var work []Work
		for i := range r.IntN(300) {
			work = append(work, Work{
				Pipeline:  fmt.Sprintf("p%d", r.IntN(3)),
				Partition: part(fmt.Sprintf("t%d", r.IntN(5)), int32(i)),
				LagBytes:  r.Int64N(5000),
				Urgency:   r.Float64(),
			})
		}
		l := Limits{MaxShards: 1 + r.IntN(20), MaxPartitions: 1 + r.IntN(16), MaxBytes: 1 + r.Int64N(8000)}
		shards, deferred := Split(work, l)
		if len(shards) > l.MaxShards {
			t.Fatalf("round %d: %d shards, more than %d", round, len(shards), l.MaxShards)
		}
		type key struct {
			pipeline string
			catchup.Partition
		}
		where := map[key]string{}
		for i, s := range shards {
			if len(s.Partitions) > l.MaxPartitions || (s.LagBytes > l.MaxBytes && len(s.Partitions) > 1) {
				t.Fatalf("round %d: shard %d has %d partitions, %d bytes; limits %+v", round, i, len(s.Partitions), s.LagBytes, l)
			}
			for _, p := range s.Partitions {
				k := key{s.Pipeline, p}
				if prev, ok := where[k]; ok {
					t.Fatalf("round %d: %s %s in %s and shard %d", round, s.Pipeline, p, prev, i)
				}
				where[k] = fmt.Sprintf("shard %d", i)
			}
		}
		for _, w := range deferred {
			k := key{w.Pipeline, w.Partition}
			if prev, ok := where[k]; ok {
				t.Fatalf("round %d: %s %s in %s and deferred", round, w.Pipeline, w.Partition, prev)
			}
			where[k] = "deferred"
		}
		if len(where) != len(work) {
			t.Fatalf("round %d: %d partitions placed, want %d", round, len(where), len(work))
		}
	}
}

// TestSplitScalesWithTheBacklog: 10,000 lagging partitions over 20 shards
// fit one dispatch when shards may grow to their share of the backlog (500
// partitions each); with a fixed cap of 64, 8,720 would wait and the
// backlog would take 8 dispatches. Bytes still bound a shard.
func TestSplitScalesWithTheBacklog(t *testing.T) {
	work := make([]Work, 10000)
	for i := range work {
		work[i] = Work{Pipeline: "p", Partition: part(fmt.Sprintf("t%d", i%100), int32(i/100)), LagRecords: 1, LagBytes: 100}
	}
	for _, tc := range []struct {
		name         string
		limits       Limits
		wantDeferred int
		wantMost     int // partitions in the largest shard
		wantTicks    int
	}{
		{name: "fixed cap", limits: Limits{MaxShards: 20, MaxPartitions: 64, MaxBytes: 4 << 30},
			wantDeferred: 8720, wantMost: 64, wantTicks: 8},
		{name: "cap scales with the backlog", limits: Limits{MaxShards: 20, MaxPartitions: 64, PartitionCeiling: 1024, MaxBytes: 4 << 30},
			wantDeferred: 0, wantMost: 500, wantTicks: 1},
		{name: "up to the ceiling", limits: Limits{MaxShards: 5, MaxPartitions: 64, PartitionCeiling: 1024, MaxBytes: 4 << 30},
			wantDeferred: 10000 - 5*1024, wantMost: 1024, wantTicks: 2},
		{name: "bytes still bound a shard", limits: Limits{MaxShards: 20, MaxPartitions: 64, PartitionCeiling: 1024, MaxBytes: 100 * 100},
			wantDeferred: 10000 - 20*100, wantMost: 100, wantTicks: 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shards, deferred := Split(work, tc.limits)
			most := 0
			for _, s := range shards {
				most = max(most, len(s.Partitions))
			}
			if len(deferred) != tc.wantDeferred || most != tc.wantMost {
				t.Errorf("Split: %d shards, largest %d partitions, %d deferred; want largest %d, %d deferred",
					len(shards), most, len(deferred), tc.wantMost, tc.wantDeferred)
			}
			if got := Ticks(work, tc.limits); got != tc.wantTicks {
				t.Errorf("Ticks = %d, want %d", got, tc.wantTicks)
			}
		})
	}
}

func TestTicks(t *testing.T) {
	w := func(bytes int64) Work { return Work{Pipeline: "p", LagBytes: bytes} }
	l := Limits{MaxShards: 2, MaxPartitions: 2, MaxBytes: 1000}
	for _, tc := range []struct {
		name string
		work []Work
		want int
	}{
		{name: "no work", want: 0},
		{name: "fits one dispatch", work: []Work{w(10), w(10), w(10)}, want: 1},
		{name: "bytes: 5,000 at 2 shards of 1,000", work: []Work{w(1000), w(1000), w(1000), w(1000), w(1000)}, want: 3},
		{name: "one partition larger than a shard, copied by one worker at a time", work: []Work{w(4500)}, want: 5},
		{name: "partitions: 9 at 2 shards of 2", work: slices.Repeat([]Work{w(1)}, 9), want: 3},
	} {
		if got := Ticks(tc.work, l); got != tc.want {
			t.Errorf("%s: Ticks = %d, want %d", tc.name, got, tc.want)
		}
	}
}
