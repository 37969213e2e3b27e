package pipeline_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// requestCounts counts every request c receives, per API key (named as
// kmsg names it), from now on; the func it returns takes the counts since
// its last call.
func requestCounts(c *kfake.Cluster) func() map[string]int64 {
	var mu sync.Mutex
	counts := map[string]int64{}
	c.Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		mu.Lock()
		counts[kmsg.NameForKey(req.Key())]++
		mu.Unlock()
		return nil, nil, false // observe only
	})
	return func() map[string]int64 {
		mu.Lock()
		defer mu.Unlock()
		out := counts
		counts = map[string]int64{}
		return out
	}
}

// produceBatches counts the partitions' batches the produce requests c
// receives carry: a request carries one for each of several partitions its
// broker leads.
func produceBatches(c *kfake.Cluster) *atomic.Int64 {
	var n atomic.Int64
	c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		for _, rt := range req.(*kmsg.ProduceRequest).Topics {
			n.Add(int64(len(rt.Partitions)))
		}
		return nil, nil, false // observe only
	})
	return &n
}

func formatCounts(m map[string]int64) string {
	var s []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		s = append(s, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(s, " ")
}

// TestReplicationWaitCostsNothingOnTheHappyPath pins that a clean run and
// its resume ask the target for no leader log end (OffsetForLeaderEpoch) of
// their own per partition: the replication wait runs only before a
// reconciliation of a takeover or of an unknown outcome. The first run,
// whose partitions have no checkpoint and an empty target, asks the
// leaders' log ends once per target broker at plan time (an end of 0 may
// be a high watermark held back by a stalled follower). A run that takes
// over an unreleased lease asks twice per partition taken over: its log end
// must read the same takeover_settle apart (the target holds still at once
// here). The counts per API key are logged: the requests per window.
func TestReplicationWaitCostsNothingOnTheHappyPath(t *testing.T) {
	const partitions = 4
	r := newLeaseRig(t, partitions, 200, "    takeover_settle: 10ms\n")
	count := requestCounts(r.dst)
	store := r.newStore(time.Now)
	run := func(owner string) *replicate.Report {
		t.Helper()
		rep, err := r.open(t, owner, store, time.Now).Engine.Run(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	for _, step := range []struct {
		name    string
		prepare func()
		ofle    int64 // OffsetForLeaderEpoch requests
	}{
		{"first run", nil, int64(len(r.dst.ListenAddrs()))},
		{"resume, nothing new", nil, 0},
		{"takeover of an unreleased lease", func() {
			for p := range int32(partitions) {
				if _, _, err := store.Acquire(t.Context(), "leases", catchup.Partition{Topic: "events", Partition: p}, "dead", 20*time.Minute); err != nil {
					t.Fatal(err)
				}
			}
		}, 2 * partitions},
	} {
		if step.prepare != nil {
			step.prepare()
		}
		count() // from here
		owner := "run"
		if step.ofle > 0 {
			owner = "dead" // the same owner, restarted: it takes its leases back at once
		}
		rep := run(owner)
		got := count()
		t.Logf("%s: %d partitions, target requests: %s", step.name, len(rep.Partitions), formatCounts(got))
		if got["OffsetForLeaderEpoch"] != step.ofle {
			t.Errorf("%s: %d OffsetForLeaderEpoch requests; want %d", step.name, got["OffsetForLeaderEpoch"], step.ofle)
		}
		for _, p := range rep.Partitions {
			if p.Status != replicate.StatusDone {
				t.Errorf("%s: %s: status %s: %v", step.name, p.Partition, p.Status, p.Err)
			}
		}
	}
	r.checkExact(t)
}

// TestProduceRequestsAreFull pins that a copy fills its produce batches
// across fetches: here a fetch holds about 16 KiB of records, 78 of them,
// and a batch 15, so a copy that sent each fetch's records on their own
// would end each fetch with a short batch. Each costs the target's brokers
// a batch's work, and a round trip when it goes alone. (A short batch's
// records are at most 15 of about 210 bytes, within the quarter of
// fetch_bytes that the copy holds back.) The requests carry them, a
// batch for each of the partitions waiting for the broker: no more
// requests than batches.
func TestProduceRequestsAreFull(t *testing.T) {
	const partitions, perPartition = 4, 1000
	r := newLeaseRig(t, partitions, perPartition, "")
	r.file.Pipelines[0].Producer.BatchRecords = 15
	r.file.Pipelines[0].FetchBytes = 16 << 10
	count := requestCounts(r.dst)
	srcCount := requestCounts(r.src)
	batchCount := produceBatches(r.dst)
	rep, err := r.open(t, "run", r.newStore(time.Now), time.Now).Engine.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := count()
	batches := batchCount.Load()
	t.Logf("target requests: %s (%d produce batches); source: %s", formatCounts(got), batches, formatCounts(srcCount()))
	for _, p := range rep.Partitions {
		if p.Status != replicate.StatusDone {
			t.Errorf("%s: status %s: %v", p.Partition, p.Status, p.Err)
		}
	}
	perBatch := r.file.Pipelines[0].Producer.BatchRecords
	if want := int64(partitions * ((perPartition + perBatch - 1) / perBatch)); batches != want {
		t.Errorf("%d produce batches for %d records in %d partitions at %d records a batch; want %d",
			batches, partitions*perPartition, partitions, perBatch, want)
	}
	if got["Produce"] < 1 || got["Produce"] > batches {
		t.Errorf("%d produce requests for %d batches", got["Produce"], batches)
	}
	r.checkExact(t)
}
