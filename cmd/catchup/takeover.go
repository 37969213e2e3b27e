package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/mirrormaker"
	"github.com/kafka-catchup/catchup/internal/mm2takeover"
	"github.com/kafka-catchup/catchup/internal/pipeline"
)

// takeOver is the --take-over flags of mirrormaker2.
type takeOver struct {
	enabled bool
	topic   string // --offsets-topic
	settle  time.Duration
	file    string // the MirrorMaker 2 file, for the commands a refusal gives
}

// takeOver sets start_offsets of every pipeline of m to one past the
// positions MirrorMaker 2 recorded, or returns an error (exit 2) naming
// every partition it will not take over.
func (a *app) takeOver(ctx context.Context, m *mirrormaker.Migration, to takeOver) error {
	var problems []error
	for _, fl := range m.Flows {
		p := pipelineNamed(m.File, fl.Pipeline)
		if p == nil {
			continue
		}
		topic := fl.OffsetsTopic
		if to.topic != "" {
			topic = to.topic
		}
		if topic == "" {
			problems = append(problems, fmt.Errorf("pipeline %s: --take-over of a Connect connector needs --offsets-topic: "+
				"the offset.storage.topic of the Connect cluster that ran it", p.Name))
			continue
		}
		var offsetsCluster config.Cluster
		switch fl.OffsetsCluster {
		case p.Target.Name:
			offsetsCluster = p.Target
		case p.Source.Name:
			offsetsCluster = p.Source
		default:
			problems = append(problems, fmt.Errorf("pipeline %s: MirrorMaker 2's offsets are on cluster %s, which is neither its source "+
				"nor its target: catchup takes over only from a Connect cluster on one of them", p.Name, fl.OffsetsCluster))
			continue
		}
		offs, err := a.mm2Positions(ctx, p, offsetsCluster, mm2takeover.Flow{
			Connector: fl.Connector, Cluster: fl.Source, OffsetsTopic: topic,
			Match: p.Topics.Match, TargetTopic: p.MapTopic, Target: fl.Target,
			Heartbeats: fl.Heartbeats, HeartbeatsTopic: mm2takeover.HeartbeatsTopic, HeartbeatsInterval: fl.HeartbeatsInterval,
			HeartbeatsOff: fl.HeartbeatsKey,
		}, mm2takeover.Options{Settle: to.settle, Note: func(msg string) {
			fmt.Fprintf(a.err, "catchup mirrormaker2: pipeline %s: %s\n", p.Name, msg)
		}})
		if err != nil {
			problems = append(problems, fmt.Errorf("pipeline %s: take over from MirrorMaker 2 (%s on %s, connector %q): %w",
				p.Name, topic, fl.OffsetsCluster, fl.Connector, err))
			continue
		}
		agreed, err := checkpointsAgree(ctx, m.File, to.file, p.Name, offs)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		m.SetStartOffsets(p.Name, offs)
		if agreed > 0 {
			fmt.Fprintf(a.err, "catchup mirrormaker2: pipeline %s: the store %s already holds checkpoints at MirrorMaker 2's positions "+
				"for %d of its partitions (an earlier take-over): they stay, nothing changes\n", p.Name, m.File.Store, agreed)
		}
		n := 0
		for _, ps := range offs {
			n += len(ps)
		}
		fmt.Fprintf(a.err, "catchup mirrormaker2: pipeline %s: took over %d partitions from MirrorMaker 2 (%s): start_offsets one past "+
			"its last copy, checked against the target's last record; topics %v\n", p.Name, n, topic, slices.Sorted(maps.Keys(offs)))
	}
	if err := errors.Join(problems...); err != nil {
		return usageError{err}
	}
	return nil
}

// mm2Positions reads the positions of one flow through three connections.
func (a *app) mm2Positions(ctx context.Context, p *config.Pipeline, offsetsCluster config.Cluster, fl mm2takeover.Flow, opt mm2takeover.Options) (map[string]map[int32]int64, error) {
	// MirrorMaker 2 with exactly.once.source.support writes its offsets and
	// its copies in transactions: an aborted one's offset record and copies
	// must not count, so those two are read committed.
	const committed, uncommitted = "read_committed", "read_uncommitted"
	offsets, err := pipeline.ConnectReader(offsetsCluster, committed)
	if err != nil {
		return nil, err
	}
	defer offsets.Close()
	src, err := pipeline.ConnectReader(p.Source, uncommitted)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	dst, err := pipeline.ConnectReader(p.Target, committed)
	if err != nil {
		return nil, err
	}
	defer dst.Close()
	return mm2takeover.Positions(ctx, mm2takeover.Clusters{Offsets: offsets, Source: src, Target: dst}, fl, opt)
}

func pipelineNamed(f *config.File, name string) *config.Pipeline {
	if f == nil {
		return nil
	}
	for i := range f.Pipelines {
		if f.Pipelines[i].Name == name {
			return &f.Pipelines[i]
		}
	}
	return nil
}

// checkpointsAgree returns how many partitions of offs already have a
// checkpoint of pipeline p in the store at exactly offs (a take-over run
// again: nothing to change), or an error (exit 2) naming every partition
// whose checkpoint is elsewhere: a checkpoint wins over start_offsets, so
// MirrorMaker 2's position would be silently ignored.
func checkpointsAgree(ctx context.Context, f *config.File, file, p string, offs map[string]map[int32]int64) (int, error) {
	cps, err := pipeline.Checkpoints(ctx, f, p)
	if err != nil {
		return 0, fmt.Errorf("pipeline %s: --take-over reads the store's checkpoints first: %w", p, err)
	}
	agreed := 0
	var differ, fixes []string
	for _, cp := range cps {
		at, ok := offs[cp.Topic][cp.Partition.Partition]
		switch {
		case !ok || !cp.Exists:
		case cp.Next == at:
			agreed++
		default:
			differ = append(differ, fmt.Sprintf("  %s: checkpoint %d, MirrorMaker 2's position %d", cp.Partition, cp.Next, at))
			fixes = append(fixes, fmt.Sprintf("  catchup reset -c pipelines.yaml --pipeline %s --topic %s --partition %d --to %d --yes",
				p, cp.Topic, cp.Partition.Partition, at))
		}
	}
	if len(differ) == 0 {
		return agreed, nil
	}
	return 0, fmt.Errorf("pipeline %s: --take-over refused; nothing changed: the store %s already holds checkpoints of %d of its "+
		"partitions that are not MirrorMaker 2's positions, and a checkpoint wins over start_offsets (MirrorMaker 2's positions "+
		"would be ignored):\n%s\nThe target's last records are MirrorMaker 2's last copies, so its positions are where the target "+
		"ends: move the checkpoints there, then take over again:\n  catchup mirrormaker2 %s --store %s --print-config > pipelines.yaml\n%s\n"+
		"or, to continue from catchup's checkpoints instead, run without --take-over",
		p, f.Store, len(differ), strings.Join(differ, "\n"), file, f.Store, strings.Join(fixes, "\n"))
}
