package kafkago_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/kafkago"
)

// TestIdempotentProduce: what an idempotent Target makes of the faults of
// TestProduceFaults that leave the outcome unknown, and of the errors only an
// idempotent producer gets. kfake keeps producer ids and sequences as a
// broker does, so a re-sent batch it already appended is not appended again.
func TestIdempotentProduce(t *testing.T) {
	recs := copyRecords(5, time.UnixMilli(1_700_000_000_000))
	p := catchup.Partition{Topic: "t"}
	for _, tc := range []struct {
		name      string
		fault     func(c *kfake.Cluster)
		wantErr   error // nil: every record acknowledged
		written   int64 // records in the partition afterwards
		resent    int64 // requests sent again
		producers int32 // InitProducerId requests, two records produced after the fault included
	}{
		// Appended, then REQUEST_TIMED_OUT (the follower stalled): sent
		// again, identical; the leader answers with the first copy's offset.
		{"timed out after the append", func(c *kfake.Cluster) {
			c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "t", Err: kerr.RequestTimedOut})
		}, nil, 5 + 2, 1, 1},
		{"not enough replicas after the append", func(c *kfake.Cluster) {
			c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "t", Err: kerr.NotEnoughReplicasAfterAppend})
		}, nil, 5 + 2, 1, 1},
		// The broker lost the producer (state expired, a new leader without
		// it): nothing appended by this request, but an earlier one of unknown
		// outcome may have been, so the engine reconciles (ErrUnknownOutcome,
		// checkpoint untouched); the next request gets a new producer id and
		// starts at sequence 0.
		{"unknown producer id", func(c *kfake.Cluster) {
			c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "t", Err: kerr.UnknownProducerID})
		}, catchup.ErrUnknownOutcome, 0 + 2, 0, 2},
		{"out of order sequence", func(c *kfake.Cluster) {
			c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "t", Err: kerr.OutOfOrderSequenceNumber})
		}, catchup.ErrUnknownOutcome, 0 + 2, 0, 2},
		{"producer fenced", func(c *kfake.Cluster) {
			c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "t", Err: kerr.ProducerFenced})
		}, catchup.ErrUnknownOutcome, 0 + 2, 0, 2},
		{"invalid producer epoch", func(c *kfake.Cluster) {
			c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "t", Err: kerr.InvalidProducerEpoch})
		}, catchup.ErrUnknownOutcome, 0 + 2, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			c := newCluster(t, kfake.SeedTopics(1, "t"))
			tg := newTarget(t, c, config.Producer{})
			inits := countRequests(c, kmsg.InitProducerID)
			tc.fault(c)
			acked, end, err := produceAll(ctx, tg, p, recs)
			switch {
			case tc.wantErr == nil && (err != nil || acked != len(recs) || end != int64(len(recs))):
				t.Fatalf("Produce = %d, %d, %v; want %d, %d, nil", acked, end, err, len(recs), len(recs))
			case tc.wantErr != nil && (!errors.Is(err, tc.wantErr) || acked != 0):
				t.Fatalf("Produce = %d, %d, %v; want 0 and %v", acked, end, err, tc.wantErr)
			}
			// The next records: a good sequence (or a new producer id).
			if _, _, err := produceAll(ctx, tg, p, recs[:2]); err != nil {
				t.Fatalf("Produce after the fault: %v", err)
			}
			ends, lerr := tg.EndOffsets(ctx, []catchup.Partition{p})
			if lerr != nil || ends[p] != tc.written {
				t.Errorf("the partition holds %d records (%v), want %d", ends[p], lerr, tc.written)
			}
			if got := tg.Resent(); got != tc.resent {
				t.Errorf("Resent() = %d, want %d", got, tc.resent)
			}
			if got := inits.Load(); got != tc.producers {
				t.Errorf("%d InitProducerId requests, want %d", got, tc.producers)
			}
		})
	}
}

// TestIdempotenceOff: producer.idempotent false and acks other than all
// write batches without a producer id, as before.
func TestIdempotenceOff(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    config.Producer
	}{
		{"idempotent false", config.Producer{Idempotent: new(false)}},
		{"acks leader", config.Producer{Acks: "leader"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			c := newCluster(t, kfake.SeedTopics(1, "t"))
			tg := newTarget(t, c, tc.p)
			inits := countRequests(c, kmsg.InitProducerID)
			if _, _, err := produceAll(ctx, tg, catchup.Partition{Topic: "t"}, copyRecords(3, time.UnixMilli(1))); err != nil {
				t.Fatal(err)
			}
			if got := inits.Load(); got != 0 {
				t.Errorf("%d InitProducerId requests, want 0", got)
			}
		})
	}
}

// produceAnswered produces three records to t/0 of a cluster that answers
// the first InitProducerId with code, and returns the error and the target.
func produceAnswered(t *testing.T, code *kerr.Error) (*kafkago.Target, error) {
	t.Helper()
	ctx := testContext(t)
	c := newCluster(t, kfake.SeedTopics(1, "t"))
	tg := newTarget(t, c, config.Producer{})
	c.ControlKey(int16(kmsg.InitProducerID), func(req kmsg.Request) (kmsg.Response, error, bool) {
		res := req.(*kmsg.InitProducerIDRequest).ResponseKind().(*kmsg.InitProducerIDResponse)
		res.ErrorCode = code.Code
		return res, nil, true
	})
	_, _, err := produceAll(ctx, tg, catchup.Partition{Topic: "t"}, copyRecords(3, time.UnixMilli(1)))
	return tg, err
}

// TestIdempotenceRefused: a cluster that refuses InitProducerId (no
// IDEMPOTENT_WRITE) fails the produce with the fix, not retriable.
func TestIdempotenceRefused(t *testing.T) {
	_, err := produceAnswered(t, kerr.ClusterAuthorizationFailed)
	if err == nil || errors.Is(err, catchup.ErrRetriable) || errors.Is(err, catchup.ErrUnknownOutcome) {
		t.Fatalf("Produce error %v: want a plain error", err)
	}
	for _, want := range []string{"IDEMPOTENT_WRITE", "producer.idempotent: false", "t/0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Produce error %q lacks %q", err, want)
		}
	}
}

// TestIdempotenceNotReady: a broker still getting producer ids from its
// controller answers InitProducerId with code 14, which kafka-go describes
// as a consumer group's; the produce is retried, and the warning says what
// the code means here.
func TestIdempotenceNotReady(t *testing.T) {
	tg, err := produceAnswered(t, kerr.CoordinatorLoadInProgress)
	if !errors.Is(err, catchup.ErrRetriable) || !errors.Is(err, kafka.GroupLoadInProgress) {
		t.Fatalf("Produce error %v: want retriable, code 14", err)
	}
	for _, want := range []string{"no producer ids to give yet", "COORDINATOR_LOAD_IN_PROGRESS", `"dst"`, "t/0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Produce error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "offset fetch") {
		t.Errorf("Produce error %q describes the code as a consumer group coordinator's", err)
	}
	doc, rerr := os.ReadFile(filepath.Join("..", "..", "docs", "troubleshooting.md"))
	if rerr != nil {
		t.Fatal(rerr)
	}
	_, msg, _ := strings.Cut(err.Error(), `"dst": `)
	if form, _, _ := strings.Cut(msg, " ("); !strings.Contains(string(doc), form) {
		t.Errorf("docs/troubleshooting.md has no row for %q", form)
	}
	// Once the broker has its block (kfake's control answered once), the
	// same Target produces.
	if acked, _, err := produceAll(testContext(t), tg, catchup.Partition{Topic: "t"}, copyRecords(3, time.UnixMilli(1))); err != nil || acked != 3 {
		t.Errorf("Produce after the ids came = %d, %v; want 3 records", acked, err)
	}
}

// TestIdempotentUnknownAfterResends: a batch still of unknown outcome after
// its re-sends goes to the engine (ErrUnknownOutcome), which reconciles and
// goes on with other records; those must get a new producer id, or a leader
// holding the first batch takes the next, as long, for its duplicate and
// drops it (seen on a 3-broker target with both followers stalled: 20
// records lost).
func TestIdempotentUnknownAfterResends(t *testing.T) {
	ctx := testContext(t)
	c := newCluster(t, kfake.SeedTopics(1, "t"))
	tg := newTarget(t, c, config.Producer{})
	p := catchup.Partition{Topic: "t"}
	c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "t", Err: kerr.RequestTimedOut, Count: 4})
	recs := copyRecords(10, time.UnixMilli(1_700_000_000_000))
	if _, _, err := produceAll(ctx, tg, p, recs[:5]); !errors.Is(err, catchup.ErrUnknownOutcome) {
		t.Fatalf("Produce error %v, want ErrUnknownOutcome", err)
	}
	// Reconciliation finds the 5 records in the target: the engine goes on.
	acked, end, err := produceAll(ctx, tg, p, recs[5:])
	if err != nil || acked != 5 {
		t.Fatalf("Produce of the next records = %d, %d, %v; want 5 records acknowledged", acked, end, err)
	}
	ends, err := tg.EndOffsets(ctx, []catchup.Partition{p})
	if err != nil || ends[p] != 10 {
		t.Errorf("the partition holds %d records (%v), want 10: the next records were taken for duplicates", ends[p], err)
	}
}
