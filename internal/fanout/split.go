// Package fanout is the dispatch Lambda function: it surveys every
// pipeline, leaves alone the partitions that a live lease holds or that
// cannot be copied until an operator acts, estimates the bytes of lag of
// the others, splits them into shards by bytes (Split), and invokes the
// replicate function asynchronously once per shard. This is how a large
// disaster-recovery backlog drains in parallel: Lambda runs the shards,
// DynamoDB leases keep the workers apart.
package fanout

import (
	"slices"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/plan"
)

// Work is the backlog of one partition (plan.NewWork), ordered by
// plan.CompareUrgency, as catchup plan orders its rows.
type Work = plan.Work

// The dispatch function's defaults, for the CATCHUP_* variables lambdaenv
// names (template.yaml sets them): the dispatcher's shard limits and the
// Invoke calls it has in flight.
const (
	DefaultMaxShards          = 20      // CATCHUP_MAX_SHARDS
	DefaultShardPartitions    = 64      // CATCHUP_SHARD_PARTITIONS
	DefaultShardPartitionsMax = 1024    // CATCHUP_SHARD_PARTITIONS_MAX
	DefaultShardBytes         = 4 << 30 // CATCHUP_SHARD_BYTES
	DefaultInvokeConcurrency  = 8       // CATCHUP_INVOKE_CONCURRENCY
)

// DefaultLimits returns the dispatcher's shard limits when no variable
// sets them.
func DefaultLimits() Limits {
	return Limits{MaxShards: DefaultMaxShards, MaxPartitions: DefaultShardPartitions,
		PartitionCeiling: DefaultShardPartitionsMax, MaxBytes: DefaultShardBytes}
}

// Limits bound the shards of one dispatch.
type Limits struct {
	MaxShards int // shards at most; the work that does not fit waits for the next dispatch
	// MaxPartitions is the most partitions in one shard while the backlog
	// is small; with a larger one a shard takes its share of it,
	// ceil(partitions / MaxShards), up to PartitionCeiling: 10,000 lagging
	// partitions over 20 shards fit one dispatch (500 a shard) rather than
	// eight (64 a shard).
	MaxPartitions int
	// PartitionCeiling is the most partitions of a shard however large the
	// backlog (what one worker's memory and deadline allow); at or below
	// MaxPartitions, shards do not grow with the backlog.
	PartitionCeiling int
	MaxBytes         int64 // estimated lag bytes in one shard at most, unless one partition alone is larger
}

// shardPartitions returns the partition cap of a shard for a backlog of n
// partitions.
func (l Limits) shardPartitions(n int) int {
	share := (n + l.MaxShards - 1) / l.MaxShards
	return max(l.MaxPartitions, min(share, l.PartitionCeiling))
}

// Ticks estimates how many dispatches at l it takes to hand out work, each
// shard copying up to MaxBytes per dispatch (a worker that copies less
// takes more): the largest of the bytes of all the work over what one
// dispatch hands out, its partitions over the partitions one dispatch
// holds, and the largest partition's bytes over MaxBytes (one worker at a
// time copies a partition). 0 for no work.
func Ticks(work []Work, l Limits) int {
	if len(work) == 0 {
		return 0
	}
	l.MaxShards, l.MaxPartitions = max(l.MaxShards, 1), max(l.MaxPartitions, 1)
	l.MaxBytes = max(l.MaxBytes, 1)
	var total, largest int64
	for _, w := range work {
		total += w.LagBytes
		largest = max(largest, w.LagBytes)
	}
	perTick := int64(l.MaxShards) * l.MaxBytes
	ticks := max(1, ceilDiv(total, perTick), ceilDiv(largest, l.MaxBytes))
	return int(max(ticks, ceilDiv(int64(len(work)), int64(l.MaxShards*l.shardPartitions(len(work))))))
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// Shard is the work of one replicate invocation: partitions of one pipeline.
type Shard struct {
	Pipeline   string
	Partitions []catchup.Partition
	LagBytes   int64
}

// Split packs work into at most l.MaxShards shards, the most urgent work
// first (then the most bytes): each shard holds partitions of one pipeline,
// at most l.MaxPartitions of them (more for a large backlog, see
// Limits.MaxPartitions) and at most l.MaxBytes of lag, except
// that a partition larger than l.MaxBytes gets a shard of its own (its
// worker copies what it can before its deadline). A partition is in at
// most one shard; what does not fit is returned as deferred, in order.
func Split(work []Work, l Limits) (shards []Shard, deferred []Work) {
	l.MaxShards = max(l.MaxShards, 1)
	l.MaxPartitions = max(l.MaxPartitions, 1)
	l.MaxPartitions = l.shardPartitions(len(work))
	order := slices.Clone(work)
	slices.SortStableFunc(order, plan.CompareUrgency)
	seen := map[string]map[catchup.Partition]bool{}
	for _, w := range order {
		if seen[w.Pipeline][w.Partition] {
			continue // named twice: the first is kept
		}
		if seen[w.Pipeline] == nil {
			seen[w.Pipeline] = map[catchup.Partition]bool{}
		}
		seen[w.Pipeline][w.Partition] = true
		i := slices.IndexFunc(shards, func(s Shard) bool {
			return s.Pipeline == w.Pipeline && len(s.Partitions) < l.MaxPartitions && s.LagBytes+w.LagBytes <= l.MaxBytes
		})
		switch {
		case i >= 0:
			shards[i].Partitions = append(shards[i].Partitions, w.Partition)
			shards[i].LagBytes += w.LagBytes
		case len(shards) < l.MaxShards:
			shards = append(shards, Shard{Pipeline: w.Pipeline, Partitions: []catchup.Partition{w.Partition}, LagBytes: w.LagBytes})
		default:
			deferred = append(deferred, w)
		}
	}
	return shards, deferred
}
