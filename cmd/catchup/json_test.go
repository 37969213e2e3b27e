package main

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// decodeDoc decodes the one document a --json command printed, strictly:
// an unknown field, a second document or a wrong schema version fails t.
func decodeDoc[P any](t *testing.T, stdout string) jsonDoc[P] {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	var doc jsonDoc[P]
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("--json output does not decode strictly into %T: %v\n%s", doc, err, stdout)
	}
	if dec.More() {
		t.Fatalf("--json printed more than one document:\n%s", stdout)
	}
	if doc.Version != jsonVersion || doc.Catchup.Version == "" || doc.Catchup.GoVersion == "" {
		t.Errorf("--json document: version %d, catchup %+v; want version %d and the build", doc.Version, doc.Catchup, jsonVersion)
	}
	return doc
}

// decodeOne is decodeDoc for a command over one pipeline.
func decodeOne[P any](t *testing.T, stdout, command string) P {
	t.Helper()
	doc := decodeDoc[P](t, stdout)
	if doc.Command != command || len(doc.Pipelines) != 1 || doc.Error != "" {
		t.Fatalf("--json document: command %q, %d pipelines, error %q; want %q with one pipeline and no error:\n%s",
			doc.Command, len(doc.Pipelines), doc.Error, command, stdout)
	}
	return doc.Pipelines[0]
}

// TestJSONFieldReference: docs/json.md documents every field of every
// command's document, and nothing that no longer exists.
func TestJSONFieldReference(t *testing.T) {
	ref, err := os.ReadFile("../../docs/json.md")
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]reflect.Type{
		"document":  reflect.TypeFor[jsonDoc[any]](),
		"run":       reflect.TypeFor[reportJSONT](),
		"backfill":  reflect.TypeFor[backfillJSON](),
		"plan":      reflect.TypeFor[planJSONT](),
		"status":    reflect.TypeFor[statusJSONT](),
		"verify":    reflect.TypeFor[verifyJSONT](),
		"translate": reflect.TypeFor[translation](),
		"reset":     reflect.TypeFor[resetJSON](),
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)`").FindAllSubmatch(ref, -1) {
		documented[string(m[1])] = true
	}
	used := map[string]bool{}
	for name, typ := range types {
		for _, f := range jsonFields(typ) {
			used[f] = true
			if !documented[f] {
				t.Errorf("docs/json.md does not document field %q of %s (%s)", f, name, typ)
			}
		}
		if !bytes.Contains(ref, []byte("## "+name)) {
			t.Errorf("docs/json.md has no section %q", "## "+name)
		}
	}
	for f := range documented {
		if !used[f] {
			t.Errorf("docs/json.md documents field %q, which no command prints", f)
		}
	}
}

// jsonFields returns the JSON names of typ's fields, nested ones included.
func jsonFields(typ reflect.Type) []string {
	for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
		typ = typ.Elem()
	}
	if typ.Kind() != reflect.Struct || typ.PkgPath() == "time" {
		return nil
	}
	var out []string
	for f := range typ.Fields() {
		if f.Anonymous {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" || name == "" {
			continue
		}
		out = append(out, name)
		out = append(out, jsonFields(f.Type)...)
	}
	return out
}

// TestJSONEveryCommand: each command that prints a result prints, with
// --json, one document that decodes strictly into its documented type, with
// every pipeline it covered inside; a command that fails says why in it.
func TestJSONEveryCommand(t *testing.T) {
	dir := t.TempDir()
	src, dst1, dst2 := vCluster(t), vCluster(t), vCluster(t)
	vProduce(t, src, "s", 0, 40, -1, 0)
	commitGroup(t, src, "app", vTopic, map[int32]int64{0: 10})
	cfg := vConfig(t, dir,
		vPipeline{name: "one", src: src, dst: dst1, srcN: "s", dstN: "d1"},
		vPipeline{name: "two", src: src, dst: dst2, srcN: "s", dstN: "d2"})
	names := func(n int, name func(i int) string) []string {
		var out []string
		for i := range n {
			out = append(out, name(i))
		}
		return out
	}
	both := []string{"one", "two"}
	check := func(t *testing.T, command string, got []string, want []string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s --json: pipelines %v, want %v", command, got, want)
		}
	}

	// plan before run: one window of 40 records per pipeline.
	stdout, _ := mustCLI(t, exitOK, "", "plan", "--json", "-c", cfg)
	pl := decodeDoc[planJSONT](t, stdout)
	check(t, "plan", names(len(pl.Pipelines), func(i int) string { return pl.Pipelines[i].Pipeline }), both)
	for _, p := range pl.Pipelines {
		if p.Records != 40 || len(p.Partitions) != 1 || p.Partitions[0].To != 40 || p.Partitions[0].EstBytes <= 0 {
			t.Errorf("plan --json: %+v; want one window [0, 40) with bytes", p)
		}
	}

	stdout, _ = mustCLI(t, exitOK, "", "run", "--json", "-c", cfg)
	run := decodeDoc[reportJSONT](t, stdout)
	check(t, "run", names(len(run.Pipelines), func(i int) string { return run.Pipelines[i].Pipeline }), both)
	for _, p := range run.Pipelines {
		if len(p.Partitions) != 1 || p.Partitions[0].Status != "done" || p.Partitions[0].Copied != 40 {
			t.Errorf("run --json: %+v; want 40 copied, done", p)
		}
	}

	stdout, _ = mustCLI(t, exitOK, "", "status", "--json", "-c", cfg)
	st := decodeDoc[statusJSONT](t, stdout)
	check(t, "status", names(len(st.Pipelines), func(i int) string { return st.Pipelines[i].Pipeline }), both)
	for _, p := range st.Pipelines {
		if r := p.Partitions[0]; r.Start == nil || *r.Start != 0 || r.Checkpoint == nil || *r.Checkpoint != 40 {
			t.Errorf("status --json: %+v; want start 0, checkpoint 40", r)
		}
	}

	stdout, _ = mustCLI(t, exitOK, "", "verify", "--json", "-c", cfg)
	ver := decodeDoc[verifyJSONT](t, stdout)
	check(t, "verify", names(len(ver.Pipelines), func(i int) string { return ver.Pipelines[i].Pipeline }), both)
	for _, p := range ver.Pipelines {
		want := verifyPartitionJSON{Topic: vTopic, TargetTopic: vTopic, verificationJSON: verificationJSON{
			OK: true, From: 0, To: 40, Source: 40, Matched: 40, Target: 40}}
		if !p.OK || p.Verdict != "exact copy" || len(p.Partitions) != 1 {
			t.Fatalf("verify --json: %+v; want ok, exact copy, one partition", p)
		}
		if d := cmp.Diff(want, p.Partitions[0], cmp.AllowUnexported(verifyPartitionJSON{})); d != "" {
			t.Errorf("verify --json: pipeline %s partition (-want +got):\n%s", p.Pipeline, d)
		}
	}

	stdout, _ = mustCLI(t, exitOK, "", "backfill", "--json", "-c", cfg, "--pipeline", "one",
		"--from", vBase.Format(time.RFC3339), "--to", vBase.Add(10*time.Second).Format(time.RFC3339), "--job", "j")
	bf := decodeOne[backfillJSON](t, stdout, "backfill")
	if bf.Job != "j" || len(bf.Partitions) != 1 || bf.Partitions[0].Copied != 10 {
		t.Errorf("backfill --json: %+v; want job j, 10 copied", bf)
	}

	stdout, _ = mustCLI(t, exitOK, "", "translate", "--json", "-c", cfg, "--pipeline", "two", "--group", "app")
	if tr := decodeOne[translation](t, stdout, "translate"); tr.Pipeline != "two" || len(tr.Partitions) != 1 || tr.Partitions[0].Status != "exact" {
		t.Errorf("translate --json: %+v; want pipeline two, one exact partition", tr)
	}

	stdout, stderr := mustCLI(t, exitOK, "", "reset", "--json", "-c", cfg, "--pipeline", "one", "--topic", vTopic, "--to", "earliest", "--yes", "--allow-duplicates")
	rs := decodeOne[resetJSON](t, stdout, "reset")
	if d := cmp.Diff(resetJSON{Pipeline: "one", Topic: vTopic, To: "earliest", Partitions: []resetPartitionJSON{{Topic: vTopic}}}, rs); d != "" {
		t.Errorf("reset --json (-want +got):\n%s", d)
	}
	if !strings.Contains(stderr, "reset pipeline one:") {
		t.Errorf("reset --json: the listing is not on stderr:\n%s", stderr)
	}

	// A failing command still prints its one document, with the error.
	stdout, _ = mustCLI(t, exitUsage, "", "status", "--json", "-c", cfg, "--pipeline", "three")
	if doc := decodeDoc[statusJSONT](t, stdout); doc.Command != "status" || len(doc.Pipelines) != 0 || !strings.Contains(doc.Error, "three") {
		t.Errorf("status --json of an unknown pipeline: %+v; want no pipeline and the error", doc)
	}
}
