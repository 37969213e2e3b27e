package pipeline

import (
	"cmp"
	"slices"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// Shard returns the share of parts that process index of count takes when
// several processes share a catch-up, as the pods of a Kubernetes Indexed
// Job do: of parts in (topic, partition) order, every count-th from index.
// The shares are disjoint, cover parts and differ in size by at most one.
// The leases keep two processes off one partition whatever the shares say;
// the shares only spread the work.
func Shard(parts []catchup.Partition, index, count int) []catchup.Partition {
	sorted := slices.SortedFunc(slices.Values(parts), func(a, b catchup.Partition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	mine := []catchup.Partition{}
	for i, p := range sorted {
		if i%count == index {
			mine = append(mine, p)
		}
	}
	return mine
}
