package pipeline

import (
	"cmp"
	"hash/fnv"
	"slices"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// Shard returns the share of parts that process index of count takes when
// several processes share a catch-up, as the pods of a Kubernetes Indexed
// Job do. A partition's share depends on its topic's name and its number
// alone, never on the rest of the list: the pods of a Job that start
// minutes apart list the partitions at different times, and a topic
// created or deleted in between must not move anyone else's partitions
// from one share to another, or some would fall in none. Within a topic the
// partitions go round the shares from a point its name fixes, so the
// shares of one topic differ in size by at most one. The shares are
// disjoint and cover parts. The leases keep two processes off one
// partition whatever the shares say; the shares only spread the work.
func Shard(parts []catchup.Partition, index, count int) []catchup.Partition {
	sorted := slices.SortedFunc(slices.Values(parts), func(a, b catchup.Partition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	mine := []catchup.Partition{}
	for _, p := range sorted {
		h := fnv.New32a()
		_, _ = h.Write([]byte(p.Topic)) // a hash.Hash never fails to write
		if (uint64(h.Sum32())+uint64(p.Partition))%uint64(count) == uint64(index) {
			mine = append(mine, p)
		}
	}
	return mine
}
