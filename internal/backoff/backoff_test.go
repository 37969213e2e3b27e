package backoff

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestDelay(t *testing.T) {
	tests := []struct {
		name        string
		n           int
		base, limit time.Duration
		want        time.Duration
	}{
		{"loop first failure", 1, time.Second, 30 * time.Second, time.Second},
		{"loop second", 2, time.Second, 30 * time.Second, 2 * time.Second},
		{"loop third", 3, time.Second, 30 * time.Second, 4 * time.Second},
		{"loop fifth", 5, time.Second, 30 * time.Second, 16 * time.Second},
		{"loop capped", 6, time.Second, 30 * time.Second, 30 * time.Second},
		{"loop far past the cap", 60, time.Second, 30 * time.Second, 30 * time.Second},
		{"retry default first", 1, 100 * time.Millisecond, 5 * time.Second, 100 * time.Millisecond},
		{"retry default sixth", 6, 100 * time.Millisecond, 5 * time.Second, 3200 * time.Millisecond},
		{"retry default capped", 7, 100 * time.Millisecond, 5 * time.Second, 5 * time.Second},
		{"no overflow", 1 << 20, time.Hour, 1<<63 - 1, 1<<63 - 1},
	}
	for _, tc := range tests {
		if got := Delay(tc.n, tc.base, tc.limit); got != tc.want {
			t.Errorf("%s: Delay(%d, %v, %v) = %v, want %v", tc.name, tc.n, tc.base, tc.limit, got, tc.want)
		}
	}
}

// TestSleep runs under synctest's clock: Sleep waits exactly d, returns
// false as soon as its context is cancelled, and does not wait at all for
// d ≤ 0.
func TestSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if !Sleep(t.Context(), 3*time.Second) {
			t.Fatal("Sleep(live ctx, 3s) = false, want true")
		}
		if got := time.Since(start); got != 3*time.Second {
			t.Errorf("Sleep(3s) slept %v, want 3s", got)
		}

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start = time.Now()
		if Sleep(ctx, time.Hour) {
			t.Error("Sleep(ctx ending after 1s, 1h) = true, want false")
		}
		if got := time.Since(start); got != time.Second {
			t.Errorf("Sleep(ctx ending after 1s, 1h) slept %v, want 1s", got)
		}
		for range 100 { // a timer of 0 and a done ctx would race: the answer must not depend on it
			if Sleep(ctx, 0) {
				t.Error("Sleep(ended ctx, 0) = true, want false")
				break
			}
		}
		if !Sleep(t.Context(), -time.Second) {
			t.Error("Sleep(live ctx, -1s) = false, want true")
		}
		if got := time.Since(start); got != time.Second {
			t.Errorf("Sleep(0) and Sleep(-1s) slept %v more, want none", got-time.Second)
		}
	})
}
