// Package loop runs a bounded job again and again until it is stopped:
// catchup's continuous mode (`catchup run --every`). Each call of the job is
// a complete run (planned afresh, committed, leases released), so the loop
// keeps the exactness of separate runs; the loop only decides when the next
// one starts. It imports nothing of catchup's.
package loop

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/kafka-catchup/catchup/internal/backoff"
)

// Options configure Run. Zero values get the defaults in their comments.
type Options struct {
	// Every is the time from the start of one call to the start of the
	// next; a call that takes longer is followed at once. Required.
	Every time.Duration
	// MaxBackoff bounds the wait after consecutive failures, which doubles
	// from Every with each one; default 5 minutes (at least Every).
	MaxBackoff time.Duration
	// Fatal reports whether an error of the job ends the loop instead of
	// being retried (a configuration error); default none.
	Fatal func(error) bool
	// Jitter returns a wait in [d/2, d]; default uniform random. Tests
	// set it to make the waits exact.
	Jitter func(d time.Duration) time.Duration
	Log    *slog.Logger
}

// ErrEvery is returned by Run when Options.Every is not positive.
var ErrEvery = errors.New("loop: Every must be positive")

// Run calls job, then again Every after the start of each call, until ctx is
// cancelled: then it returns nil once the call in flight has returned (a
// stop is the normal end of a continuous run). A call that fails is
// followed by a backoff instead (backoff.Delay), reset by the next success; an
// error Fatal accepts ends the loop and is returned. Run never cancels a
// call itself: job gets ctx and must end soon after it is cancelled.
func Run(ctx context.Context, o Options, job func(context.Context) error) error {
	if o.Every <= 0 {
		return ErrEvery
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 5 * time.Minute
	}
	o.MaxBackoff = max(o.MaxBackoff, o.Every)
	if o.Jitter == nil {
		o.Jitter = equalJitter
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	failures := 0
	for iteration := 1; ; iteration++ {
		start := time.Now()
		err := job(ctx)
		if ctx.Err() != nil {
			return nil
		}
		wait := o.Every - time.Since(start)
		switch {
		case err == nil:
			failures = 0
		case o.Fatal != nil && o.Fatal(err):
			return err
		default:
			failures++
			wait = o.Jitter(backoff.Delay(failures, o.Every, o.MaxBackoff))
			o.Log.WarnContext(ctx, "iteration failed", "iteration", iteration, "failures", failures,
				"retry_in", wait.String(), "error", err)
		}
		if !backoff.Sleep(ctx, wait) {
			return nil
		}
	}
}

// equalJitter returns a uniformly random wait in [d/2, d]: retries of many
// processes stopped by one outage spread out, and none waits less than half.
func equalJitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2+1)
}
