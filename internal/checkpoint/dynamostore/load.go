package dynamostore

// Reading checkpoints: a whole pipeline by Query, a shard by BatchGetItem.

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
)

// Load returns every checkpoint of pipeline, ordered by partition, with
// consistent Query pages (one request per 1 MB of items).
func (s *Store) Load(ctx context.Context, pipeline string) ([]checkpoint.Checkpoint, error) {
	var out []checkpoint.Checkpoint
	p := dynamodb.NewQueryPaginator(s.client, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("#pipeline = :pipeline"),
		ExpressionAttributeNames:  names("#pipeline"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pipeline": str(pipeline)},
		ConsistentRead:            aws.Bool(true),
		ReturnConsumedCapacity:    types.ReturnConsumedCapacityTotal,
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx, s.options)
		if rnf := (*types.ResourceNotFoundException)(nil); errors.As(err, &rnf) {
			return nil, fmt.Errorf("load %s: DynamoDB table %s does not exist (in this region and account): "+
				"create it with `catchup init-store -c CONFIG` (or deploy the stack that creates it): %w", pipeline, s.table, err)
		}
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", pipeline, err)
		}
		s.countReads(int64(page.ScannedCount), deref(page.ConsumedCapacity)...)
		for _, item := range page.Items {
			if isBegin(item) {
				continue // a topic's begin (begin.go), not a checkpoint
			}
			c, err := decode(item)
			if err != nil {
				return nil, fmt.Errorf("load %s: %w", pipeline, err)
			}
			out = append(out, c)
		}
	}
	// The sort key already orders legal topic names; this covers the rest.
	slices.SortFunc(out, func(a, b checkpoint.Checkpoint) int { return a.Partition.Compare(b.Partition) })
	return out, nil
}

// batchGetMax is the most keys one BatchGetItem may ask for.
const batchGetMax = 100

// LoadPartitions returns the checkpoints of those of ps that have one, with
// consistent BatchGetItem requests of up to 100 keys: ceil(len(ps)/100)
// requests and one read unit per item of up to 4 KB, whatever the size of
// the pipeline. Keys that DynamoDB leaves unprocessed (throttling, or the
// 16 MB response limit) are asked for again with backoff, up to
// DefaultMaxAttempts rounds per chunk or until ctx ends.
//
// It does not Query sort key ranges: a Query reads every item of its range
// at one unit per 4 KB (about 13 checkpoints per unit), which is cheaper
// for a run of adjacent partitions, but a dispatcher's shard is cut by
// urgency and lag (fanout.Split), so its partitions are scattered over
// topics: one Query per topic touched, reading the partitions between them
// too. BatchGetItem's cost is bounded by the shard alone.
func (s *Store) LoadPartitions(ctx context.Context, pipeline string, ps []catchup.Partition) ([]checkpoint.Checkpoint, error) {
	fail := func(err error) ([]checkpoint.Checkpoint, error) {
		return nil, fmt.Errorf("load %d partitions of %s: %w", len(ps), pipeline, err)
	}
	ps = checkpoint.Distinct(ps)
	keys := make([]map[string]types.AttributeValue, len(ps))
	for i, p := range ps {
		sk, err := sortKey(p)
		if err != nil {
			return fail(err)
		}
		keys[i] = key(pipeline, sk)
	}
	out := make([]checkpoint.Checkpoint, 0, len(ps))
	for chunk := range slices.Chunk(keys, batchGetMax) {
		items, err := s.batchGet(ctx, chunk)
		if err != nil {
			return fail(err)
		}
		for _, item := range items {
			c, err := decode(item)
			if err != nil {
				return fail(err)
			}
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b checkpoint.Checkpoint) int { return a.Partition.Compare(b.Partition) })
	return out, nil
}

// batchGet returns the items of keys (at most batchGetMax) that exist, read
// consistently, asking again for the keys DynamoDB leaves unprocessed.
func (s *Store) batchGet(ctx context.Context, keys []map[string]types.AttributeValue) ([]map[string]types.AttributeValue, error) {
	var items []map[string]types.AttributeValue
	for attempt := 0; len(keys) > 0; attempt++ {
		if attempt == DefaultMaxAttempts {
			return nil, fmt.Errorf("batch get: %d keys still unprocessed after %d attempts", len(keys), attempt)
		}
		if attempt > 0 {
			if err := sleep(ctx, backoff(attempt)); err != nil {
				return nil, fmt.Errorf("batch get: %d keys unprocessed: %w", len(keys), err)
			}
		}
		out, err := s.client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{
			RequestItems: map[string]types.KeysAndAttributes{
				s.table: {Keys: keys, ConsistentRead: aws.Bool(true)},
			},
			ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
		}, s.options)
		if err != nil {
			return nil, fmt.Errorf("batch get: %w", err)
		}
		got := out.Responses[s.table]
		s.countReads(int64(len(got)), out.ConsumedCapacity...)
		items = append(items, got...)
		keys = out.UnprocessedKeys[s.table].Keys
	}
	return items, nil
}
