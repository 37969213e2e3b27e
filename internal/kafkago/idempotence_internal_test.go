package kafkago

import (
	"math"
	"testing"
)

// TestAddSeq: sequences wrap from MaxInt32 to 0, as the brokers expect.
func TestAddSeq(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    int32
		n    int
		want int32
	}{
		{"from 0", 0, 5, 5},
		{"to the last", math.MaxInt32 - 5, 5, math.MaxInt32},
		{"past the last", math.MaxInt32 - 5, 6, 0},
		{"well past", math.MaxInt32 - 1, 10, 8},
	} {
		if got := addSeq(tc.s, tc.n); got != tc.want {
			t.Errorf("%s: addSeq(%d, %d) = %d, want %d", tc.name, tc.s, tc.n, got, tc.want)
		}
	}
}
