package plan

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

func TestTopicRetention(t *testing.T) {
	tests := []struct {
		name    string
		configs map[string]string
		want    Retention
	}{
		{"defaults", nil, Retention{Time: 7 * 24 * time.Hour}},
		{"one hour", map[string]string{"retention.ms": "3600000"}, Retention{Time: time.Hour}},
		{"infinite", map[string]string{"retention.ms": "-1"}, Retention{Time: -time.Millisecond, Never: true}},
		{"compacted", map[string]string{"cleanup.policy": "compact", "retention.ms": "1000"}, Retention{Time: time.Second, Never: true}},
		{"compacted and deleted", map[string]string{"cleanup.policy": "compact, delete", "retention.ms": "1000"}, Retention{Time: time.Second}},
		{"by size too", map[string]string{"retention.bytes": "1073741824"}, Retention{Time: 7 * 24 * time.Hour, BySize: true}},
		{"by size on a compacted topic", map[string]string{"cleanup.policy": "compact", "retention.bytes": "1"}, Retention{Time: 7 * 24 * time.Hour, Never: true}},
	}
	for _, tt := range tests {
		got, err := TopicRetention(tt.configs)
		if err != nil || got != tt.want {
			t.Errorf("TopicRetention(%s: %v) = %+v, %v; want %+v", tt.name, tt.configs, got, err, tt.want)
		}
	}
	if _, err := TopicRetention(map[string]string{"retention.ms": "soon"}); err == nil {
		t.Errorf("TopicRetention(retention.ms soon) succeeded; want an error")
	}
}

func TestDeletes(t *testing.T) {
	ts := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	r := Retention{Time: time.Hour, BySize: true}
	if got, want := r.Deletes(ts), (Deletion{At: ts.Add(time.Hour), BySize: true}); got != want {
		t.Errorf("Deletes(%v) = %+v, want %+v", ts, got, want)
	}
	if got := r.Deletes(time.Time{}); !got.At.IsZero() {
		t.Errorf("Deletes(unknown) = %+v, want an unknown time", got)
	}
	if got := (Retention{Time: time.Hour, Never: true}).Deletes(ts); !got.Never || !got.At.IsZero() {
		t.Errorf("Deletes on a topic that never deletes = %+v", got)
	}
}

func TestByUrgency(t *testing.T) {
	p := func(topic string, n int32) catchup.Partition { return catchup.Partition{Topic: topic, Partition: n} }
	w := func(q catchup.Partition, from, to int64) Planned {
		return Planned{Window: catchup.Window{Partition: q, From: from, To: to}}
	}
	gap := w(p("g", 0), 5, 5)
	gap.Err = errors.New("gap")
	windows := []Planned{
		w(p("a", 0), 50, 100), // half the retained log [0, 100) left
		w(p("a", 1), 90, 100), // a tenth
		w(p("b", 0), 0, 1000), // all of it, and the most bytes
		w(p("c", 0), 0, 50),   // all of it, fewer bytes
		w(p("d", 0), 7, 7),    // nothing to copy
		gap,
		w(p("a", 2), 0, 500), // all of it, as many bytes as c/0: partition order
		w(p("e", 0), 3, 3),   // nothing to copy
	}
	// Every log starts at 0; the windows end at the high watermark.
	bytes := map[catchup.Partition]float64{p("b", 0): 10, p("c", 0): 100, p("a", 2): 10}
	work := func(pl Planned) Work {
		return NewWork("x", pl, catchup.Offsets{Partition: pl.Partition, HighWatermark: pl.To}, bytes[pl.Partition])
	}
	var got []catchup.Partition
	for _, pl := range ByUrgency(windows, work) {
		got = append(got, pl.Partition)
	}
	want := []catchup.Partition{p("g", 0), p("b", 0), p("a", 2), p("c", 0), p("a", 0), p("a", 1), p("d", 0), p("e", 0)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ByUrgency order (-want +got):\n%s", diff)
	}
	if windows[0].Partition != p("a", 0) {
		t.Errorf("ByUrgency reordered its argument")
	}
}
