package config

import (
	"strings"
	"testing"
	"time"
)

func TestCreateTopicsConfig(t *testing.T) {
	const head = `pipelines:
  - name: p
    source: {brokers: ["a:9092"]}
    target: {brokers: ["b:9092"]}
    topics: {include: [orders]}
`
	tests := []struct {
		name   string
		extra  string
		create bool
		rf     int
		want   string // in the error; "" for none
	}{
		{"defaults", "", false, -1, ""},
		{"create with the broker default", "    create_topics: true\n", true, -1, ""},
		{"create with three replicas", "    create_topics: true\n    replication_factor: 3\n", true, 3, ""},
		{"zero replicas", "    create_topics: true\n    replication_factor: 0\n", true, 0, "0 is not a replication factor"},
		{"too many replicas", "    create_topics: true\n    replication_factor: 40000\n", true, 40000, "40000 is not a replication factor"},
		{"replicas without create", "    replication_factor: 3\n", false, 3, "has no effect without create_topics: true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse([]byte(head+tt.extra), "p.yaml")
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Parse: %v", err)
			case tt.want != "":
				if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "replication_factor") {
					t.Fatalf("Parse err = %v; want one about replication_factor containing %q", err, tt.want)
				}
				return
			}
			p := f.Pipelines[0]
			if p.CreateTopics != tt.create || p.ReplicationFactor != tt.rf {
				t.Errorf("create_topics %v, replication_factor %d; want %v, %d", p.CreateTopics, p.ReplicationFactor, tt.create, tt.rf)
			}
		})
	}
}

func TestConfigSyncIntervalConfig(t *testing.T) {
	const head = `pipelines:
  - name: p
    source: {brokers: ["a:9092"]}
    target: {brokers: ["b:9092"]}
    topics: {include: [orders]}
    create_topics: true
`
	tests := []struct {
		name  string
		extra string
		want  time.Duration
		err   string // in the error; "" for none
	}{
		{"default", "", 10 * time.Minute, ""},
		{"every run", "    config_sync_interval: 0s\n", 0, ""},
		{"an hour", "    config_sync_interval: 1h\n", time.Hour, ""},
		{"negative", "    config_sync_interval: -1m\n", 0, "config_sync_interval: -1m0s is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse([]byte(head+tt.extra), "p.yaml")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Parse err = %v; want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := f.Pipelines[0].ConfigSyncInterval; got != tt.want {
				t.Errorf("config_sync_interval = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSyncGroupsConfig(t *testing.T) {
	const head = `pipelines:
  - name: p
    source: {brokers: ["a:9092"]}
    target: {brokers: ["b:9092"]}
    topics: {include: [orders]}
`
	tests := []struct {
		name  string
		extra string
		want  time.Duration
		match map[string]bool
		errs  []string // each in the error; none for no error
	}{
		{"default interval", "    sync_groups: {include: [\"billing-.*\"], exclude: [billing-test]}\n", time.Minute,
			map[string]bool{"billing-eu": true, "billing-test": false, "audit": false}, nil},
		{"every run", "    sync_groups: {include: [\".*\"], interval: 0s}\n", 0, map[string]bool{"x": true}, nil},
		{"all problems at once", "    provenance: false\n    sync_groups: {exclude: [\"(?!x)\"], interval: -1s, includ: []}\n", 0, nil,
			[]string{`unknown key "includ"`}},
		{"all problems at once, known keys", "    provenance: false\n    sync_groups: {exclude: [\"(?!x)\"], interval: -1s}\n", 0, nil,
			[]string{"sync_groups.include: select at least one consumer group", "sync_groups.exclude[0]", "lookaround",
				"sync_groups.interval: -1s is negative", "sync_groups: needs provenance: true"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse([]byte(head+tt.extra), "p.yaml")
			if len(tt.errs) > 0 {
				for _, w := range tt.errs {
					if err == nil || !strings.Contains(err.Error(), w) {
						t.Errorf("Parse err = %v; want one containing %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			g := f.Pipelines[0].SyncGroups
			if g == nil || g.Interval != tt.want {
				t.Fatalf("sync_groups = %+v, want interval %v", g, tt.want)
			}
			for group, want := range tt.match {
				if got := g.Match(group); got != want {
					t.Errorf("Match(%q) = %t, want %t", group, got, want)
				}
			}
		})
	}
}
