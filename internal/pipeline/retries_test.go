package pipeline

import "testing"

// TestEngineRetries pins the mapping of producer.retries to the engine's
// option, where 0 means the default 10: the config's explicit retries: 0
// must reach the engine as no retries.
func TestEngineRetries(t *testing.T) {
	for _, tc := range []struct {
		name       string
		configured int
		want       int
	}{
		{name: "explicit zero: none", configured: 0, want: -1},
		{name: "three", configured: 3, want: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := engineRetries(tc.configured); got != tc.want {
				t.Errorf("engineRetries(%d) = %d, want %d", tc.configured, got, tc.want)
			}
		})
	}
}
