package replicate

import (
	"context"
	"errors"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// retry calls fn until it succeeds, fails with an error that does not wrap
// catchup.ErrRetriable, or has failed Retries+1 times in a row.
func (pc *partitionCopy) retry(ctx context.Context, fn func() error) error {
	for attempt := 0; ; attempt++ {
		err := fn()
		if err == nil || !errors.Is(err, catchup.ErrRetriable) || attempt >= pc.e.o.Retries {
			return err
		}
		pc.res.Retries++
		if !sleep(ctx, backoff(pc.e.o.RetryBackoff, attempt+1)) {
			return errors.Join(err, ctx.Err())
		}
	}
}

// backoff is the wait before retry n (from 1): base doubled each time, at most 5s.
func backoff(base time.Duration, n int) time.Duration {
	d := base << min(n-1, 16)
	return min(d, 5*time.Second)
}

// sleep waits d or until ctx is done; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
