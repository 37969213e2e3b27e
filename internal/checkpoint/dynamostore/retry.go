package dynamostore

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// Retry policy of the store's requests; NewRetryer says why.
const (
	DefaultMaxAttempts = 10
	DefaultMaxBackoff  = 5 * time.Second
	DefaultBaseDelay   = 25 * time.Millisecond
)

// NewRetryer returns the SDK's standard retryer as the store configures it,
// with opts applied last (tests shorten the backoff with them).
//
// It retries what the standard retryer retries: throttling
// (ProvisionedThroughputExceededException, ThrottlingException,
// RequestLimitExceeded...), HTTP 500/502/503/504, 429, and connection errors,
// never a failed condition or a cancelled context. Backoff is exponential
// with full jitter: 25 ms base for 5xx and connection errors (DynamoDB's SDK
// default), 1 s base for throttling (the SDK's fixed throttle base), capped at
// 5 s per wait. Up to 10 attempts, against the SDK's 4 for DynamoDB: a
// checkpoint write is worth waiting for, and the real bound is the caller's
// context deadline (a run's Lambda deadline minus its margin), which ends the
// retries whatever the count. The client-side retry quota is off
// (ratelimit.None): the store makes a few requests per partition per commit
// interval, so it cannot cause a retry storm, and a quota would fail commits
// early that the deadline would still have allowed.
func NewRetryer(opts ...func(*retry.StandardOptions)) aws.Retryer {
	return retry.NewStandard(append([]func(*retry.StandardOptions){func(o *retry.StandardOptions) {
		o.MaxAttempts = DefaultMaxAttempts
		o.MaxBackoff = DefaultMaxBackoff
		o.BaseDelay = DefaultBaseDelay
		o.RateLimiter = ratelimit.None
	}}, opts...)...)
}

// countRequests adds a middleware at the end of the Finalize step, after the
// SDK's retry middleware: it runs once per attempt, so Requests counts
// retries too.
func (s *Store) countRequests(stack *middleware.Stack) error {
	return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("CatchupCountRequests",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			s.requests.Add(1)
			return next.HandleFinalize(ctx, in)
		}), middleware.After)
}

// countAttempts returns a per-call option that counts the call's attempts
// into n, as countRequests counts the store's.
func countAttempts(n *int) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("CatchupCountAttempts",
				func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
					*n++
					return next.HandleFinalize(ctx, in)
				}), middleware.After)
		})
	}
}

// backoff is the wait before the attempt-th (from 1) request for the keys a
// batch left unprocessed: exponential from DefaultBaseDelay with full
// jitter, capped at DefaultMaxBackoff, as the retryer waits.
func backoff(attempt int) time.Duration {
	ceiling := min(DefaultBaseDelay<<min(attempt-1, 16), DefaultMaxBackoff)
	return rand.N(ceiling) + 1
}

// sleep waits d, or returns ctx's error if it ends first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
