package dynamostore_test

import (
	"testing"
	"time"

	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/checkpoint/checkpointtest"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
)

// TestConformance runs the Store conformance suite against DynamoDB. The
// subtests share one table: each uses pipelines of its own.
func TestConformance(t *testing.T) {
	client := dynamotest.Client(t, dynamotest.Endpoint(t))
	table := dynamotest.Table(t, client)
	checkpointtest.Run(t, func(t *testing.T, now func() time.Time) checkpoint.Store {
		return dynamostore.New(client, table, dynamostore.WithNow(now))
	})
}
