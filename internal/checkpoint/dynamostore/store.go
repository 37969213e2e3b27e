package dynamostore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
)

var _ checkpoint.Store = (*Store)(nil)

// Store is a checkpoint.Store over one DynamoDB table (see CreateTable for
// its schema). It is safe for concurrent use by goroutines and by processes:
// every write is one UpdateItem (conditional but for RecordVerification's),
// so DynamoDB serialises them.
type Store struct {
	client   *dynamodb.Client
	table    string
	now      func() time.Time
	retryer  aws.Retryer
	requests atomic.Int64
	items    atomic.Int64 // items read by Load and LoadPartitions
	units    atomic.Int64 // read capacity units they consumed, in thousandths
}

// Option configures a Store.
type Option func(*Store)

// WithNow sets the clock that leases and update times are measured with.
// The default is time.Now. Leases compare times written by different
// processes, so production clocks must be roughly in sync (NTP; AWS Lambda's
// are).
func WithNow(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// WithRetryer replaces the retryer the store sends its requests through. The
// default is NewRetryer().
func WithRetryer(r aws.Retryer) Option { return func(s *Store) { s.retryer = r } }

// New returns a Store on table, which must exist (CreateTable). The client's
// own retryer and middleware still apply to other callers; the store's
// requests use the store's retryer and are counted by Requests.
func New(client *dynamodb.Client, table string, opts ...Option) *Store {
	s := &Store{client: client, table: table, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	if s.retryer == nil {
		s.retryer = NewRetryer()
	}
	return s
}

// Requests returns the number of HTTP requests the store has sent to
// DynamoDB, every retry included.
func (s *Store) Requests() int64 { return s.requests.Load() }

// Reads returns the checkpoints that Load and LoadPartitions have read
// (items scanned, which a Query bills even where no filter drops them) and
// the read capacity units DynamoDB reported for them.
func (s *Store) Reads() (items int64, units float64) {
	return s.items.Load(), float64(s.units.Load()) / 1000
}

// countReads adds n items and the capacity cs consumed to Reads.
func (s *Store) countReads(n int64, cs ...types.ConsumedCapacity) {
	s.items.Add(n)
	for _, c := range cs {
		if c.CapacityUnits != nil {
			s.units.Add(int64(math.Round(*c.CapacityUnits * 1000)))
		}
	}
}

// deref returns *c alone, or nothing if c is nil.
func deref(c *types.ConsumedCapacity) []types.ConsumedCapacity {
	if c == nil {
		return nil
	}
	return []types.ConsumedCapacity{*c}
}

// Close does nothing: the client belongs to the caller.
func (s *Store) Close() error { return nil }

// options is applied to every request of the store.
func (s *Store) options(o *dynamodb.Options) {
	o.Retryer = s.retryer
	o.APIOptions = append(o.APIOptions, s.countRequests)
}

// Acquire takes the lease on p for owner until now+ttl if it is free,
// expired, or already owner's, and increments the epoch; otherwise it returns
// an error wrapping checkpoint.ErrLeased. A partition never seen before gets
// an item with next 0, target_end -1 and exists false.
func (s *Store) Acquire(ctx context.Context, pipeline string, p catchup.Partition, owner string, ttl time.Duration) (checkpoint.Lease, checkpoint.Checkpoint, error) {
	fail := func(err error) (checkpoint.Lease, checkpoint.Checkpoint, error) {
		return checkpoint.Lease{}, checkpoint.Checkpoint{}, fmt.Errorf("acquire %s %s for %q: %w", pipeline, p, owner, err)
	}
	if owner == "" || ttl <= 0 {
		return fail(fmt.Errorf("owner %q and ttl %s: need an owner and a positive ttl", owner, ttl))
	}
	sk, err := sortKey(p)
	if err != nil {
		return fail(err)
	}
	now := s.now()
	// last_op tells a repeat of this request (its first attempt applied,
	// its response lost) from another run: the repeat would add to the
	// epoch a second time, which the engine reads as another run's turn.
	op, attempts := rand.Text(), 0
	cond := "(attribute_not_exists(#owner) OR #lease_expires < :now OR #owner = :owner) " +
		"AND (attribute_not_exists(#last_op) OR #last_op <> :op)"
	update := "SET #owner = :owner, #lease_expires = :expires, #updated = :now, #last_op = :op, " +
		"#next = if_not_exists(#next, :zero), #target_end = if_not_exists(#target_end, :unknown) " +
		"ADD #epoch :one"
	out, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                s.tableName(),
		Key:                      key(pipeline, sk),
		ConditionExpression:      aws.String(cond),
		UpdateExpression:         aws.String(update),
		ExpressionAttributeNames: names(cond, update),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":owner":   str(owner),
			":now":     millis(now),
			":expires": millis(now.Add(ttl)),
			":zero":    num(0),
			":unknown": num(-1),
			":one":     num(1),
			":op":      str(op),
		},
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}, s.options, countAttempts(&attempts))
	attrs := map[string]types.AttributeValue(nil)
	if ccf := (*types.ConditionalCheckFailedException)(nil); errors.As(err, &ccf) {
		item := ccf.Item
		if item == nil && attempts > 1 {
			// Only a retry can be refused by its own first attempt; DynamoDB
			// returns the item with the failure, dynalite does not.
			if item, err = s.oldItem(ctx, ccf, pipeline, sk); err != nil {
				return fail(err)
			}
		}
		old, derr := decode(item)
		switch {
		case item != nil && derr == nil && lastOp(item) == op:
			attrs = item // this very request, applied by an earlier attempt
		case item != nil && derr == nil:
			return fail(&checkpoint.LeasedError{Owner: old.Owner, Expires: old.Expires})
		default:
			return fail(checkpoint.ErrLeased)
		}
	} else if err != nil {
		return fail(err)
	} else {
		attrs = out.Attributes
	}
	c, err := decode(attrs)
	if err != nil {
		return fail(err)
	}
	l := checkpoint.Lease{Pipeline: pipeline, Partition: p, Owner: c.Owner, Epoch: c.Epoch, Expires: c.Expires}
	return l, c, nil
}

// Renew extends l to now+ttl if l.Owner still holds it with l.Epoch (even
// expired, if nobody took it); otherwise it returns an error wrapping
// checkpoint.ErrFenced.
func (s *Store) Renew(ctx context.Context, l checkpoint.Lease, ttl time.Duration) (checkpoint.Lease, error) {
	fail := func(err error) (checkpoint.Lease, error) {
		return checkpoint.Lease{}, fmt.Errorf("renew %s %s for %q epoch %d: %w", l.Pipeline, l.Partition, l.Owner, l.Epoch, err)
	}
	if ttl <= 0 {
		return fail(fmt.Errorf("ttl %s: need a positive ttl", ttl))
	}
	if l.Owner == "" {
		return fail(fmt.Errorf("lease without an owner: %w", checkpoint.ErrFenced))
	}
	sk, err := sortKey(l.Partition)
	if err != nil {
		return fail(err)
	}
	now := s.now()
	expires := now.Add(ttl)
	cond := "#owner = :owner AND #epoch = :epoch"
	update := "SET #lease_expires = :expires, #updated = :now"
	_, err = s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                s.tableName(),
		Key:                      key(l.Pipeline, sk),
		ConditionExpression:      aws.String(cond),
		UpdateExpression:         aws.String(update),
		ExpressionAttributeNames: names(cond, update),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":owner":   str(l.Owner),
			":epoch":   num(l.Epoch),
			":expires": millis(expires),
			":now":     millis(now),
		},
	}, s.options)
	if isConditionFailed(err) {
		return fail(checkpoint.ErrFenced)
	}
	if err != nil {
		return fail(err)
	}
	l.Expires = truncMillis(expires)
	return l, nil
}

// Release frees l if l.Owner still holds it with l.Epoch, keeping the epoch;
// otherwise it returns an error wrapping checkpoint.ErrFenced.
func (s *Store) Release(ctx context.Context, l checkpoint.Lease) error {
	fail := func(err error) error {
		return fmt.Errorf("release %s %s for %q epoch %d: %w", l.Pipeline, l.Partition, l.Owner, l.Epoch, err)
	}
	if l.Owner == "" {
		return fail(fmt.Errorf("lease without an owner: %w", checkpoint.ErrFenced))
	}
	sk, err := sortKey(l.Partition)
	if err != nil {
		return fail(err)
	}
	op := rand.Text()
	cond := "#owner = :owner AND #epoch = :epoch"
	update := "SET #updated = :now, #last_op = :op REMOVE #owner, #lease_expires"
	_, err = s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                s.tableName(),
		Key:                      key(l.Pipeline, sk),
		ConditionExpression:      aws.String(cond),
		UpdateExpression:         aws.String(update),
		ExpressionAttributeNames: names(cond, update),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":owner": str(l.Owner),
			":epoch": num(l.Epoch),
			":now":   millis(s.now()),
			":op":    str(op),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}, s.options)
	if ccf := (*types.ConditionalCheckFailedException)(nil); errors.As(err, &ccf) {
		old, err := s.oldItem(ctx, ccf, l.Pipeline, sk)
		if err != nil {
			return fail(fmt.Errorf("condition failed, then %w", err))
		}
		if lastOp(old) == op {
			return nil // a retry of this release, whose first attempt was applied
		}
		return fail(checkpoint.ErrFenced)
	}
	if err != nil {
		return fail(err)
	}
	return nil
}

// Commit writes c under l if l.Owner still holds the lease with l.Epoch
// (expired but untaken still commits); otherwise it returns an error wrapping
// checkpoint.ErrFenced. A c.Next below the stored next returns an error
// wrapping checkpoint.ErrRegress. Either way nothing changes. If ctx ends
// first, the error wraps ctx.Err(): see doc.go for what that means.
func (s *Store) Commit(ctx context.Context, l checkpoint.Lease, c checkpoint.Commit) error {
	fail := func(err error) error {
		return fmt.Errorf("commit %s %s at %d for %q epoch %d: %w", l.Pipeline, l.Partition, c.Next, l.Owner, l.Epoch, err)
	}
	if l.Owner == "" {
		return fail(fmt.Errorf("lease without an owner: %w", checkpoint.ErrFenced))
	}
	sk, err := sortKey(l.Partition)
	if err != nil {
		return fail(err)
	}
	op := rand.Text()
	now := s.now()
	values := map[string]types.AttributeValue{
		":owner":     str(l.Owner),
		":epoch":     num(l.Epoch),
		":next":      num(c.Next),
		":op":        str(op),
		":true":      &types.AttributeValueMemberBOOL{Value: true},
		":targetEnd": num(c.TargetEnd),
		":now":       millis(now),
		":records":   num(c.Records),
		":bytes":     num(c.Bytes),
		":one":       num(1),
	}
	cond := "#owner = :owner AND #epoch = :epoch AND (attribute_not_exists(#next) OR #next <= :next) " +
		"AND (attribute_not_exists(#last_op) OR #last_op <> :op)"
	set := "SET #next = :next, #exists = :true, #target_end = :targetEnd, #updated = :now, #last_op = :op"
	var removes []string
	if c.Error != "" {
		set += ", #last_error = :error"
		values[":error"] = str(c.Error)
	} else {
		removes = append(removes, "#last_error")
	}
	if c.Release {
		removes = append(removes, "#owner", "#lease_expires")
	}
	remove := ""
	if len(removes) > 0 {
		remove = " REMOVE " + strings.Join(removes, ", ")
	}
	if c.Start != nil {
		set += ", #start = if_not_exists(#start, :start)"
		values[":start"] = num(*c.Start)
	}
	if c.Gap != nil {
		set += ", #gaps = list_append(if_not_exists(#gaps, :noGaps), :gap)"
		values[":noGaps"] = &types.AttributeValueMemberL{Value: []types.AttributeValue{}}
		values[":gap"] = &types.AttributeValueMemberL{Value: []types.AttributeValue{gapValue(*c.Gap)}}
	}
	update := set + remove + " ADD #records :records, #bytes :bytes, #commits :one"
	in := &dynamodb.UpdateItemInput{
		TableName:                           s.tableName(),
		Key:                                 key(l.Pipeline, sk),
		ConditionExpression:                 aws.String(cond),
		UpdateExpression:                    aws.String(update),
		ExpressionAttributeNames:            names(cond, update),
		ExpressionAttributeValues:           values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	if c.Gap != nil {
		in.ReturnValues = types.ReturnValueUpdatedNew // the gaps, for trimGaps
	}
	out, err := s.client.UpdateItem(ctx, in, s.options)
	if err == nil && c.Gap != nil {
		s.trimGaps(ctx, l.Pipeline, sk, out.Attributes)
	}
	if ccf := (*types.ConditionalCheckFailedException)(nil); errors.As(err, &ccf) {
		old, err := s.oldItem(ctx, ccf, l.Pipeline, sk)
		if err != nil {
			return fail(fmt.Errorf("condition failed, then %w", err))
		}
		if err := classifyCommit(old, l, c, op); err != nil {
			return fail(err)
		}
		return nil
	}
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w: %w", ctxErr, err)
		}
		return fail(err)
	}
	return nil
}

// trimGaps drops the oldest gaps of the item at sk past
// checkpoint.MaxGaps, given the attributes a Commit that appended one
// returned. An update expression cannot append to a list and remove from
// it at once, so this is a second UpdateItem, sent only when the list is
// too long: it sets the list to its last MaxGaps (one REMOVE per index
// would outgrow an expression's 4 KB on an item that holds hundreds), and
// only if the list still has the length seen (a retry, or another run's
// commit since, leaves it to the next gap). It is best effort, tried once:
// the commit it follows has succeeded, and a list left long is trimmed by
// the next commit of a gap.
func (s *Store) trimGaps(ctx context.Context, pipeline, sk string, attrs map[string]types.AttributeValue) {
	l, ok := attrs[attrGaps].(*types.AttributeValueMemberL)
	if !ok || len(l.Value) <= checkpoint.MaxGaps {
		return
	}
	n := len(l.Value)
	cond := "size(#gaps) = :n"
	update := "SET #gaps = :kept"
	_, _ = s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                s.tableName(),
		Key:                      key(pipeline, sk),
		ConditionExpression:      aws.String(cond),
		UpdateExpression:         aws.String(update),
		ExpressionAttributeNames: names(cond, update),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":n":    num(int64(n)),
			":kept": &types.AttributeValueMemberL{Value: l.Value[n-checkpoint.MaxGaps:]},
		},
	}, s.options, func(o *dynamodb.Options) { o.Retryer = retry.AddWithMaxAttempts(o.Retryer, 1) })
}

// classifyCommit tells why a Commit's condition failed, from the item as it
// was (nil if absent). It returns nil when the item already holds this very
// commit: the SDK retried a request whose first attempt was applied.
func classifyCommit(old map[string]types.AttributeValue, l checkpoint.Lease, c checkpoint.Commit, op string) error {
	if old == nil {
		return fmt.Errorf("no lease was ever taken: %w", checkpoint.ErrFenced)
	}
	if lastOp(old) == op {
		return nil
	}
	cp, err := decode(old)
	if err != nil {
		return err
	}
	switch {
	case cp.Owner != l.Owner || cp.Epoch != l.Epoch:
		return fmt.Errorf("lease held by %q epoch %d: %w", cp.Owner, cp.Epoch, checkpoint.ErrFenced)
	case cp.Next > c.Next:
		return fmt.Errorf("stored next is %d: %w", cp.Next, checkpoint.ErrRegress)
	default:
		return fmt.Errorf("condition failed on an item that satisfies it (owner %q epoch %d next %d)", cp.Owner, cp.Epoch, cp.Next)
	}
}

// Reset sets p's next offset to next and forgets its target end offset if no
// live lease is held on it; otherwise it returns an error wrapping
// checkpoint.ErrLeased. An expired owner is removed, which fences it.
func (s *Store) Reset(ctx context.Context, pipeline string, p catchup.Partition, next int64) error {
	fail := func(err error) error {
		return fmt.Errorf("reset %s %s to %d: %w", pipeline, p, next, err)
	}
	sk, err := sortKey(p)
	if err != nil {
		return fail(err)
	}
	cond := "attribute_not_exists(#owner) OR #lease_expires < :now"
	update := "SET #next = :next, #exists = :true, #target_end = :unknown, #updated = :now REMOVE #owner, #lease_expires"
	_, err = s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                s.tableName(),
		Key:                      key(pipeline, sk),
		ConditionExpression:      aws.String(cond),
		UpdateExpression:         aws.String(update),
		ExpressionAttributeNames: names(cond, update),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":now":     millis(s.now()),
			":next":    num(next),
			":true":    &types.AttributeValueMemberBOOL{Value: true},
			":unknown": num(-1),
		},
	}, s.options)
	if isConditionFailed(err) {
		return fail(checkpoint.ErrLeased)
	}
	if err != nil {
		return fail(err)
	}
	return nil
}

// RecordVerification stores v in p's verification attribute with one
// UpdateItem that sets nothing else and has no condition, so it neither
// needs nor disturbs a lease: a run committing p at the same time is
// serialised with it by DynamoDB and keeps its lease and epoch. An absent
// item is created with the key and v only.
func (s *Store) RecordVerification(ctx context.Context, pipeline string, p catchup.Partition, v checkpoint.Verification) error {
	fail := func(err error) error {
		return fmt.Errorf("record verification of %s %s: %w", pipeline, p, err)
	}
	sk, err := sortKey(p)
	if err != nil {
		return fail(err)
	}
	update := "SET #verification = :verification"
	_, err = s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 s.tableName(),
		Key:                       key(pipeline, sk),
		UpdateExpression:          aws.String(update),
		ExpressionAttributeNames:  names(update),
		ExpressionAttributeValues: map[string]types.AttributeValue{":verification": verificationValue(v)},
	}, s.options)
	if err != nil {
		return fail(err)
	}
	return nil
}

// oldItem is the item a failed condition was evaluated against: the one
// DynamoDB returned with the failure, or else (dynalite returns none) a
// consistent read of it. It is nil if the item does not exist.
func (s *Store) oldItem(ctx context.Context, ccf *types.ConditionalCheckFailedException, pipeline, sk string) (map[string]types.AttributeValue, error) {
	if ccf.Item != nil {
		return ccf.Item, nil
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      s.tableName(),
		Key:            key(pipeline, sk),
		ConsistentRead: aws.Bool(true),
	}, s.options)
	if err != nil {
		return nil, fmt.Errorf("get item: %w", err)
	}
	return out.Item, nil
}

func (s *Store) tableName() *string { return aws.String(s.table) }

func lastOp(item map[string]types.AttributeValue) string {
	op, _ := getStr(item, attrLastOp)
	return op
}

func isConditionFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}
