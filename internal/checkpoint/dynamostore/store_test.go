package dynamostore_test

import (
	"context"
	"errors"
	"maps"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// clock is a fake clock that tests move by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// newStore returns a store on a fresh table of the test server.
func newStore(t *testing.T, opts ...dynamostore.Option) *dynamostore.Store {
	t.Helper()
	client := dynamotest.Client(t, dynamotest.Endpoint(t))
	return dynamostore.New(client, dynamotest.Table(t, client), opts...)
}

func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	s := newStore(t, dynamostore.WithNow(clk.Now))
	p := catchup.Partition{Topic: "orders", Partition: 3}

	l, cp, err := s.Acquire(ctx, "pipe", p, "run-a", time.Minute)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	want := checkpoint.Checkpoint{Partition: p, TargetEnd: -1, Owner: "run-a", Epoch: 1,
		Expires: clk.Now().Add(time.Minute), Updated: clk.Now()}
	if diff := cmp.Diff(want, cp); diff != "" {
		t.Errorf("Acquire checkpoint (-want +got):\n%s", diff)
	}
	if _, _, err := s.Acquire(ctx, "pipe", p, "run-b", time.Minute); !errors.Is(err, checkpoint.ErrLeased) {
		t.Errorf("Acquire by another owner = %v, want ErrLeased", err)
	}
	gap := checkpoint.Gap{From: 5, To: 9, At: clk.Now()}
	if err := s.Commit(ctx, l, checkpoint.Commit{Next: 10, TargetEnd: 7, Records: 4, Bytes: 400, Gap: &gap, Error: "boom"}); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if err := s.Commit(ctx, l, checkpoint.Commit{Next: math.MaxInt64, TargetEnd: math.MaxInt64 - 1, Records: 1, Bytes: 1}); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if err := s.Commit(ctx, l, checkpoint.Commit{Next: 9}); !errors.Is(err, checkpoint.ErrRegress) {
		t.Errorf("Commit backwards = %v, want ErrRegress", err)
	}
	cps, err := s.Load(ctx, "pipe")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want = checkpoint.Checkpoint{Partition: p, Exists: true, Next: math.MaxInt64, TargetEnd: math.MaxInt64 - 1,
		Records: 5, Bytes: 401, Commits: 2, Owner: "run-a", Epoch: 1, Expires: clk.Now().Add(time.Minute),
		Gaps: []checkpoint.Gap{gap}, Updated: clk.Now()}
	if diff := cmp.Diff([]checkpoint.Checkpoint{want}, cps); diff != "" {
		t.Errorf("Load (-want +got):\n%s", diff)
	}

	clk.Advance(2 * time.Minute)
	l2, _, err := s.Acquire(ctx, "pipe", p, "run-b", time.Minute)
	if err != nil {
		t.Fatalf("Acquire after expiry: %v", err)
	}
	if l2.Epoch != 2 {
		t.Errorf("epoch after takeover = %d, want 2", l2.Epoch)
	}
	if err := s.Commit(ctx, l, checkpoint.Commit{Next: math.MaxInt64}); !errors.Is(err, checkpoint.ErrFenced) {
		t.Errorf("Commit by the old owner = %v, want ErrFenced", err)
	}
	if _, err := s.Renew(ctx, l, time.Minute); !errors.Is(err, checkpoint.ErrFenced) {
		t.Errorf("Renew by the old owner = %v, want ErrFenced", err)
	}
	if err := s.Release(ctx, l); !errors.Is(err, checkpoint.ErrFenced) {
		t.Errorf("Release by the old owner = %v, want ErrFenced", err)
	}
	if err := s.Reset(ctx, "pipe", p, 0); !errors.Is(err, checkpoint.ErrLeased) {
		t.Errorf("Reset under a live lease = %v, want ErrLeased", err)
	}
	if err := s.Release(ctx, l2); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := s.Release(ctx, l2); !errors.Is(err, checkpoint.ErrFenced) {
		t.Errorf("second Release = %v, want ErrFenced", err)
	}
	if err := s.Reset(ctx, "pipe", p, 42); err != nil {
		t.Fatalf("Reset: %v", err)
	}
	cps, err = s.Load(ctx, "pipe")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want = checkpoint.Checkpoint{Partition: p, Exists: true, Next: 42, TargetEnd: -1,
		Records: 5, Bytes: 401, Commits: 2, Epoch: 2, Gaps: []checkpoint.Gap{gap}, Updated: clk.Now()}
	if diff := cmp.Diff([]checkpoint.Checkpoint{want}, cps); diff != "" {
		t.Errorf("Load after Reset (-want +got):\n%s", diff)
	}
	t.Logf("requests: %d", s.Requests())
}

// TestRecordVerificationItem checks that RecordVerification is one request
// that writes the verification attribute and nothing else, on a new item and
// on one a run holds.
func TestRecordVerificationItem(t *testing.T) {
	ctx := t.Context()
	clk := newClock()
	client := dynamotest.Client(t, dynamotest.Endpoint(t))
	table := dynamotest.Table(t, client)
	s := dynamostore.New(client, table, dynamostore.WithNow(clk.Now))
	attrs := func(p string) []string {
		t.Helper()
		out, err := client.GetItem(ctx, &dynamodb.GetItemInput{
			TableName:      aws.String(table),
			Key:            map[string]types.AttributeValue{"pipeline": &types.AttributeValueMemberS{Value: "pipe"}, "partition": &types.AttributeValueMemberS{Value: p}},
			ConsistentRead: aws.Bool(true),
		})
		if err != nil {
			t.Fatalf("GetItem(%s): %v", p, err)
		}
		return slices.Sorted(maps.Keys(out.Item))
	}
	v := checkpoint.Verification{At: clk.Now(), From: 0, To: 10, Source: 10, Matched: 10}

	before := s.Requests()
	if err := s.RecordVerification(ctx, "pipe", catchup.Partition{Topic: "orders", Partition: 1}, v); err != nil {
		t.Fatalf("RecordVerification of a new partition: %v", err)
	}
	if got := s.Requests() - before; got != 1 {
		t.Errorf("RecordVerification made %d requests, want 1", got)
	}
	if got, want := attrs("orders#0000000001"), []string{"partition", "pipeline", "verification"}; !slices.Equal(got, want) {
		t.Errorf("item created by RecordVerification has attributes %v, want %v", got, want)
	}

	p := catchup.Partition{Topic: "orders", Partition: 0}
	l, _, err := s.Acquire(ctx, "pipe", p, "run-a", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, l, checkpoint.Commit{Next: 10, TargetEnd: 10}); err != nil {
		t.Fatal(err)
	}
	held := attrs("orders#0000000000")
	if err := s.RecordVerification(ctx, "pipe", p, v); err != nil {
		t.Fatalf("RecordVerification of a leased partition: %v", err)
	}
	if got, want := attrs("orders#0000000000"), slices.Sorted(slices.Values(append(held, "verification"))); !slices.Equal(got, want) {
		t.Errorf("RecordVerification of a leased item: attributes %v, want %v", got, want)
	}
}
