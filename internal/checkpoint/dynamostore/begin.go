package dynamostore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/kafka-catchup/catchup/internal/checkpoint"
)

// Begin items: one per pipeline and topic (checkpoint.Begin), in an item
// collection of their own per pipeline:
//
//	pipeline       S  partition key: "!begins#" + the pipeline name
//	partition      S  sort key: "!begin#" + topic, "!begin#orders"
//	begin_at       N  Begin.At, unix milliseconds
//	begin_offsets  B  Begin.Offsets: one signed varint per partition, in order;
//	                  absent when there are none
//
// Apart from the pipeline's checkpoints, so that Load (and a catchup from
// before begins, which would take one for a malformed checkpoint and fail:
// during a deploy old and new Lambda versions share the table) never reads
// them, and LoadBegins reads them all with one Query. The sort key cannot
// equal a checkpoint's ('!' is in no Kafka topic name), so Load still
// skips one it meets (a pipeline named "!begins#p" would).
const (
	beginsPrefix      = "!begins#"
	beginPrefix       = "!begin#"
	attrBeginAt       = "begin_at"
	attrBeginOffsets  = "begin_offsets"
	maxBeginItemBytes = 390 << 10 // DynamoDB's item limit is 400 KB
	beginsCondition   = "#pipeline = :pipeline"
)

// isBegin reports whether item is a begin, not a checkpoint.
func isBegin(item map[string]types.AttributeValue) bool {
	sk, _ := getStr(item, attrPartition)
	return strings.HasPrefix(sk, beginPrefix)
}

// beginItem returns the item of the begin b of topic in pipeline.
func beginItem(pipeline, topic string, b checkpoint.Begin) (map[string]types.AttributeValue, error) {
	var offs []byte
	for _, o := range b.Offsets {
		offs = binary.AppendVarint(offs, o)
	}
	if len(offs) > maxBeginItemBytes {
		return nil, fmt.Errorf("the offsets of %d partitions take %d bytes, more than a DynamoDB item holds", len(b.Offsets), len(offs))
	}
	item := key(beginsPrefix+pipeline, beginPrefix+topic)
	item[attrBeginAt] = millis(b.At)
	if len(offs) > 0 { // dynalite refuses an empty binary value: absent reads as none
		item[attrBeginOffsets] = &types.AttributeValueMemberB{Value: offs}
	}
	return item, nil
}

// decodeBegin returns the topic and the begin of a begin item.
func decodeBegin(item map[string]types.AttributeValue) (string, checkpoint.Begin, error) {
	sk, err := getStr(item, attrPartition)
	if err != nil {
		return "", checkpoint.Begin{}, err
	}
	topic := strings.TrimPrefix(sk, beginPrefix)
	at, err := getNum(item, attrBeginAt, 0)
	if err != nil {
		return "", checkpoint.Begin{}, fmt.Errorf("item %s: %w", sk, err)
	}
	var buf []byte
	if av, ok := item[attrBeginOffsets]; ok {
		v, ok := av.(*types.AttributeValueMemberB)
		if !ok {
			return "", checkpoint.Begin{}, fmt.Errorf("item %s: %w: %s is not binary", sk, errItem, attrBeginOffsets)
		}
		buf = v.Value
	}
	b := checkpoint.Begin{At: fromMillis(at), Offsets: []int64{}}
	for len(buf) > 0 {
		o, n := binary.Varint(buf)
		if n <= 0 {
			return "", checkpoint.Begin{}, fmt.Errorf("item %s: %w: %s holds a bad varint", sk, errItem, attrBeginOffsets)
		}
		b.Offsets = append(b.Offsets, o)
		buf = buf[n:]
	}
	if err := b.Validate(); err != nil {
		return "", checkpoint.Begin{}, fmt.Errorf("item %s: %w: %w", sk, errItem, err)
	}
	return topic, b, nil
}

// PutBegin implements checkpoint.Store: one PutItem on the condition that
// the topic has no begin; when it has one, the begin DynamoDB returns with
// the failed condition, or (dynalite returns none) one consistent GetItem of
// it.
func (s *Store) PutBegin(ctx context.Context, pipeline, topic string, b checkpoint.Begin) (checkpoint.Begin, error) {
	fail := func(err error) (checkpoint.Begin, error) {
		return checkpoint.Begin{}, fmt.Errorf("put begin of %s %s: %w", pipeline, topic, err)
	}
	if topic == "" {
		return fail(errors.New("empty topic"))
	}
	if err := b.Validate(); err != nil {
		return fail(err)
	}
	item, err := beginItem(pipeline, topic, b)
	if err != nil {
		return fail(err)
	}
	cond := "attribute_not_exists(#partition)"
	_, err = s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                           s.tableName(),
		Item:                                item,
		ConditionExpression:                 aws.String(cond),
		ExpressionAttributeNames:            names(cond),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}, s.options)
	if ccf := (*types.ConditionalCheckFailedException)(nil); errors.As(err, &ccf) {
		old, err := s.oldItem(ctx, ccf, beginsPrefix+pipeline, beginPrefix+topic)
		if err != nil {
			return fail(err)
		}
		if old == nil {
			return fail(errors.New("the begin stored before this one is gone: a begin is never removed"))
		}
		_, won, err := decodeBegin(old)
		if err != nil {
			return fail(err)
		}
		return won, nil
	}
	if err != nil {
		return fail(err)
	}
	_, stored, err := decodeBegin(item)
	if err != nil {
		return fail(err)
	}
	return stored, nil
}

// LoadBegins implements checkpoint.Store: one consistent Query of the
// pipeline's begin items (a page per 1 MB: one for any pipeline of a few
// hundred topics), whatever the number of topics asked for.
func (s *Store) LoadBegins(ctx context.Context, pipeline string, topics []string) (map[string]checkpoint.Begin, error) {
	out := map[string]checkpoint.Begin{}
	if len(topics) == 0 {
		return out, nil
	}
	want := make(map[string]bool, len(topics))
	for _, t := range topics {
		want[t] = true
	}
	p := dynamodb.NewQueryPaginator(s.client, &dynamodb.QueryInput{
		TableName:                 s.tableName(),
		KeyConditionExpression:    aws.String(beginsCondition),
		ExpressionAttributeNames:  names(beginsCondition),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pipeline": str(beginsPrefix + pipeline)},
		ConsistentRead:            aws.Bool(true),
		ReturnConsumedCapacity:    types.ReturnConsumedCapacityTotal,
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx, s.options)
		if err != nil {
			return nil, fmt.Errorf("load begins of %s: %w", pipeline, err)
		}
		s.countReads(int64(page.ScannedCount), deref(page.ConsumedCapacity)...)
		for _, item := range page.Items {
			topic, b, err := decodeBegin(item)
			if err != nil {
				return nil, fmt.Errorf("load begins of %s: %w", pipeline, err)
			}
			if want[topic] {
				out[topic] = b
			}
		}
	}
	return out, nil
}
