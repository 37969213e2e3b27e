package dynamostore_test

import (
	"fmt"
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

// TestBeginRequests pins the DynamoDB requests of begins: LoadBegins of a
// 1,000-partition pipeline (50 topics of 20 partitions) is one request,
// whatever the number of topics asked for; PutBegin is one, and two when it
// loses (dynalite returns no old item with the failed condition); and Load
// reads the checkpoints alone.
func TestBeginRequests(t *testing.T) {
	ctx := t.Context()
	clk := newClock()
	client := dynamotest.Client(t, dynamotest.Endpoint(t))
	table := dynamotest.Table(t, client)
	s := dynamostore.New(client, table, dynamostore.WithNow(clk.Now))
	const topics, partitions = 50, 20
	var names []string
	for i := range topics {
		names = append(names, fmt.Sprintf("topic-%02d", i))
	}
	offs := make([]int64, partitions)
	for i := range offs {
		offs[i] = 1 << 40
	}
	for _, name := range names {
		before := s.Requests()
		if _, err := s.PutBegin(ctx, "pipe", name, checkpoint.Begin{At: clk.Now(), Offsets: offs}); err != nil {
			t.Fatal(err)
		}
		if n := s.Requests() - before; n != 1 {
			t.Fatalf("PutBegin of a new begin: %d requests, want 1", n)
		}
	}
	before := s.Requests()
	if _, err := s.PutBegin(ctx, "pipe", names[0], checkpoint.Begin{At: clk.Now(), Offsets: []int64{1}}); err != nil {
		t.Fatal(err)
	}
	if n := s.Requests() - before; n != 2 {
		t.Errorf("PutBegin that loses: %d requests, want 2 (PutItem, GetItem)", n)
	}
	before = s.Requests()
	got, err := s.LoadBegins(ctx, "pipe", names)
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Requests() - before; n != 1 || len(got) != topics {
		t.Errorf("LoadBegins of %d topics of %d partitions: %d requests and %d begins; want 1 and %d", topics, partitions, n, len(got), topics)
	}
	_, _, err = s.Acquire(ctx, "pipe", catchup.Partition{Topic: names[0], Partition: 0}, "run", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	cps, err := s.Load(ctx, "pipe")
	if err != nil {
		t.Fatal(err)
	}
	if len(cps) != 1 {
		t.Errorf("Load of a pipeline with %d begins and 1 checkpoint: %d checkpoints, want 1", topics, len(cps))
	}
	// The Query of a catchup from before begins (Load's) meets none: old
	// and new versions share a table during a deploy.
	out, err := client.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(table),
		KeyConditionExpression:    aws.String("#p = :p"),
		ExpressionAttributeNames:  map[string]string{"#p": "pipeline"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "pipe"}},
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Count != 1 {
		t.Errorf("the pipeline's item collection holds %d items, want its 1 checkpoint alone", out.Count)
	}
}
