package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/pipeline"
)

// EnvJobIndex is the index Kubernetes gives each pod of an Indexed Job.
const EnvJobIndex = "JOB_COMPLETION_INDEX"

// shard is this process's part of the partitions when several processes
// share a catch-up, as the pods of a Kubernetes Indexed Job do
// (pipeline.Shard).
type shard struct {
	count int    // --shards; 0 or 1: every partition
	index string // --shard-index; "": JOB_COMPLETION_INDEX
	n     int    // the index, resolved
}

func addShardFlags(cmd *cobra.Command, s *shard) {
	fl := cmd.Flags()
	fl.IntVar(&s.count, "shards", 0, "copy only this process's share of the partitions, one of N processes (an Indexed Job's completions; docs/kubernetes-and-vms.md)")
	fl.StringVar(&s.index, "shard-index", "", "this process's share, 0 to N-1, with --shards (default: $"+EnvJobIndex+", which an Indexed Job sets)")
}

// resolve checks the flags and reads the index.
func (s *shard) resolve(every bool) error {
	if s.count <= 1 {
		if s.index != "" || s.count < 0 {
			return usageError{fmt.Errorf("--shard-index %q, --shards %d: give --shards N (at least 2) with the index", s.index, s.count)}
		}
		return nil
	}
	if every {
		return usageError{fmt.Errorf("--shards runs once, as an Indexed Job's pod does: drop --every, or run one --every process without --shards")}
	}
	v := s.index
	if v == "" {
		v = os.Getenv(EnvJobIndex)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n >= s.count {
		return usageError{fmt.Errorf("--shards %d: the shard index %q (--shard-index, or $%s) must be 0 to %d", s.count, v, EnvJobIndex, s.count-1)}
	}
	s.n = n
	return nil
}

// pick returns this shard's partitions of parts (pipeline.Shard).
func (s *shard) pick(parts []catchup.Partition) []catchup.Partition {
	return pipeline.Shard(parts, s.n, s.count)
}
