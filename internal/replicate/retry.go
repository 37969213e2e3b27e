package replicate

import (
	"context"
	"errors"
	"time"

	"github.com/kafka-catchup/catchup/internal/backoff"
	"github.com/kafka-catchup/catchup/internal/catchup"
)

// maxRetryBackoff bounds the wait between two attempts (Options.RetryBackoff
// doubles up to it).
const maxRetryBackoff = 5 * time.Second

// retrier is the one retry rule of the engine: an operation that failed in
// a retriable way is tried again, after a backoff that doubles from
// Options.RetryBackoff, until Options.Retries retries in a row were spent.
// Its caller decides what is retriable and what happens between attempts;
// partitionCopy.retry is the common case.
type retrier struct {
	base  time.Duration
	limit int // retries allowed in a row
	n     int // retries granted in a row
}

// retrier returns a retrier with the engine's options and no failure yet.
func (e *Engine) retrier() retrier {
	return retrier{base: e.o.RetryBackoff, limit: e.o.Retries}
}

// again counts a failure and reports whether it may be retried; false when
// limit retries in a row were granted already.
func (r *retrier) again() bool {
	if r.n >= r.limit {
		return false
	}
	r.n++
	return true
}

// wait waits the backoff of the retry again granted last, or until ctx is
// done; it reports whether the wait passed.
func (r *retrier) wait(ctx context.Context) bool {
	return backoff.Sleep(ctx, backoff.Delay(r.n, r.base, maxRetryBackoff))
}

// reset starts the count over: the operation made progress.
func (r *retrier) reset() { r.n = 0 }

// retry calls fn until it succeeds, fails with an error that does not wrap
// catchup.ErrRetriable, or has failed Retries+1 times in a row. Each retry
// counts in Result.Retries.
func (pc *partitionCopy) retry(ctx context.Context, fn func() error) error {
	r := pc.e.retrier()
	for {
		err := fn()
		if err == nil || !errors.Is(err, catchup.ErrRetriable) || !r.again() {
			return err
		}
		pc.res.Retries++
		if !r.wait(ctx) {
			return errors.Join(err, ctx.Err())
		}
	}
}
