package dynamostore_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
)

func TestCreateTable(t *testing.T) {
	client := dynamotest.Client(t, dynamotest.Endpoint(t))
	table := dynamotest.Table(t, client) // created once already
	if err := dynamostore.CreateTable(t.Context(), client, table); err != nil {
		t.Fatalf("CreateTable of an existing table: %v", err)
	}
	out, err := client.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatalf("DescribeTable: %v", err)
	}
	if out.Table.TableStatus != types.TableStatusActive {
		t.Errorf("table status %s, want ACTIVE", out.Table.TableStatus)
	}
	if bm := out.Table.BillingModeSummary; bm == nil || bm.BillingMode != types.BillingModePayPerRequest {
		t.Errorf("billing mode %+v, want PAY_PER_REQUEST", bm)
	}

	other := dynamotest.TableName(t)
	_, err = client.CreateTable(t.Context(), &dynamodb.CreateTableInput{
		TableName:            aws.String(other),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	if err != nil {
		t.Fatalf("CreateTable %s: %v", other, err)
	}
	t.Cleanup(func() {
		_, _ = client.DeleteTable(t.Context(), &dynamodb.DeleteTableInput{TableName: aws.String(other)})
	})
	if err := dynamostore.CreateTable(t.Context(), client, other); err == nil {
		t.Errorf("CreateTable over a table with another key schema: no error")
	}
}
