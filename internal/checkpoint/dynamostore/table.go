package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// CreateTable creates table with the store's key schema (pipeline S hash,
// partition S range) and on-demand billing, and waits until it is ACTIVE. A
// table that already exists is fine if its key schema is the store's; one
// with another key schema is an error. It is what `catchup init-store` runs.
func CreateTable(ctx context.Context, client *dynamodb.Client, table string) error {
	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: aws.String(table),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(attrPipeline), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(attrPartition), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(attrPipeline), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(attrPartition), KeyType: types.KeyTypeRange},
		},
		BillingMode: types.BillingModePayPerRequest,
	})
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("create table %s: %w", table, err)
	}
	out, err := dynamodb.NewTableExistsWaiter(client).WaitForOutput(ctx,
		&dynamodb.DescribeTableInput{TableName: aws.String(table)}, 5*time.Minute,
		func(o *dynamodb.TableExistsWaiterOptions) {
			o.MinDelay, o.MaxDelay = 100*time.Millisecond, 5*time.Second
		})
	if err != nil {
		return fmt.Errorf("create table %s: wait until active: %w", table, err)
	}
	if err := checkKeySchema(out.Table); err != nil {
		return fmt.Errorf("create table %s: the table exists with another schema: %w", table, err)
	}
	return nil
}

func checkKeySchema(t *types.TableDescription) error {
	want := map[string]types.KeyType{attrPipeline: types.KeyTypeHash, attrPartition: types.KeyTypeRange}
	if len(t.KeySchema) != len(want) {
		return fmt.Errorf("key schema has %d attributes, want %s (hash) and %s (range)", len(t.KeySchema), attrPipeline, attrPartition)
	}
	for _, k := range t.KeySchema {
		if want[aws.ToString(k.AttributeName)] != k.KeyType {
			return fmt.Errorf("key attribute %s is %s, want %s (hash) and %s (range)", aws.ToString(k.AttributeName), k.KeyType, attrPipeline, attrPartition)
		}
	}
	for _, d := range t.AttributeDefinitions {
		if _, ok := want[aws.ToString(d.AttributeName)]; ok && d.AttributeType != types.ScalarAttributeTypeS {
			return fmt.Errorf("key attribute %s has type %s, want S", aws.ToString(d.AttributeName), d.AttributeType)
		}
	}
	return nil
}
