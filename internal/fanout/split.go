// Package fanout is the dispatch Lambda function: it surveys every
// pipeline, leaves alone the partitions that a live lease holds or that
// cannot be copied until an operator acts, estimates the bytes of lag of
// the others, splits them into shards by bytes (Split), and invokes the
// replicate function asynchronously once per shard. This is how a large
// disaster-recovery backlog drains in parallel: Lambda runs the shards,
// DynamoDB leases keep the workers apart.
package fanout

import (
	"cmp"
	"slices"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// Work is the backlog of one partition.
type Work struct {
	Pipeline string
	catchup.Partition
	LagRecords int64 // offsets of the window left to copy
	LagBytes   int64 // their estimated bytes
	// Urgency is the share of the source's retained log that is not copied
	// yet, from 0 to 1: at 1 the next record to copy is the oldest the
	// source still holds, the first that retention deletes.
	Urgency float64
}

// Limits bound the shards of one dispatch.
type Limits struct {
	MaxShards     int   // shards at most; the work that does not fit waits for the next dispatch
	MaxPartitions int   // partitions in one shard at most
	MaxBytes      int64 // estimated lag bytes in one shard at most, unless one partition alone is larger
}

// Shard is the work of one replicate invocation: partitions of one pipeline.
type Shard struct {
	Pipeline   string
	Partitions []catchup.Partition
	LagBytes   int64
}

// Split packs work into at most l.MaxShards shards, the most urgent work
// first (then the most bytes): each shard holds partitions of one pipeline,
// at most l.MaxPartitions of them and at most l.MaxBytes of lag, except
// that a partition larger than l.MaxBytes gets a shard of its own (its
// worker copies what it can before its deadline). A partition is in at
// most one shard; what does not fit is returned as deferred, in order.
func Split(work []Work, l Limits) (shards []Shard, deferred []Work) {
	l.MaxShards = max(l.MaxShards, 1)
	l.MaxPartitions = max(l.MaxPartitions, 1)
	order := slices.Clone(work)
	slices.SortStableFunc(order, func(a, b Work) int {
		return cmp.Or(cmp.Compare(b.Urgency, a.Urgency), cmp.Compare(b.LagBytes, a.LagBytes),
			cmp.Compare(a.Pipeline, b.Pipeline), a.Partition.Compare(b.Partition))
	})
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
