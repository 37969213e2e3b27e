package main

import "testing"

func TestMedianRun(t *testing.T) {
	run := func(rate float64, ok bool) *step { return &step{rate: rate, ok: ok} }
	tests := []struct {
		name string
		runs []*step
		want float64 // rate of the run picked; 0: none
	}{
		{"none", nil, 0},
		{"one", []*step{run(5, true)}, 5},
		{"odd: the middle one", []*step{run(3, true), run(1, true), run(2, true)}, 2},
		{"even: the slower middle one", []*step{run(4, true), run(1, true), run(3, true), run(2, true)}, 2},
		{"failed runs do not count", []*step{run(9, false), run(1, true), run(3, true)}, 1},
		{"a run without a rate does not count", []*step{run(0, true), run(7, true)}, 7},
		{"all failed", []*step{run(1, false), run(2, false)}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := medianRun(tt.runs)
			switch {
			case tt.want == 0 && got != nil:
				t.Errorf("medianRun(%s) = run at %v records/s, want none", tt.name, got.rate)
			case tt.want != 0 && (got == nil || got.rate != tt.want):
				t.Errorf("medianRun(%s) = %v, want the run at %v records/s", tt.name, got, tt.want)
			}
		})
	}
}
