package main

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
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
