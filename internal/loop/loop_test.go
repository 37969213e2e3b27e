package loop

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestEqualJitterStaysInRange(t *testing.T) {
	for range 1000 {
		if d := equalJitter(10 * time.Second); d < 5*time.Second || d > 10*time.Second {
			t.Fatalf("equalJitter(10s) = %v, want within [5s, 10s]", d)
		}
	}
}

// TestRunSchedule runs a job that fails twice, then succeeds, then takes
// longer than Every, under synctest's clock: the starts are Every apart
// after a success, back off after failures (reset by a success), follow at
// once after a long call, and the loop returns nil when ctx is cancelled
// during a call, after that call returned.
func TestRunSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		t0 := time.Now()
		var starts []time.Duration
		fail := errors.New("source unreachable")
		script := []struct {
			took time.Duration
			err  error
		}{{0, nil}, {0, fail}, {0, fail}, {0, fail}, {time.Second, nil}, {15 * time.Second, nil}, {0, fail}, {time.Second, nil}}
		job := func(context.Context) error {
			i := len(starts)
			starts = append(starts, time.Since(t0))
			time.Sleep(script[i].took)
			if i == len(script)-1 {
				cancel() // a SIGTERM during the last call
			}
			return script[i].err
		}
		o := Options{Every: 10 * time.Second, MaxBackoff: 30 * time.Second, Jitter: func(d time.Duration) time.Duration { return d }}
		if err := Run(ctx, o, job); err != nil {
			t.Fatalf("Run = %v, want nil after the cancellation", err)
		}
		s := time.Second
		want := []time.Duration{
			0,       // success: the next starts 10s after
			10 * s,  // failure 1: backoff 10s
			20 * s,  // failure 2: 20s
			40 * s,  // failure 3: 30s (the limit, not 40s)
			70 * s,  // success taking 1s: next at 80s
			80 * s,  // success taking 15s: next at once
			95 * s,  // failure 1 again (reset): 10s
			105 * s, // the cancelled call
		}
		if diff := cmp.Diff(want, starts); diff != "" {
			t.Errorf("starts (-want +got):\n%s", diff)
		}
	})
}

// TestRunStopsOnFatalAndWhileWaiting: an error Fatal accepts ends the loop
// with it; a cancellation while waiting ends it with nil at once.
func TestRunStopsOnFatalAndWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bad := errors.New("bad config")
		calls := 0
		err := Run(t.Context(), Options{Every: time.Second, Fatal: func(err error) bool { return errors.Is(err, bad) }},
			func(context.Context) error { calls++; return bad })
		if !errors.Is(err, bad) || calls != 1 {
			t.Errorf("Run with a fatal error = %v after %d calls, want it after 1", err, calls)
		}

		ctx, cancel := context.WithCancel(t.Context())
		t0 := time.Now()
		time.AfterFunc(3*time.Second, cancel)
		calls = 0
		if err := Run(ctx, Options{Every: time.Hour}, func(context.Context) error { calls++; return nil }); err != nil || calls != 1 {
			t.Errorf("Run cancelled while waiting = %v after %d calls, want nil after 1", err, calls)
		}
		if d := time.Since(t0); d != 3*time.Second {
			t.Errorf("Run returned %v after the start, want 3s: at the cancellation, not at the next start", d)
		}
		if err := Run(t.Context(), Options{}, nil); !errors.Is(err, ErrEvery) {
			t.Errorf("Run without Every = %v, want ErrEvery", err)
		}
	})
}
