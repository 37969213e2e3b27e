package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// TestShardPick: the shards of a partition list are disjoint, cover it,
// and differ in size by at most one within a topic, whatever the list's
// order; a partition keeps its shard when other topics come or go.
func TestShardPick(t *testing.T) {
	var parts []catchup.Partition
	for _, topic := range []string{"b", "a"} {
		for p := range int32(5) {
			parts = append(parts, catchup.Partition{Topic: topic, Partition: 4 - p})
		}
	}
	for _, count := range []int{2, 3, 4, 11} {
		seen := map[catchup.Partition]int{}
		for n := range count {
			s := shard{count: count, n: n}
			mine := s.pick(parts)
			for _, p := range mine {
				seen[p]++
			}
		}
		for _, p := range parts {
			if seen[p] != 1 {
				t.Errorf("%d shards: %v in %d shards, want 1", count, p, seen[p])
			}
		}
		for _, topic := range []string{"a", "b"} {
			var sizes []int
			for n := range count {
				mine := 0
				s := shard{count: count, n: n}
				for _, p := range s.pick(parts) {
					if p.Topic == topic {
						mine++
					}
				}
				sizes = append(sizes, mine)
			}
			if slices.Max(sizes)-slices.Min(sizes) > 1 {
				t.Errorf("%d shards: topic %s's sizes %v, want within one of each other", count, topic, sizes)
			}
		}
		// A topic created between two pods' starts ("0" sorts first).
		grown := append(slices.Clone(parts), catchup.Partition{Topic: "0", Partition: 0}, catchup.Partition{Topic: "0", Partition: 1})
		for n := range count {
			s := shard{count: count, n: n}
			for _, p := range s.pick(grown) {
				if p.Topic != "0" && !slices.Contains(s.pick(parts), p) {
					t.Errorf("%d shards: %v moved to shard %d when topic 0 appeared", count, p, n)
				}
			}
		}
	}
}

// TestShardFlags: --shards needs an index in range, from --shard-index or
// JOB_COMPLETION_INDEX, and refuses --every.
func TestShardFlags(t *testing.T) {
	t.Setenv(EnvJobIndex, "2")
	for _, tc := range []struct {
		s     shard
		every bool
		want  int // -1: a usage error
	}{
		{shard{}, false, 0},
		{shard{count: 4}, false, 2},
		{shard{count: 4, index: "3"}, false, 3},
		{shard{count: 4, index: "4"}, false, -1},
		{shard{count: 2}, false, -1}, // JOB_COMPLETION_INDEX 2 of 2
		{shard{count: 4}, true, -1},
		{shard{index: "1"}, false, -1},
	} {
		err := tc.s.resolve(tc.every)
		if got := map[bool]int{true: -1, false: tc.s.n}[err != nil]; got != tc.want {
			t.Errorf("%+v every=%v: index %d, error %v; want %d", tc.s, tc.every, tc.s.n, err, tc.want)
		}
	}
}

// TestIndexedJobShards: four processes with the index and count an Indexed
// Job of 4 completions would give copy the pipeline's partitions between
// them over one DynamoDB store, each partition by exactly one (the shards
// are disjoint; one of the four, with 3 partitions, has none), and the
// copy is exact: verify finds every source record once in the target.
func TestIndexedJobShards(t *testing.T) {
	e := newCLIEnv(t)
	cfg := e.writeConfigStore(t, "dynamo.yaml", e.dst.ListenAddrs()[0], dynamoStore(t, e))
	mustCLI(t, exitOK, "", "init-store", "-c", cfg)
	const shards = 4
	outs := make([]bytes.Buffer, shards)
	errs := make([]bytes.Buffer, shards)
	codes := make([]int, shards)
	var wg sync.WaitGroup
	for i := range shards {
		wg.Go(func() {
			codes[i] = run(context.Background(), []string{"run", "-c", cfg, "--json=compact", "--shards", fmt.Sprint(shards), "--shard-index", fmt.Sprint(i)},
				strings.NewReader(""), &outs[i], &errs[i])
		})
	}
	wg.Wait()
	copiedBy := map[int32][]int{}
	for i := range shards {
		if codes[i] != exitOK {
			t.Fatalf("shard %d: exit %d\nstderr:\n%s", i, codes[i], errs[i].String())
		}
		var doc struct {
			Pipelines []reportJSONT `json:"pipelines"`
		}
		if err := json.Unmarshal(outs[i].Bytes(), &doc); err != nil {
			t.Fatalf("shard %d: %v\n%s", i, err, outs[i].String())
		}
		for _, p := range doc.Pipelines {
			for _, r := range p.Partitions {
				if r.Status != "done" || r.Copied != cliPerPart {
					t.Errorf("shard %d: partition %d %s, copied %d; want done, %d", i, r.Partition, r.Status, r.Copied, cliPerPart)
				}
				copiedBy[r.Partition] = append(copiedBy[r.Partition], i)
			}
		}
	}
	for p := range int32(cliParts) {
		if len(copiedBy[p]) != 1 {
			t.Errorf("partition %d copied by shards %v, want exactly one", p, copiedBy[p])
		}
	}
	out, _ := mustCLI(t, exitOK, "", "verify", "-c", cfg)
	if strings.Count(out, fmt.Sprintf("%d", cliPerPart)) < cliParts {
		t.Errorf("verify after the shards:\n%s", out)
	}
}
