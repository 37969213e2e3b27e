// Package mm2takeover finds where catchup starts so that it continues
// exactly where a stopped MirrorMaker 2 ended: one past the last source
// offset MirrorMaker 2 recorded in its Kafka Connect offsets topic, after
// checking that MirrorMaker 2 has stopped and that the target's last record
// is the one that offset names.
//
// MirrorSourceTask records, for each source partition, a Connect source
// offset in the worker's offsets topic: the key is the JSON array
// ["CONNECTOR", {"cluster": ALIAS, "partition": N, "topic": TOPIC}]
// (MirrorUtils.wrapPartition), the value {"offset": OFFSET}
// (MirrorUtils.wrapOffset), OFFSET being the source offset of the last
// record whose write the target acknowledged; a restarted task seeks to
// OFFSET+1. A null value deletes the position. The last record of a key
// wins, as in Connect's KafkaOffsetBackingStore.
package mm2takeover

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kafka-catchup/catchup/internal/backoff"
	"github.com/kafka-catchup/catchup/internal/catchup"
)

// ErrRefused is wrapped by every error of Positions that is a position
// catchup will not take: the partition and the fix are in the message.
var ErrRefused = errors.New("mm2takeover: refused")

// Reader reads a cluster: kafkago.Source fits it.
type Reader interface {
	Partitions(ctx context.Context, match func(topic string) bool) ([]catchup.Partition, error)
	ListOffsets(ctx context.Context, ps []catchup.Partition) ([]catchup.Offsets, error)
	Fetch(ctx context.Context, p catchup.Partition, from int64, maxBytes int32) (catchup.Fetched, error)
}

// Flow is one MirrorMaker 2 flow to take over.
type Flow struct {
	// Connector and Cluster select the offsets: the connector's name
	// ("MirrorSourceConnector" in dedicated mode, "A->B.MirrorSourceConnector"
	// under Strimzi) and the source cluster's alias.
	Connector, Cluster string
	// OffsetsTopic is the Connect offsets topic, read from the Offsets cluster.
	OffsetsTopic string
	// Match selects the source topics the pipeline copies.
	Match func(topic string) bool
	// TargetTopic names the target topic of a source topic.
	TargetTopic func(topic string) string
	// Target is the target cluster's alias: MirrorHeartbeatTask keys the
	// flow's heartbeats by (Cluster, Target).
	Target string
	// Heartbeats says whether MirrorMaker 2 was set to emit the flow's
	// heartbeats to HeartbeatsTopic on the Offsets cluster (its Connect
	// cluster) every HeartbeatsInterval; HeartbeatsOff names the setting
	// that turned them off, for the note that says so.
	Heartbeats         bool
	HeartbeatsTopic    string
	HeartbeatsInterval time.Duration
	HeartbeatsOff      string
}

// Clusters are the three clusters a take-over reads (Offsets is often
// Target itself).
type Clusters struct {
	Offsets, Source, Target Reader
}

// Options tune Positions.
type Options struct {
	// Settle is how long Positions watches MirrorMaker 2's offsets and the
	// target's ends for a writer still running.
	Settle time.Duration
	// Wait waits d (time.Sleep under ctx when nil); tests inject it.
	Wait func(ctx context.Context, d time.Duration) error
	// Note receives what the caller should tell the user: the flow's last
	// heartbeat, or that heartbeats cannot tell whether it still runs.
	Note func(msg string)
}

// HeartbeatsTopic is where MirrorHeartbeatTask writes
// (ReplicationPolicy.heartbeatsTopic of both built-in policies).
const HeartbeatsTopic = "heartbeats"

// key is the key of a MirrorSourceTask's source offset.
type key struct {
	connector, cluster, topic string
	partition                 int32
}

const fetchBytes = 1 << 20

// Positions returns the start offset of every selected source partition
// that MirrorMaker 2 copied: one past its last recorded offset. A
// partition MirrorMaker 2 never copied, whose target partition is empty,
// is left out (it starts where the pipeline says). Every partition that
// cannot be taken over exactly is named in the error, which wraps
// ErrRefused: MirrorMaker 2's offset or the target's end moved during
// Settle (it is still running), the target's last record is not the source
// record MirrorMaker 2 last recorded (it wrote past its last offset commit,
// or the target lost records), or the target holds records of a partition
// MirrorMaker 2 has no position for.
func Positions(ctx context.Context, cl Clusters, fl Flow, opt Options) (map[string]map[int32]int64, error) {
	wait := opt.Wait
	if wait == nil {
		wait = sleep
	}
	srcParts, err := cl.Source.Partitions(ctx, fl.Match)
	if err != nil {
		return nil, fmt.Errorf("list the source partitions: %w", err)
	}
	slices.SortFunc(srcParts, catchup.Partition.Compare)
	targetOf := func(p catchup.Partition) catchup.Partition {
		return catchup.Partition{Topic: fl.TargetTopic(p.Topic), Partition: p.Partition}
	}
	note := opt.Note
	if note == nil {
		note = func(string) {}
	}
	before, err := readOffsets(ctx, cl.Offsets, fl)
	if err != nil {
		return nil, err
	}
	endsBefore, err := targetEnds(ctx, cl.Target, srcParts, targetOf)
	if err != nil {
		return nil, err
	}
	beats, err := heartbeatEnds(ctx, cl.Offsets, fl.HeartbeatsTopic)
	if err != nil {
		return nil, err
	}
	settle := opt.Settle
	if fl.Heartbeats {
		// A running MirrorMaker 2 writes one at least every interval.
		settle = max(settle, 2*fl.HeartbeatsInterval)
	}
	if err := wait(ctx, settle); err != nil {
		return nil, err
	}
	running, last, err := heartbeats(ctx, cl.Offsets, fl, beats)
	if err != nil {
		return nil, err
	}
	after, err := readOffsets(ctx, cl.Offsets, fl)
	if err != nil {
		return nil, err
	}
	ends, err := targetEnds(ctx, cl.Target, srcParts, targetOf)
	if err != nil {
		return nil, err
	}

	out := map[string]map[int32]int64{}
	var problems []error
	switch {
	case running != nil:
		problems = append(problems, fmt.Errorf("%w: MirrorMaker 2 is running: it wrote %d heartbeats of %s->%s to %s during the %v the "+
			"take-over watched (the last at offset %d, %s), although its offsets and the target may look still (an idle MirrorMaker 2 "+
			"commits its offsets every offset.flush.interval.ms, 60 s by default): stop MirrorMaker 2 (every worker, and the "+
			"MirrorHeartbeatConnector), then take over", ErrRefused, running.count, fl.Cluster, fl.Target, fl.HeartbeatsTopic, settle,
			running.offset, running.at.UTC().Format(time.RFC3339Nano)))
	case !fl.Heartbeats:
		note(fmt.Sprintf("MirrorMaker 2's heartbeats of %s->%s are off (%s): an idle MirrorMaker 2 that still runs cannot be told "+
			"from a stopped one, only one whose offsets or target ends move during the %v watched; make sure it is stopped",
			fl.Cluster, fl.Target, fl.HeartbeatsOff, settle))
	case last == nil:
		note(fmt.Sprintf("no heartbeat of %s->%s in %s (among its last %d records): MirrorMaker 2's heartbeat connector did not run "+
			"there, so an idle MirrorMaker 2 that still runs cannot be told from a stopped one, only one whose offsets or target "+
			"ends move during the %v watched; make sure it is stopped", fl.Cluster, fl.Target, fl.HeartbeatsTopic, heartbeatTail, settle))
	default:
		note(fmt.Sprintf("no heartbeat of %s->%s in %s during the %v watched: MirrorMaker 2 has stopped (its last heartbeat: "+
			"offset %d, %s)", fl.Cluster, fl.Target, fl.HeartbeatsTopic, settle, last.offset, last.at.UTC().Format(time.RFC3339Nano)))
	}
	refuse := func(p catchup.Partition, format string, args ...any) {
		problems = append(problems, fmt.Errorf("%w: %s: %s", ErrRefused, p, fmt.Sprintf(format, args...)))
	}
	for _, p := range srcParts {
		k := key{fl.Connector, fl.Cluster, p.Topic, p.Partition}
		tp := targetOf(p)
		o, ok := after[k]
		ob, okb := before[k]
		switch {
		case ok != okb || o != ob:
			refuse(p, "MirrorMaker 2 is still copying it (its offset moved from %s to %s in %v): stop MirrorMaker 2, then take over",
				show(ob, okb), show(o, ok), settle)
			continue
		case ends[tp] != endsBefore[tp]:
			refuse(p, "its target partition %s is still being written (end %d, then %d, in %v): stop MirrorMaker 2 and every "+
				"other writer of %s, then take over", tp, endsBefore[tp], ends[tp], settle, tp.Topic)
			continue
		case !ok && ends[tp] == 0:
			continue // never copied: the pipeline's start applies
		case !ok:
			refuse(p, "MirrorMaker 2 recorded no position for it, yet its target partition %s holds records up to offset %d "+
				"(another writer, or offsets of another connector: check --offsets-topic and the connector's name %q); "+
				"set start_offsets for it by hand", tp, ends[tp]-1, fl.Connector)
			continue
		case ends[tp] == 0:
			refuse(p, "MirrorMaker 2 recorded source offset %d as copied, but its target partition %s is empty (recreated, or "+
				"truncated): starting at %d would skip offsets up to %d; set start_offsets for it by hand", o, tp, o+1, o)
			continue
		}
		last, err := lastRecord(ctx, cl.Target, tp, ends[tp])
		if err != nil {
			return nil, err
		}
		rec, err := recordAt(ctx, cl.Source, p, o)
		if err != nil {
			return nil, err
		}
		switch {
		case rec == nil:
			refuse(p, "the source record at offset %d, which MirrorMaker 2 recorded as its last copy, is gone (retention or "+
				"compaction): the target's last record cannot be checked against it; set start_offsets for it by hand", o)
		case last == nil:
			refuse(p, "its target partition %s ends at %d but holds no record to check against source offset %d", tp, ends[tp], o)
		case !catchup.SameContent(rec, last, false):
			refuse(p, "the last record of %s (offset %d) is not source offset %d, the last copy MirrorMaker 2 recorded: it wrote "+
				"past its last offset commit (stopped without committing: starting at %d would copy records twice) or the target "+
				"lost records; start MirrorMaker 2 again and stop it with SIGTERM so that it commits, then take over",
				tp, last.Offset, o, o+1)
		default:
			if out[p.Topic] == nil {
				out[p.Topic] = map[int32]int64{}
			}
			out[p.Topic][p.Partition] = o + 1
		}
	}
	return out, errors.Join(problems...)
}

func show(o int64, ok bool) string {
	if !ok {
		return "none"
	}
	return fmt.Sprint(o)
}

func sleep(ctx context.Context, d time.Duration) error {
	if !backoff.Sleep(ctx, d) {
		return ctx.Err()
	}
	return nil
}

// readOffsets reads the whole offsets topic: the last position of each of
// the flow's partitions.
func readOffsets(ctx context.Context, r Reader, fl Flow) (map[key]int64, error) {
	parts, err := r.Partitions(ctx, func(t string) bool { return t == fl.OffsetsTopic })
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", fl.OffsetsTopic, err)
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: the offsets topic %s does not exist on that cluster: give the topic MirrorMaker 2's Connect "+
			"worker used (offset.storage.topic) with --offsets-topic", ErrRefused, fl.OffsetsTopic)
	}
	marks, err := r.ListOffsets(ctx, parts)
	if err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", fl.OffsetsTopic, err)
	}
	out := map[key]int64{}
	for _, m := range marks {
		for at := m.LogStart; at < m.HighWatermark; {
			f, err := r.Fetch(ctx, m.Partition, at, fetchBytes)
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", m.Partition, err)
			}
			for _, rec := range f.Records {
				k, ok := parseKey(rec.Key)
				if !ok || k.connector != fl.Connector || k.cluster != fl.Cluster {
					continue
				}
				if rec.Value == nil {
					delete(out, k)
					continue
				}
				var v struct {
					Offset *int64 `json:"offset"`
				}
				if json.Unmarshal(rec.Value, &v) == nil && v.Offset != nil {
					out[k] = *v.Offset
				}
			}
			if f.Next <= at {
				break
			}
			at = f.Next
		}
	}
	return out, nil
}

// parseKey parses ["CONNECTOR", {"cluster": ..., "partition": ..., "topic": ...}].
func parseKey(b []byte) (key, bool) {
	var parts []json.RawMessage
	if json.Unmarshal(b, &parts) != nil || len(parts) != 2 {
		return key{}, false
	}
	var k key
	var p struct {
		Cluster   string `json:"cluster"`
		Topic     string `json:"topic"`
		Partition *int32 `json:"partition"`
	}
	if json.Unmarshal(parts[0], &k.connector) != nil || json.Unmarshal(parts[1], &p) != nil || p.Partition == nil {
		return key{}, false
	}
	k.cluster, k.topic, k.partition = p.Cluster, p.Topic, *p.Partition
	return k, true
}

// targetEnds returns the end offset of the target partition of each of
// ps; a missing topic or partition ends at 0.
func targetEnds(ctx context.Context, r Reader, ps []catchup.Partition, targetOf func(catchup.Partition) catchup.Partition) (map[catchup.Partition]int64, error) {
	want := map[catchup.Partition]bool{}
	for _, p := range ps {
		want[targetOf(p)] = true
	}
	exist, err := r.Partitions(ctx, func(t string) bool {
		for p := range want {
			if p.Topic == t {
				return true
			}
		}
		return false
	})
	if err != nil {
		return nil, fmt.Errorf("list the target partitions: %w", err)
	}
	var have []catchup.Partition
	for _, p := range exist {
		if want[p] {
			have = append(have, p)
		}
	}
	ends := map[catchup.Partition]int64{}
	if len(have) == 0 {
		return ends, nil
	}
	marks, err := r.ListOffsets(ctx, have)
	if err != nil {
		return nil, fmt.Errorf("target end offsets: %w", err)
	}
	for _, m := range marks {
		ends[m.Partition] = m.HighWatermark
	}
	return ends, nil
}

// lastRecord returns the record of p with the highest offset below end,
// looking back past transaction markers; nil if there is none.
func lastRecord(ctx context.Context, r Reader, p catchup.Partition, end int64) (*catchup.Record, error) {
	for back := int64(1); back <= 1024; back *= 8 {
		from := max(end-back, 0)
		var last *catchup.Record
		for at := from; at < end; {
			f, err := r.Fetch(ctx, p, at, fetchBytes)
			if err != nil {
				return nil, fmt.Errorf("read the last record of %s: %w", p, err)
			}
			for i := range f.Records {
				if f.Records[i].Offset < end && f.Records[i].Offset >= from {
					rec := f.Records[i]
					last = &rec
				}
			}
			if f.Next <= at {
				break
			}
			at = f.Next
		}
		if last != nil || from == 0 {
			return last, nil
		}
	}
	return nil, nil
}

// recordAt returns the record at offset o of p, nil if it is gone.
func recordAt(ctx context.Context, r Reader, p catchup.Partition, o int64) (*catchup.Record, error) {
	f, err := r.Fetch(ctx, p, o, fetchBytes)
	if err != nil {
		return nil, fmt.Errorf("read %s at %d: %w", p, o, err)
	}
	for i := range f.Records {
		if f.Records[i].Offset == o {
			rec := f.Records[i]
			return &rec, nil
		}
	}
	return nil, nil
}

// heartbeatTail is how many of the heartbeats topic's last records are
// searched for the flow's last heartbeat (the topic is compacted, one key
// per flow, but its active segment is not).
const heartbeatTail = 4096

// beat is a heartbeat of the flow: where, when, and how many were seen.
type beat struct {
	offset int64
	at     time.Time
	count  int
}

// heartbeatEnds returns the offsets of every partition of topic on r;
// none if it does not exist.
func heartbeatEnds(ctx context.Context, r Reader, topic string) (map[catchup.Partition]catchup.Offsets, error) {
	out := map[catchup.Partition]catchup.Offsets{}
	if topic == "" {
		return out, nil
	}
	parts, err := r.Partitions(ctx, func(t string) bool { return t == topic })
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", topic, err)
	}
	if len(parts) == 0 {
		return out, nil
	}
	marks, err := r.ListOffsets(ctx, parts)
	if err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	for _, m := range marks {
		out[m.Partition] = m
	}
	return out, nil
}

// heartbeats reads the flow's heartbeats: running is those written after
// the ends in before (nil if none), last the latest of them all (searched
// in the last heartbeatTail records of each partition; nil if none).
func heartbeats(ctx context.Context, r Reader, fl Flow, before map[catchup.Partition]catchup.Offsets) (running, last *beat, err error) {
	after, err := heartbeatEnds(ctx, r, fl.HeartbeatsTopic)
	if err != nil {
		return nil, nil, err
	}
	for p, m := range after {
		end := m.HighWatermark
		from := max(end-heartbeatTail, m.LogStart, 0)
		for at := from; at < end; {
			f, err := r.Fetch(ctx, p, at, fetchBytes)
			if err != nil {
				return nil, nil, fmt.Errorf("read %s: %w", p, err)
			}
			for _, rec := range f.Records {
				src, dst, ts, ok := ParseHeartbeat(rec.Key, rec.Value)
				if !ok || src != fl.Cluster || dst != fl.Target || rec.Offset >= end {
					continue
				}
				b := beat{offset: rec.Offset, at: time.UnixMilli(ts)}
				if last == nil || ts >= last.at.UnixMilli() {
					last = &b
				}
				if m, ok := before[p]; !ok || rec.Offset >= m.HighWatermark {
					if running == nil {
						running = &beat{}
					}
					running.offset, running.at, running.count = b.offset, b.at, running.count+1
				}
			}
			if f.Next <= at {
				break
			}
			at = f.Next
		}
	}
	return running, last, nil
}

// ParseHeartbeat parses a record of MirrorMaker 2's heartbeats topic
// (org.apache.kafka.connect.mirror.Heartbeat): the key is two Kafka
// protocol strings (an int16 length, then the bytes), sourceClusterAlias
// and targetClusterAlias; the value an int16 version (0), then the int64
// timestamp in milliseconds, big-endian.
func ParseHeartbeat(key, value []byte) (source, target string, millis int64, ok bool) {
	str := func(b []byte) (string, []byte, bool) {
		if len(b) < 2 {
			return "", nil, false
		}
		n := int(int16(binary.BigEndian.Uint16(b)))
		if n < 0 || len(b) < 2+n {
			return "", nil, false
		}
		return string(b[2 : 2+n]), b[2+n:], true
	}
	source, rest, ok1 := str(key)
	target, rest, ok2 := str(rest)
	if !ok1 || !ok2 || len(rest) != 0 || len(value) != 10 || binary.BigEndian.Uint16(value) != 0 {
		return "", "", 0, false
	}
	return source, target, int64(binary.BigEndian.Uint64(value[2:])), true
}
