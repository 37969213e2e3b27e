package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestPlanShowsRetention: DELETED_IN is the first record's timestamp plus
// the topic's retention.ms; "never" for a compacted topic, '*' where
// retention.bytes may delete sooner. The rows are in the dispatcher's
// order: none of these partitions was copied (all urgency 1), so the
// larger estimated bytes (the provenance header holds the topic name)
// first, then topic order.
func TestPlanShowsRetention(t *testing.T) {
	e := newXEnv(t, nil, `hot, cold, kept, sized, idle`, "")
	for name, cfg := range map[string]map[string]string{
		"hot":   {"retention.ms": "7200000"}, // 2h
		"cold":  nil,                         // 7 days
		"kept":  {"cleanup.policy": "compact"},
		"sized": {"retention.ms": "10800000", "retention.bytes": "1000000000"},
		"idle":  {"retention.ms": "60000"},
	} {
		for _, c := range []*kfake.Cluster{e.src, e.dst} {
			if err := c.CreateTopic(name, 1, cfg); err != nil {
				t.Fatal(err)
			}
		}
	}
	old := time.Now().Add(-time.Hour)
	var recs []*kgo.Record
	for _, topic := range []string{"hot", "cold", "kept", "sized"} {
		for i := range 100 {
			recs = append(recs, &kgo.Record{Topic: topic, Key: []byte{byte(i)}, Value: []byte("value"), Timestamp: old})
		}
	}
	produce(t, e.src, recs)

	stdout := mustX(t, exitOK, "plan", "-c", e.cfg, "--rate", "10")
	var order []string
	rows := map[string]string{}
	for _, line := range strings.Split(stdout, "\n") {
		if f := strings.Fields(line); len(f) > 6 && f[1] == "0" {
			order = append(order, f[0])
			rows[f[0]] = line
		}
	}
	if got, want := strings.Join(order, " "), "sized cold kept hot idle"; got != want {
		t.Errorf("plan rows in order %q, want %q:\n%s", got, want, stdout)
	}
	// Deleted in about 1h (2h retention, records 1h old), 2h with '*' for
	// retention.bytes, 6 days 23h, never; 4 partitions share 10 records/s,
	// so 100 records take 40s each, 400 records 40s in all.
	for topic, re := range map[string]string{
		"hot":   `hot\s+0\s+0\s+100\s+100\s+\S+ \S+\s+(59m\d+s|1h0m0s)\s+40s\s*$`,
		"sized": `sized\s+0\s+0\s+100\s+100\s+\S+ \S+\s+(1h59m0s|2h0m0s)\*\s+40s\s*$`,
		"cold":  `cold\s+0\s+0\s+100\s+100\s+\S+ \S+\s+16[67]h\d+m0s\s+40s\s*$`,
		"kept":  `kept\s+0\s+0\s+100\s+100\s+\S+ \S+\s+never\s+40s\s*$`,
		"idle":  `idle\s+0\s+0\s+0\s+0\s+0 B\s+-\s+-\s*$`,
	} {
		if !regexp.MustCompile(re).MatchString(rows[topic]) {
			t.Errorf("plan row of %s = %q; want it to match %s", topic, rows[topic], re)
		}
	}
	for _, want := range []string{"most urgent first", "5 partitions, 400 records", "about 40s at 10 records/s", "retention.bytes also applies"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("plan output lacks %q:\n%s", want, stdout)
		}
	}

	// Without a rate, no duration, and a note on why.
	stdout = mustX(t, exitOK, "plan", "-c", e.cfg)
	if !strings.Contains(stdout, "catchup stores no copy rate; pass --rate") || strings.Contains(stdout, " 40s") {
		t.Errorf("plan without --rate:\n%s", stdout)
	}
}

// TestPlanOrdersAsTheDispatcher: plan's rows come in the order the Lambda
// dispatcher hands out work (plan.CompareUrgency): the largest share of
// the source's retained log not yet copied first, whatever the retention
// time, then the empty windows. Each topic got one run of 50 records.
func TestPlanOrdersAsTheDispatcher(t *testing.T) {
	e := newXEnv(t, nil, `hot, cold, kept, sized, idle`, "    window: {max_records: 50}\n")
	counts := map[string]int{"hot": 60, "cold": 200, "kept": 100, "sized": 400, "idle": 0}
	for name, cfg := range map[string]map[string]string{
		"hot":   {"retention.ms": "7200000"}, // 2h: deleted first, but 50 of 60 copied
		"cold":  nil,
		"kept":  {"cleanup.policy": "compact"},
		"sized": {"retention.ms": "10800000"},
		"idle":  {"retention.ms": "60000"},
	} {
		for _, c := range []*kfake.Cluster{e.src, e.dst} {
			if err := c.CreateTopic(name, 1, cfg); err != nil {
				t.Fatal(err)
			}
		}
	}
	var recs []*kgo.Record
	for topic, n := range counts {
		for i := range n {
			recs = append(recs, &kgo.Record{Topic: topic, Key: []byte{byte(i)}, Value: []byte("value")})
		}
	}
	produce(t, e.src, recs)
	mustX(t, exitFailure, "run", "-c", e.cfg) // 50 of each: lag left

	stdout := mustX(t, exitOK, "plan", "-c", e.cfg)
	var order []string
	for _, line := range strings.Split(stdout, "\n") {
		if f := strings.Fields(line); len(f) > 6 && f[1] == "0" {
			order = append(order, f[0])
		}
	}
	// Not copied: sized 350/400, cold 150/200, kept 50/100, hot 10/60.
	if got, want := strings.Join(order, " "), "sized cold kept hot idle"; got != want {
		t.Errorf("plan rows in order %q, want %q (share of the retained log not copied):\n%s", got, want, stdout)
	}
}

// TestPlanTellsTheBacklogItsBytesAndARecreatedTopic plans a pipeline with
// window.max_records: the totals are the backlog's, not one window's, the
// bytes are the records' as written, provenance header included (exactly:
// 10 records of 10 bytes, each with the 25 bytes of its header), and a
// source topic deleted and refilled past the checkpoint shows as blocked.
func TestPlanTellsTheBacklogItsBytesAndARecreatedTopic(t *testing.T) {
	e := newXEnv(t, map[string]int32{"t": 1}, "t", "    window: {max_records: 3}\n")
	seed := func(n int, value string) {
		var recs []*kgo.Record
		for range n {
			recs = append(recs, &kgo.Record{Topic: "t", Key: []byte("k"), Value: []byte(value)})
		}
		produce(t, e.src, recs)
	}
	seed(10, "vvvvvvvvv")
	stdout := mustX(t, exitOK, "plan", "-c", e.cfg)
	// "v1:x-src:t:0:N" is 14 bytes, "catchup-src" 11.
	for _, want := range []string{"1 partitions, 10 records, about 350 B; one run copies 3 of them (window.max_records)",
		"backlog 10 records to 10, in windows of window.max_records"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, stdout)
		}
	}

	mustX(t, exitFailure, "run", "-c", e.cfg) // partial: 3 of 10
	deleteTopic(t, e.src.ListenAddrs(), "t")
	if err := e.src.CreateTopic("t", 1, nil); err != nil {
		t.Fatal(err)
	}
	seed(20, "new")
	stdout = mustX(t, exitOK, "plan", "-c", e.cfg)
	if !strings.Contains(stdout, "the source topic was deleted and recreated") {
		t.Errorf("plan after the source topic was deleted and refilled past the checkpoint:\n%s", stdout)
	}
}
