// Package runmetrics turns the report of a run (replicate.Report) into
// catchup's metric values, so that every sink carries the same figures
// under the same names: EMF lines on Lambda (internal/worker), Prometheus
// elsewhere (internal/metrics/prom).
package runmetrics

import (
	"errors"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/metrics"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// Copy returns the copy figures of rep (records, bytes, windows and the
// partitions by outcome) by topic when byTopic, else all under the key "".
// Every topic gets every figure, zeros included: an alarm needs a datum to
// tell "nothing happened" from "no data".
func Copy(rep *replicate.Report, byTopic bool) map[string][]metrics.Value {
	type counts struct{ records, bytes, windows, done, gaps, fenced, retries, failed, leased, inDoubt int64 }
	by := map[string]*counts{}
	for _, r := range rep.Partitions {
		topic := ""
		if byTopic {
			topic = r.Topic
		}
		c := by[topic]
		if c == nil {
			c = &counts{}
			by[topic] = c
		}
		c.records += r.Copied
		c.bytes += r.Bytes
		c.retries += int64(r.Retries)
		switch r.Status {
		case replicate.StatusDone:
			c.windows++
			c.done++
		case replicate.StatusPartial:
			c.windows++
		case replicate.StatusFenced:
			c.fenced++
		case replicate.StatusFailed:
			c.failed++
		case replicate.StatusLeased:
			c.leased++
		case replicate.StatusInDoubt:
			c.inDoubt++
		}
		var ge *catchup.GapError
		if r.Gap != nil || errors.As(r.Err, &ge) {
			c.gaps++
		}
	}
	out := make(map[string][]metrics.Value, len(by))
	for topic, c := range by {
		out[topic] = []metrics.Value{
			{Name: metrics.Records, Unit: metrics.Count, Value: c.records},
			{Name: metrics.BytesCopied, Unit: metrics.Bytes, Value: c.bytes},
			{Name: metrics.Windows, Unit: metrics.Count, Value: c.windows},
			{Name: metrics.WindowsDone, Unit: metrics.Count, Value: c.done},
			{Name: metrics.Gaps, Unit: metrics.Count, Value: c.gaps},
			{Name: metrics.FencedCommits, Unit: metrics.Count, Value: c.fenced},
			{Name: metrics.Retries, Unit: metrics.Count, Value: c.retries},
			{Name: metrics.FailedPartitions, Unit: metrics.Count, Value: c.failed},
			{Name: metrics.LeasedPartitions, Unit: metrics.Count, Value: c.leased},
			{Name: metrics.InDoubtPartitions, Unit: metrics.Count, Value: c.inDoubt},
		}
	}
	return out
}

// Run returns the figures of rep that belong to the whole pipeline: its
// checkpoint store requests (storeRequests: the DynamoDB requests on
// Lambda), the re-sent produces, the replication waits, the config changes,
// whether ACL and config sync failed (Syncs) and the time figures it has
// (Times; job as there).
func Run(rep *replicate.Report, storeRequests int64, job bool) []metrics.Value {
	out := []metrics.Value{
		{Name: metrics.DynamoDBRequests, Unit: metrics.Count, Value: storeRequests},
		{Name: metrics.Resent, Unit: metrics.Count, Value: rep.Resent},
		{Name: metrics.ReplicationWaits, Unit: metrics.Count, Value: rep.ReplicationWaits},
		{Name: metrics.ReplicationWaited, Unit: metrics.Milliseconds, Value: rep.ReplicationWaited.Milliseconds()},
		{Name: metrics.TopicConfigChanges, Unit: metrics.Count, Value: int64(len(rep.ConfigChanges))},
	}
	synced, _ := Syncs(rep)
	out = append(out, synced...)
	return append(out, Times(rep, job)...)
}

// Syncs returns the figures of the syncs rep ran, ACLSyncFailed (topic
// ACL sync) and TopicConfigSyncFailed (topic config sync): 1 when the
// sync failed, 0 when it succeeded; and the names of those it did not run
// (off, or not due), which is no news of the target either way, so their
// figures are absent rather than 0.
func Syncs(rep *replicate.Report) (synced []metrics.Value, notRun []string) {
	var aclErr string
	if rep.ACLs != nil {
		aclErr = rep.ACLs.Error
	}
	for _, s := range []struct {
		name, err string
		ran       bool
	}{
		{metrics.ACLSyncFailed, aclErr, rep.ACLs != nil},
		{metrics.TopicConfigSyncFailed, rep.ConfigSyncError, rep.ConfigSynced},
	} {
		if !s.ran {
			notRun = append(notRun, s.name)
			continue
		}
		v := metrics.Value{Name: s.name, Unit: metrics.Count}
		if s.err != "" {
			v.Value = 1
		}
		synced = append(synced, v)
	}
	return synced, notRun
}

// Times returns the time figures of rep that it has, in whole seconds:
// replication latency, record age and retention headroom. A figure rep
// does not have (nothing copied, nothing left) is absent, not zero. A
// backfill job's (job) latency and record age go under names of their own,
// which no alarm watches; its RetentionHeadroom stays, since retention
// deletes a job's records as surely as the schedule's.
func Times(rep *replicate.Report, job bool) []metrics.Value {
	latency, age := metrics.ReplicationLatency, metrics.RecordAge
	if job {
		latency, age = metrics.BackfillLatency, metrics.BackfillRecordAge
	}
	var out []metrics.Value
	for _, f := range []struct {
		name   string
		figure func() (time.Duration, bool)
	}{
		{latency, rep.Latency},
		{age, rep.RecordAge},
		{metrics.RetentionHeadroom, rep.Headroom},
	} {
		if d, ok := f.figure(); ok {
			out = append(out, metrics.Value{Name: f.name, Unit: metrics.Seconds, Value: int64(d / time.Second)})
		}
	}
	return out
}

// Lag returns, by topic, the offsets rep left to copy up to the source end
// fixed at the start of the run (LagRecords). On Lambda the dispatcher
// reports lag from its own survey instead.
func Lag(rep *replicate.Report) map[string][]metrics.Value {
	lag := map[string]int64{}
	for _, r := range rep.Partitions {
		lag[r.Topic] += r.Lag()
	}
	out := make(map[string][]metrics.Value, len(lag))
	for topic, n := range lag {
		out[topic] = []metrics.Value{{Name: metrics.LagRecords, Unit: metrics.Count, Value: n}}
	}
	return out
}
