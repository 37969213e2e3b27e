package replicate

import (
	"context"
	"testing"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// TopicConfigValues answers the configs of the fake source as those in force.
func (s *describingSource) TopicConfigValues(_ context.Context, topics []string) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for _, t := range topics {
		out[t] = s.configs[t]
	}
	return out, nil
}

// TestTimeFigures pins the time figures of a run that leaves lag (a window
// capped by max_records, as a paused or slow copy leaves it): latency from
// the newest record copied, the age of the oldest record not copied, and
// the retention headroom, the time until the source's retention.ms may
// delete that record, which is what `catchup plan` prints as DELETED_IN.
func TestTimeFigures(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 10, pC: 3})
	now := r.clock.now()
	for i := range r.src.logs[pA].recs {
		r.src.logs[pA].recs[i].Timestamp = now.Add(-100*time.Minute + time.Duration(i)*time.Minute)
	}
	for i := range r.src.logs[pC].recs {
		r.src.logs[pC].recs[i].Timestamp = now.Add(-3*time.Minute + time.Duration(i)*time.Minute)
	}
	o := r.options("run")
	o.Source = &describingSource{fakeCluster: r.src, configs: map[string]map[string]string{
		"a": {"retention.ms": "7200000"},                              // 2 hours
		"b": {"retention.ms": "7200000", "cleanup.policy": "compact"}, // deletes nothing by time
	}}
	o.Policy.MaxRecords = 4
	rep := r.run(t, t.Context(), o)

	tests := []struct {
		name   string
		figure func() (time.Duration, bool)
		want   time.Duration
		ok     bool
	}{
		{"Latency", rep.Latency, 97 * time.Minute, true},     // a/0's newest copied: record 3, 97 minutes old
		{"RecordAge", rep.RecordAge, 96 * time.Minute, true}, // a/0's record 4, not copied
		{"Headroom", rep.Headroom, 24 * time.Minute, true},   // record 4 + 2h - now
	}
	for _, tc := range tests {
		if got, ok := tc.figure(); got != tc.want || ok != tc.ok {
			t.Errorf("%s = %v, %t; want %v, %t", tc.name, got, ok, tc.want, tc.ok)
		}
	}

	// The next run copies the rest (no cap): nothing is left, so there is
	// no record age and no headroom, and the latency is that of the newest
	// record copied.
	o.Policy.MaxRecords = 0
	rep = r.run(t, t.Context(), o)
	if d, ok := rep.Latency(); d != 91*time.Minute || !ok {
		t.Errorf("second run: Latency = %v, %t; want 91m, true", d, ok)
	}
	if d, ok := rep.RecordAge(); ok {
		t.Errorf("second run: RecordAge = %v, true; want none: nothing left to copy", d)
	}
	if d, ok := rep.Headroom(); ok {
		t.Errorf("second run: Headroom = %v, true; want none: nothing left to copy", d)
	}
}
