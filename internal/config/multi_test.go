package config

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadMulti(t *testing.T) {
	f, err := Load("testdata/multi.yaml")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	type shape struct{ Name, Source, Target, TargetTopic, Start string }
	var got []shape
	for _, p := range f.Pipelines {
		got = append(got, shape{p.Name, p.Source.Name, p.Target.Name, p.TargetTopic, p.Start})
	}
	want := []shape{
		{"east-to-dr", "east", "dr", "{source}.{topic}", "earliest"},
		{"west-to-dr", "west", "dr", "{source}.{topic}", "earliest"},
		{"east-to-analytics", "east", "analytics", "{topic}", "latest"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pipelines (-want +got):\n%s", diff)
	}
	// Two sources into one target: their topics land apart.
	if a, b := f.Pipelines[0].MapTopic("orders"), f.Pipelines[1].MapTopic("orders"); a != "east.orders" || b != "west.orders" {
		t.Errorf("MapTopic(orders) = %q and %q, want east.orders and west.orders", a, b)
	}
	// One source into two targets: same source brokers, distinct checkpoint namespaces.
	if !slices.Equal(f.Pipelines[0].Source.Brokers, f.Pipelines[2].Source.Brokers) || f.Pipelines[0].Name == f.Pipelines[2].Name {
		t.Errorf("east-to-dr and east-to-analytics should share the source and differ in name")
	}
}
