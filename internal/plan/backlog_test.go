package plan

import (
	"testing"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// TestSizesAverage pins the order in which the backlog estimator, shared
// by catchup plan and the dispatcher, looks for a record size.
func TestSizesAverage(t *testing.T) {
	p := func(topic string, n int32) catchup.Partition { return catchup.Partition{Topic: topic, Partition: n} }
	sizes := RecordSizes(map[catchup.Partition]catchup.Progress{
		p("a", 0): {Exists: true, Records: 10, Bytes: 1000}, // 100 a record
		p("a", 1): {Exists: true, Records: 30, Bytes: 1000},
		p("b", 0): {Exists: true}, // no counters
	})
	sampled := func(avg float64, ok bool) func() (float64, bool) {
		return func() (float64, bool) { return avg, ok }
	}
	for _, tc := range []struct {
		name   string
		p      catchup.Partition
		sample func() (float64, bool)
		want   float64
	}{
		{"partition counters first", p("a", 0), sampled(7, true), 100},
		{"then the topic's", p("a", 2), sampled(7, true), 2000.0 / 40},
		{"then a sample", p("b", 0), sampled(7, true), 7},
		{"the sample is kept for the topic", p("b", 1), sampled(9, true), 7},
		{"without a sample, the pipeline's average", p("c", 0), sampled(0, false), 2000.0 / 40},
		{"no sampler", p("d", 0), nil, 2000.0 / 40},
	} {
		if got := sizes.Average(tc.p, tc.sample); got != tc.want {
			t.Errorf("%s: Average(%s) = %v, want %v", tc.name, tc.p, got, tc.want)
		}
	}
	if got := RecordSizes(map[catchup.Partition]catchup.Progress{}).Average(p("a", 0), sampled(0, false)); got != DefaultRecordBytes {
		t.Errorf("Average knowing nothing = %v, want %d", got, DefaultRecordBytes)
	}
}
