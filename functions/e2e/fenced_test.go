package e2e

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
	"github.com/kafka-catchup/catchup/internal/lambdaenv"
)

// TestOvertakenWorkerIsGranted does in-process, with the store a worker
// uses, what a worker does when another run took its expired lease: its
// commit is fenced, and the store reads the item the failed condition met
// (GetItem, since dynalite returns none with the failure). The calls are
// held to the replicate function's role like those of the bootstraps.
func TestOvertakenWorkerIsGranted(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	endpoint := dynamotest.Endpoint(t)
	table := dynamotest.Table(t, dynamotest.Client(t, endpoint))
	rec := recordInProcess(t, "ReplicateFunction", map[string]string{lambdaenv.EnvTable: table})
	client := dynamotest.Client(t, endpoint)
	recorded := dynamodb.New(client.Options(), func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, rec.Register) })
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	store := dynamostore.New(recorded, table, dynamostore.WithNow(func() time.Time { return now }))
	p := catchup.Partition{Topic: "orders", Partition: 0}
	mine, _, err := store.Acquire(ctx, "p", p, "worker-a", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute) // worker-a ran past its lease
	if _, _, err := store.Acquire(ctx, "p", p, "worker-b", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := store.Commit(ctx, mine, checkpoint.Commit{Next: 1, TargetEnd: 1, Records: 1}); !errors.Is(err, checkpoint.ErrFenced) {
		t.Fatalf("commit of the overtaken lease = %v, want ErrFenced", err)
	}
	var ops []string
	for _, c := range rec.Calls() {
		ops = append(ops, c.Operation)
	}
	if want := []string{"UpdateItem", "UpdateItem", "UpdateItem", "GetItem"}; !slices.Equal(ops, want) {
		t.Errorf("recorded %v, want %v", ops, want)
	}
}
