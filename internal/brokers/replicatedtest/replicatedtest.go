// Package replicatedtest drives the replicated target of test/kafka/cluster.sh
// (CATCHUP_KAFKA_REPLICATED=1) for the tests of internal/brokers and
// internal/crashtest: three brokers, nodes 1 to 3, and a dedicated KRaft
// controller; replication factor 3, min.insync.replicas 2,
// replica.lag.time.max.ms 6 s, the controller's broker.session.timeout.ms
// 20 s. It stalls a broker (SIGSTOP), creates topics that broker 1 leads,
// waits for the replicas to be in sync, and counts what a copy holds.
package replicatedtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Environment variables of the env file of cluster.sh.
const (
	EnvBrokers = "CATCHUP_IT_REPLICATED"      // the three PLAINTEXT listeners, comma separated
	EnvData    = "CATCHUP_IT_REPLICATED_DATA" // the folder of the node folders broker-1..3, controller
)

// Target is the replicated target of the environment.
type Target struct {
	Brokers string // the three PLAINTEXT listeners, comma separated
	Data    string // the folder of the node folders broker-1..3, controller
}

// FromEnv returns the target the environment names, and false (with what is
// missing) when it names none.
func FromEnv() (Target, string, bool) {
	r := Target{Brokers: os.Getenv(EnvBrokers), Data: os.Getenv(EnvData)}
	if r.Brokers == "" || r.Data == "" {
		return r, EnvBrokers + " or " + EnvData + " is not set (CATCHUP_KAFKA_REPLICATED=1 for cluster.sh up)", false
	}
	return r, "", true
}

// Seeds returns the listeners as a list.
func (r Target) Seeds() []string { return strings.Split(r.Brokers, ",") }

// Node returns the data folder (a start.sh DIR) of broker id.
func (r Target) Node(id int32) string { return filepath.Join(r.Data, fmt.Sprintf("broker-%d", id)) }

// PID returns the process id of broker id.
func (r Target) PID(t testing.TB, id int32) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.Node(id), "pid"))
	if err != nil {
		t.Fatalf("broker %d: %v", id, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("broker %d: pid file: %v", id, err)
	}
	return pid
}

// Stall SIGSTOPs broker id for d (or until the test ends), in the
// background; the returned channel closes once the broker got SIGCONT.
func (r Target) Stall(t testing.TB, id int32, d time.Duration) <-chan struct{} {
	t.Helper()
	resume := r.Pause(t, id)
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(d)
		resume()
	}()
	return done
}

// Pause SIGSTOPs broker id until the returned function (safe to call more
// than once, from any goroutine) or the end of the test sends it SIGCONT.
func (r Target) Pause(t testing.TB, id int32) (resume func()) {
	t.Helper()
	pid := r.PID(t, id)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP broker %d (pid %d): %v", id, pid, err)
	}
	var once atomic.Bool
	resume = func() {
		if once.CompareAndSwap(false, true) {
			if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
				t.Errorf("SIGCONT broker %d (pid %d): %v", id, pid, err)
			}
		}
	}
	t.Cleanup(resume)
	return resume
}

// Client returns a franz-go client of the target, closed when t ends.
func (r Target) Client(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	// A short metadata age: a topic just created, or a broker just
	// restarted, is seen within a fraction of a second, not kgo's 5s.
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(r.Seeds()...), kgo.MetadataMinAge(100 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// CreateAssigned creates topic with n partitions, each on brokers 1, 2, 3 in
// that order (broker 1 leads them all, 2 and 3 follow), and waits until every
// partition has its three replicas in sync.
func (r Target) CreateAssigned(ctx context.Context, t testing.TB, topic string, n int32) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	for p := range n {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = p, []int32{1, 2, 3}
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	}
	req.Topics = append(req.Topics, rt)
	res, err := req.RequestWith(ctx, r.Client(t))
	if err != nil {
		t.Fatalf("create topic %s on %s: %v", topic, r.Brokers, err)
	}
	for _, tr := range res.Topics {
		if err := kerr.ErrorForCode(tr.ErrorCode); err != nil {
			msg := ""
			if tr.ErrorMessage != nil {
				msg = *tr.ErrorMessage
			}
			t.Fatalf("create topic %s on %s: %v (%s)", topic, r.Brokers, err, msg)
		}
	}
	r.WaitInSync(ctx, t, topic, n, 1)
}

// WaitInSync waits until every partition of topic has all three replicas in
// its ISR and, unless leader is 0, that leader.
func (r Target) WaitInSync(ctx context.Context, t testing.TB, topic string, n, leader int32) {
	t.Helper()
	cl := r.Client(t)
	var last string
	for {
		req := kmsg.NewPtrMetadataRequest()
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, mt)
		res, err := req.RequestWith(ctx, cl)
		if err == nil && len(res.Topics) == 1 && len(res.Topics[0].Partitions) == int(n) {
			ok := true
			last = ""
			for _, p := range res.Topics[0].Partitions {
				if p.ErrorCode != 0 || (leader != 0 && p.Leader != leader) || len(p.ISR) != 3 {
					ok = false
					last += fmt.Sprintf(" %d: leader %d isr %v err %d;", p.Partition, p.Leader, p.ISR, p.ErrorCode)
				}
			}
			if ok {
				return
			}
		} else if err != nil {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s on the replicated target never got all replicas in sync:%s", topic, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Exactness is what a consumer of its own finds in a copy: of the source
// records it should hold, how many are missing, held more than once, and
// held (first copies) out of source order; Records counts all it holds.
type Exactness struct {
	Records, Lost, Duplicated, OutOfOrder int
}

// Add adds o to e.
func (e *Exactness) Add(o Exactness) {
	e.Records += o.Records
	e.Lost += o.Lost
	e.Duplicated += o.Duplicated
	e.OutOfOrder += o.OutOfOrder
}

// Exact reports whether nothing is lost, duplicated or out of order.
func (e Exactness) Exact() bool { return e.Lost == 0 && e.Duplicated == 0 && e.OutOfOrder == 0 }

func (e Exactness) String() string {
	return fmt.Sprintf("%d records, %d duplicated, %d lost, %d out of order", e.Records, e.Duplicated, e.Lost, e.OutOfOrder)
}

// Count counts one partition's copy: keys are, in target order, the source
// position (0-based) of each record the target holds, -1 for one that is no
// source record; want is how many source records it should hold.
func Count(keys []int64, want int64) Exactness {
	var e Exactness
	seen := make(map[int64]bool, len(keys))
	last := int64(-1)
	for _, k := range keys {
		e.Records++
		if k < 0 {
			continue
		}
		if seen[k] {
			e.Duplicated++
			continue
		}
		seen[k] = true
		if k < last {
			e.OutOfOrder++
		}
		last = max(last, k)
	}
	for k := range want {
		if !seen[k] {
			e.Lost++
		}
	}
	return e
}

// Isolation is an isolation level a copy is read back with, and its name.
type Isolation struct {
	Name  string
	Level kgo.IsolationLevel
}

// Isolations returns both isolation levels: a copy must be exact under each.
func Isolations() []Isolation {
	return []Isolation{{"read_uncommitted", kgo.ReadUncommitted()}, {"read_committed", kgo.ReadCommitted()}}
}

// LogEnd returns the log end offset of the leader of partition p of topic
// (cl: a client of the target, or of its leader only, kgo.Client.Broker):
// OffsetForLeaderEpoch for its current leader epoch (replica -1, as any
// client may send it). What it holds above the high watermark is appended
// but not visible to consumers yet.
func LogEnd(ctx context.Context, cl kmsg.Requestor, topic string, p int32) (int64, error) {
	meta := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	meta.Topics = append(meta.Topics, mt)
	mres, err := meta.RequestWith(ctx, cl)
	if err != nil {
		return 0, fmt.Errorf("metadata of %s: %w", topic, err)
	}
	epoch := int32(-1)
	for _, tp := range mres.Topics {
		for _, pp := range tp.Partitions {
			if pp.Partition == p {
				epoch = pp.LeaderEpoch
			}
		}
	}
	if epoch < 0 {
		return 0, fmt.Errorf("metadata of %s/%d: no leader epoch", topic, p)
	}
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.ReplicaID = -1
	rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
	rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = p, epoch, epoch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	res, err := req.RequestWith(ctx, cl)
	if err != nil {
		return 0, fmt.Errorf("offset for leader epoch of %s/%d: %w", topic, p, err)
	}
	for _, tp := range res.Topics {
		for _, pp := range tp.Partitions {
			if pp.Partition == p {
				if err := kerr.ErrorForCode(pp.ErrorCode); err != nil {
					return 0, fmt.Errorf("offset for leader epoch of %s/%d: %w", topic, p, err)
				}
				return pp.EndOffset, nil
			}
		}
	}
	return 0, fmt.Errorf("offset for leader epoch of %s/%d: no answer", topic, p)
}
