package dynamostore_test

import (
	"bytes"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
)

// TestGapsTrimmedFromAnyLength: an item that already holds far more gaps
// than checkpoint.MaxGaps (written before the stores kept only the last
// ones) is cut to the last MaxGaps, the new gap last, by the next commit of
// a gap: in order, none lost from the tail. One REMOVE per extra index
// would outgrow DynamoDB's 4 KB expression limit from about 450 gaps.
func TestGapsTrimmedFromAnyLength(t *testing.T) {
	for _, held := range []int{checkpoint.MaxGaps, checkpoint.MaxGaps + 1, 1000} {
		t.Run(strconv.Itoa(held), func(t *testing.T) {
			ctx := t.Context()
			client := dynamotest.Client(t, dynamotest.Endpoint(t))
			table := dynamotest.Table(t, client)
			s := dynamostore.New(client, table)
			p := catchup.Partition{Topic: "orders", Partition: 3}
			l, _, err := s.Acquire(ctx, "pipe", p, "run-a", time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			// Gap i is [10i, 10i+5), in the layout doc.go gives.
			gaps := make([]types.AttributeValue, held)
			for i := range gaps {
				gaps[i] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
					"from": &types.AttributeValueMemberN{Value: strconv.Itoa(10 * i)},
					"to":   &types.AttributeValueMemberN{Value: strconv.Itoa(10*i + 5)},
					"at":   &types.AttributeValueMemberN{Value: "1700000000000"},
				}}
			}
			if _, err := client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
				TableName:                 aws.String(table),
				Key:                       map[string]types.AttributeValue{"pipeline": &types.AttributeValueMemberS{Value: "pipe"}, "partition": &types.AttributeValueMemberS{Value: "orders#0000000003"}},
				UpdateExpression:          aws.String("SET gaps = :g"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":g": &types.AttributeValueMemberL{Value: gaps}},
			}); err != nil {
				t.Fatalf("seed %d gaps: %v", held, err)
			}
			last := checkpoint.Gap{From: 10 * int64(held), To: 10*int64(held) + 5, At: time.UnixMilli(1_800_000_000_000)}
			if err := s.Commit(ctx, l, checkpoint.Commit{Next: last.To, TargetEnd: 0, Gap: &last}); err != nil {
				t.Fatal(err)
			}
			cps, err := s.Load(ctx, "pipe")
			if err != nil || len(cps) != 1 {
				t.Fatalf("Load = %v, %v", cps, err)
			}
			got := cps[0].Gaps
			if len(got) != checkpoint.MaxGaps {
				t.Fatalf("%d gaps held, then one committed: %d kept, want %d", held, len(got), checkpoint.MaxGaps)
			}
			for k, g := range got {
				i := held + 1 - checkpoint.MaxGaps + k // the index it had among all, the committed one last
				if g.From != 10*int64(i) || g.To != 10*int64(i)+5 {
					t.Fatalf("gap %d kept is [%d, %d), want [%d, %d): the last %d, in order", k, g.From, g.To, 10*i, 10*i+5, checkpoint.MaxGaps)
				}
			}
		})
	}
}

// TestRetryOfAppliedAcquire: an Acquire whose first attempt was applied but
// whose response was lost is retried by the SDK; the retry is recognised
// as the same request and returns the lease the first attempt took, at the
// epoch it took, rather than adding to the epoch again (which the engine
// would read as another run having held the partition in between).
func TestRetryOfAppliedAcquire(t *testing.T) {
	var lose atomic.Bool
	lose.Store(true)
	decide := func(_ int64, target string, body []byte) fault {
		if strings.HasSuffix(target, ".UpdateItem") && bytes.Contains(body, []byte("ADD #epoch")) && lose.CompareAndSwap(true, false) {
			return lost
		}
		return pass
	}
	s, direct, proxy := faultStores(t, decide, fastRetryer())
	ctx := t.Context()
	p := catchup.Partition{Topic: "orders", Partition: 0}
	l, cp, err := s.Acquire(ctx, "pipe", p, "run-a", time.Hour)
	if err != nil {
		t.Fatalf("Acquire whose first response was lost: %v", err)
	}
	if got := proxy.counts[lost].Load(); got != 1 {
		t.Fatalf("proxy lost %d responses, want 1", got)
	}
	cps, err := direct.Load(ctx, "pipe")
	if err != nil || len(cps) != 1 {
		t.Fatalf("Load = %v, %v", cps, err)
	}
	if l.Epoch != 1 || cp.Epoch != 1 || cps[0].Epoch != 1 || l.Owner != "run-a" || cps[0].Owner != "run-a" {
		t.Errorf("after a retried first Acquire: lease epoch %d, returned checkpoint epoch %d, stored epoch %d, owner %q; want 1, 1, 1, run-a",
			l.Epoch, cp.Epoch, cps[0].Epoch, cps[0].Owner)
	}
	if err := s.Commit(ctx, l, checkpoint.Commit{Next: 5, TargetEnd: 5}); err != nil {
		t.Errorf("Commit under the lease a retried Acquire returned: %v", err)
	}
}
