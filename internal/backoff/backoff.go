// Package backoff is how catchup waits between two attempts of something
// that failed: a delay that doubles with each failure in a row, up to a
// limit, and a wait that ends early when its context does. The copy
// engine's retries (internal/replicate) and the continuous mode's schedule
// (internal/loop) both use it. It imports nothing of catchup's.
//
// It is written here rather than taken from github.com/cenkalti/backoff:
// that library's Retry owns the loop (an operation closure with a tries
// limit), while the callers here decide between attempts (reconcile a
// produce of unknown outcome, reset the count when part of a batch was
// acknowledged, hand the count to another goroutine), its default
// ExponentialBackOff adds jitter and an elapsed-time limit the engine does
// not have, and its timer is not injectable in v5; the two functions below
// are all the callers share.
package backoff

import (
	"context"
	"time"
)

// Delay is the wait before retry n (n ≥ 1), after n failures in a row: base
// doubled n-1 times, at most limit. It does not overflow, whatever n.
func Delay(n int, base, limit time.Duration) time.Duration {
	d := base
	for i := 1; i < n && d < limit; i++ {
		if d > limit/2 {
			return limit // doubling it would pass limit, or overflow
		}
		d *= 2
	}
	return min(d, limit)
}

// Sleep waits d, or until ctx is done, and reports whether d passed (false:
// ctx ended first). A d of zero or less does not wait: it reports whether
// ctx is still live.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
