package config

import (
	"fmt"
	"reflect"
	"time"

	"github.com/goccy/go-yaml"
)

// What a program that writes a configuration rather than reads one (the
// MirrorMaker converter, internal/mirrormaker) needs of this package: the
// defaults and bounds it converts into, the checks it runs before Parse,
// and a YAML encoder that writes only the settings it set.

// Defaults and bounds of the settings a converter fills; each is the
// value Parse applies or checks (defaults.go, validate.go).
const (
	DefaultStore       = defaultStore
	DefaultParallelism = defaultParallelism
	MinFetchBytes      = minFetchBytes
	MaxFetchBytes      = maxFetchBytes
	MaxBatchBytes      = maxBatchBytes
)

// IsName reports whether s may name a pipeline or a cluster: a non-empty
// run of letters, digits, '.', '_' and '-'.
func IsName(s string) bool { return isName(s) }

// CheckPattern returns the error Parse gives for a topic pattern (a Go RE2
// expression matched against whole topic names), naming expr; nil if it
// is valid.
func CheckPattern(expr string) error {
	_, err := compilePattern(expr)
	return err
}

// ParentPath drops the last element of a setting's path, as Error.Field
// spells it: "a.b[2]" → "a.b" → "a" → "".
func ParentPath(path string) string { return parentPath(path) }

// Nearest returns the candidate closest to key, ignoring case, '_', '-'
// and '.', if it is close enough to be the likely intent, as Parse
// suggests keys: at most one edit per three characters, and at least one.
func Nearest(key string, candidates []string) (string, bool) { return nearest(key, candidates) }

// EditDistance is the number of single-rune insertions, deletions,
// substitutions and transpositions of adjacent runes that turn a into b
// ("tsl" → "tls" is 1).
func EditDistance(a, b string) int { return editDistance(a, b) }

// MarshalSparse writes f as YAML holding only the settings that are set:
// non-zero, or at a path named in explicit ("pipelines[0].producer.retries",
// for a zero that means something). A present pointer to an empty struct is
// an empty mapping ("tls: {}"). comments, keyed by YAML path
// ("$.pipelines[0].source.brokers"), go beside their settings.
func MarshalSparse(f *File, explicit map[string]bool, comments yaml.CommentMap) ([]byte, error) {
	doc, _ := sparseYAML(reflect.ValueOf(f).Elem(), "", explicit)
	opts := []yaml.EncodeOption{yaml.IndentSequence(true)}
	if len(comments) > 0 {
		opts = append(opts, yaml.WithComment(comments))
	}
	return yaml.MarshalWithOptions(doc, opts...)
}

// sparseYAML returns v as a YAML value holding only the fields that are
// set: non-zero, or at a path named in explicit. A present pointer to an
// empty struct is an empty mapping ("tls: {}").
func sparseYAML(v reflect.Value, path string, explicit map[string]bool) (any, bool) {
	t := v.Type()
	switch {
	case isDuration(t):
		if v.Int() == 0 && !explicit[path] {
			return nil, false
		}
		return time.Duration(v.Int()).String(), true
	case t.Kind() == reflect.Pointer:
		if v.IsNil() {
			return nil, false
		}
		if t.Elem().Kind() != reflect.Struct {
			return v.Elem().Interface(), true
		}
		if x, ok := sparseYAML(v.Elem(), path, explicit); ok {
			return x, true
		}
		return yaml.MapSlice{}, true
	case t.Kind() == reflect.Struct:
		names, index := yamlFields(t)
		var m yaml.MapSlice
		for _, n := range names {
			if x, ok := sparseYAML(v.Field(index[n]), joinPath(path, n), explicit); ok {
				m = append(m, yaml.MapItem{Key: n, Value: x})
			}
		}
		return m, len(m) > 0
	case t.Kind() == reflect.Slice:
		if v.Len() == 0 {
			return nil, false
		}
		out := make([]any, v.Len())
		for i := range v.Len() {
			out[i], _ = sparseYAML(v.Index(i), fmt.Sprintf("%s[%d]", path, i), explicit)
		}
		return out, true
	case t.Kind() == reflect.Map:
		return v.Interface(), v.Len() > 0
	}
	if v.IsZero() && !explicit[path] {
		return nil, false
	}
	return v.Interface(), true
}
