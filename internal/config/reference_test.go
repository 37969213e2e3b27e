package config_test

import (
	"flag"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/config"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the defaults table of docs/configuration.md from config.Defaults")

const (
	tableBegin = "<!-- defaults table: made by config.DefaultsTable; go test ./internal/config -run TestDefaultsTable -update-docs -->\n"
	tableEnd   = "<!-- end of the defaults table -->"
)

// TestDefaultsTable: the table of defaults in docs/configuration.md, where
// users read them, is the one config.Defaults makes from the constants Parse
// fills in. A default changed in one place and not the other fails here.
func TestDefaultsTable(t *testing.T) {
	const path = "../../docs/configuration.md"
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(text)
	i, j := strings.Index(s, tableBegin), strings.Index(s, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("%s: no defaults table between %q and %q", path, tableBegin, tableEnd)
	}
	got, want := s[i+len(tableBegin):j], config.DefaultsTable()
	if *updateDocs {
		if err := os.WriteFile(path, []byte(s[:i+len(tableBegin)]+want+s[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: the defaults table differs from config.DefaultsTable (-want +got); rerun with -update-docs:\n%s", path, diff)
	}
}

// TestDefaultsAreWhatParseFills: each value of the table is what a file
// that leaves the key out gets.
func TestDefaultsAreWhatParseFills(t *testing.T) {
	f, err := config.Parse([]byte("pipelines:\n  - name: p\n    source: {brokers: [\"a:1\"]}\n    target: {brokers: [\"b:1\"]}\n    topics: {include: [t]}\n"), "defaults.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := f.Pipelines[0]
	want := config.Pipeline{}
	want.Producer = config.DefaultProducer()
	got := map[string]any{
		"store": f.Store, "client_id": p.Source.ClientID, "target_topic": p.TargetTopic, "start": p.Start,
		"isolation": p.Isolation, "on_gap": p.OnGap, "commit_interval": p.CommitInterval, "parallelism": p.Parallelism,
		"fetch_bytes": p.FetchBytes, "lease_duration": p.LeaseDuration, "takeover_settle": p.TakeoverSettle,
		"replication_wait": p.ReplicationWait, "replication_factor": p.ReplicationFactor,
		"config_sync_interval": p.ConfigSyncInterval, "acl_sync_interval": p.ACLSyncInterval, "producer": p.Producer,
		"dial_timeout": []time.Duration{p.Source.DialTimeout, p.Target.DialTimeout},
	}
	exp := map[string]any{
		"store": config.DefaultStore, "client_id": config.DefaultClientID, "target_topic": config.DefaultTargetTopic,
		"start": config.DefaultStart, "isolation": config.DefaultIsolation, "on_gap": config.DefaultOnGap,
		"commit_interval": config.DefaultFileCommit, "parallelism": config.DefaultParallelism,
		"fetch_bytes": int32(config.DefaultFetchBytes), "lease_duration": config.DefaultLeaseDuration,
		"takeover_settle": config.DefaultTakeoverSettle, "replication_wait": config.DefaultReplicationWait,
		"replication_factor": config.DefaultReplicationFactor, "config_sync_interval": config.DefaultConfigSyncInterval,
		"acl_sync_interval": config.DefaultACLSyncInterval, "producer": want.Producer,
		"dial_timeout": []time.Duration{config.DefaultDialTimeout, config.DefaultDialTimeout},
	}
	if diff := cmp.Diff(exp, got); diff != "" {
		t.Errorf("Parse's defaults differ from the constants (-want +got):\n%s", diff)
	}
}

// TestReferenceShowsEveryKey: the reference configuration, which the README
// and docs/configuration.md send users to for "every key, its default and
// its meaning", names every key the loader decodes. A key added to the
// structs and not to testdata/pipelines.yaml fails here.
func TestReferenceShowsEveryKey(t *testing.T) {
	ref, err := os.ReadFile("testdata/pipelines.yaml")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[reflect.Type]bool{}
	var walk func(typ reflect.Type, path string)
	walk = func(typ reflect.Type, path string) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] {
			return
		}
		seen[typ] = true
		for i := range typ.NumField() {
			f := typ.Field(i)
			key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if key == "" || key == "-" {
				continue
			}
			// Written as a key, commented out or not: "key:" after the
			// indentation, a "#", a "{" or a ",".
			if !regexp.MustCompile(`(?m)(^|[\s#{,])` + regexp.QuoteMeta(key) + `:`).Match(ref) {
				t.Errorf("testdata/pipelines.yaml does not show the key %s%s (%s.%s): add it, with its default and meaning", path, key, typ.Name(), f.Name)
			}
			walk(f.Type, path+key+".")
		}
	}
	walk(reflect.TypeFor[config.File](), "")
	if len(seen) < 5 {
		t.Errorf("walked %d configuration structs; want File, Pipeline, Cluster, TLS, SASL, ...", len(seen))
	}
}
