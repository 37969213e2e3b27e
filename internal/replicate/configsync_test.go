package replicate

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// syncingTarget is a creatingTarget whose topics have configs.
type syncingTarget struct {
	*creatingTarget
	configs map[string]map[string]string
	alters  int
}

func (s *syncingTarget) ExplicitConfigs(_ context.Context, topics []string) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for _, t := range topics {
		out[t] = maps.Clone(s.configs[t])
	}
	return out, nil
}

func (s *syncingTarget) AlterConfigs(_ context.Context, changes map[string]map[string]string) error {
	s.alters++
	for t, kv := range changes {
		maps.Copy(s.configs[t], kv)
	}
	return nil
}

// TestConfigSync keeps the copied configs of an existing target topic in
// sync with its source topic: with the adjustments of creation (CreateTime,
// max.message.bytes headroom, no timestamp-difference limits), a config set
// on the target alone left as it is, at most once per interval, every
// change reported.
func TestConfigSync(t *testing.T) {
	r := newRig(map[catchup.Partition]int{pA: 2})
	srcConfigs := map[string]map[string]string{"a": {
		"retention.ms":                    "3600000",
		"max.message.bytes":               "2000000",
		"message.timestamp.type":          "LogAppendTime",
		"message.timestamp.before.max.ms": "86400000",
	}}
	dst := &syncingTarget{creatingTarget: &creatingTarget{fakeCluster: r.dst}, configs: map[string]map[string]string{"a": {
		"retention.ms":      "1000",
		"max.message.bytes": "2000512",
		"segment.ms":        "60000", // set on the target by hand, not on the source
	}}}
	o := r.options("run")
	o.Source = &describingSource{fakeCluster: r.src, configs: srcConfigs}
	o.Target = dst
	o.CreateTopics, o.ConfigSyncInterval = true, 10*time.Minute
	e, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	run := func(what string) *Report {
		rep, err := e.Run(t.Context())
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return rep
	}
	rep := run("first run")
	want := []ConfigChange{
		{Topic: "a", Config: "message.timestamp.type", From: "", To: "CreateTime"},
		{Topic: "a", Config: "retention.ms", From: "1000", To: "3600000"},
	}
	if diff := cmp.Diff(want, rep.ConfigChanges); diff != "" {
		t.Errorf("first run: changes (-want +got):\n%s", diff)
	}
	wantCfg := map[string]string{"retention.ms": "3600000", "max.message.bytes": "2000512", "segment.ms": "60000", "message.timestamp.type": "CreateTime"}
	if diff := cmp.Diff(wantCfg, dst.configs["a"]); diff != "" {
		t.Errorf("target configs (-want +got):\n%s", diff)
	}

	// The source's retention changes: within the interval nothing is read
	// or changed; after it, the change follows.
	srcConfigs["a"]["retention.ms"] = "7200000"
	if rep := run("run within the interval"); len(rep.ConfigChanges) != 0 || dst.alters != 1 {
		t.Errorf("run within the interval: changes %v, %d alters; want none, 1", rep.ConfigChanges, dst.alters)
	}
	r.clock.add(10 * time.Minute)
	rep = run("run after the interval")
	want = []ConfigChange{{Topic: "a", Config: "retention.ms", From: "3600000", To: "7200000"}}
	if diff := cmp.Diff(want, rep.ConfigChanges); diff != "" {
		t.Errorf("run after the interval: changes (-want +got):\n%s", diff)
	}
	r.clock.add(10 * time.Minute)
	if rep := run("run in sync"); len(rep.ConfigChanges) != 0 || dst.alters != 2 {
		t.Errorf("run with configs in sync: changes %v, %d alters; want none, 2", rep.ConfigChanges, dst.alters)
	}
}
