package config

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// Load reads the configuration file at path and parses it; see Parse.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load config: %w", err)
	}
	return Parse(data, path)
}

// Parse decodes data, a YAML configuration, applies the defaults and
// validates the result. filename only labels errors.
//
// Decoding is strict: an unknown key, a value of the wrong type and an
// invalid setting are all errors, and all of them are reported together as
// one *Error each, joined with errors.Join, with the line and column of the
// key at fault. A key that is present with a zero value (retries: 0) keeps
// it; only absent keys get defaults. Top-level keys starting with "x-" are
// ignored, so that they can hold YAML anchors to reuse with aliases and
// merge keys (<<: *defaults). On error the returned *File is nil.
func Parse(data []byte, filename string) (*File, error) {
	return ParseWithStore(data, filename, "")
}

// ParseWithStore is Parse with store as the default of the store key
// instead of file://.catchup, for callers that are given their store
// elsewhere (a Lambda function, its table): the defaults that depend on
// the store, such as commit_interval, follow it.
func ParseWithStore(data []byte, filename, store string) (*File, error) {
	doc, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, syntaxError(filename, err)
	}
	var body ast.Node
	switch {
	case len(doc.Docs) > 1:
		return nil, &Error{File: filename, Line: docLine(doc.Docs[1]), Msg: "a config file holds one YAML document; remove the second \"---\""}
	case len(doc.Docs) == 1:
		body = doc.Docs[0].Body
	}

	d := &decoder{
		anchors: map[string][]*ast.AnchorNode{},
		pos:     map[string]token.Position{},
		failed:  map[string]bool{},
		homes:   keyHomes(),
	}
	f := File{Store: store} // a store key in data overwrites it
	if body != nil {
		d.collectAnchors(body)
		d.value(body, reflect.ValueOf(&f).Elem(), "")
	}
	// A value that failed to decode counts as absent, so that it gets its
	// default instead of a second error about its zero value.
	f.setDefaults(func(path string) bool { _, ok := d.pos[path]; return ok && !d.failed[path] })
	probs := d.probs
	for _, p := range f.check() {
		if !d.followsFailure(p.path) {
			probs = append(probs, p)
		}
	}
	if len(probs) == 0 {
		f.locatePasswords(filename, d.pos)
		return &f, nil
	}
	return nil, f.render(probs, filename, d.pos)
}

// locatePasswords records where each SASL block's password_env and
// password_file keys are, so that CheckPasswords can name the line.
func (f *File) locatePasswords(filename string, pos map[string]token.Position) {
	for i := range f.Pipelines {
		for side, s := range map[string]*SASL{"source": f.Pipelines[i].Source.SASL, "target": f.Pipelines[i].Target.SASL} {
			if s == nil {
				continue
			}
			for _, key := range []string{"password_env", "password_file"} {
				if p, ok := pos[fmt.Sprintf("pipelines[%d].%s.sasl.%s", i, side, key)]; ok {
					if s.keyAt == nil {
						s.keyAt = map[string]string{}
					}
					s.keyAt[key] = fmt.Sprintf("%s:%d:%d", filename, p.Line, p.Column)
				}
			}
		}
	}
}

// syntaxError turns a goccy/go-yaml parse error into an *Error with a
// position. The parser's message quotes the text it stopped at, which may
// be a password written inline: what it quotes is left out, unless it is
// a key of the schema (a duplicate key).
func syntaxError(filename string, err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) && ye.GetToken() != nil {
		p := ye.GetToken().Position
		return &Error{File: filename, Line: p.Line, Column: p.Column, Msg: "invalid YAML: " + unquoted(ye.GetMessage())}
	}
	return &Error{File: filename, Msg: "invalid YAML: " + unquoted(strings.SplitN(err.Error(), "\n", 2)[0])}
}

// quotedText is a string or a rune as Go's %q writes them.
var quotedText = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)+'`)

// unquoted is msg with every quoted text in it replaced by "…", but for a
// key of the schema and a single punctuation character (a bracket or a
// quote the parser looked for).
func unquoted(msg string) string {
	homes := keyHomes()
	return quotedText.ReplaceAllStringFunc(msg, func(q string) string {
		k, err := strconv.Unquote(q)
		if err == nil && homes[k] != nil {
			return q
		}
		if r := []rune(k); err == nil && len(r) == 1 && unicode.IsPunct(r[0]) {
			return q
		}
		return `"…"`
	})
}

func docLine(d *ast.DocumentNode) int {
	if d.Start != nil {
		return d.Start.Position.Line
	}
	return 0
}

// problem is one error found while decoding or checking, located by its
// path ("pipelines[0].source.brokers[1]") and, when known better than the
// path's key, by an explicit position.
type problem struct {
	path string
	pos  *token.Position
	msg  string
}

// render turns problems into joined *Errors, labelling pipelines by their
// decoded names and locating each problem by its own position or the
// position of its path's nearest present ancestor.
func (f *File) render(probs []problem, filename string, pos map[string]token.Position) error {
	errs := make([]error, 0, len(probs))
	for _, p := range probs {
		e := &Error{File: filename, Msg: p.msg}
		at := p.pos
		for path := p.path; at == nil && path != ""; path = parentPath(path) {
			if q, ok := pos[path]; ok {
				at = &q
			}
		}
		if at != nil {
			e.Line, e.Column = at.Line, at.Column
		}
		e.Pipeline, e.Field = f.splitPath(p.path)
		errs = append(errs, e)
	}
	slices.SortStableFunc(errs, func(a, b error) int {
		ea, eb := a.(*Error), b.(*Error)
		return cmp.Or(cmp.Compare(ea.Line, eb.Line), cmp.Compare(ea.Column, eb.Column))
	})
	return errors.Join(errs...)
}

// splitPath splits "pipelines[0].source.brokers" into the pipeline label
// "pipelines[0] (orders-dr)" and the field "source.brokers".
func (f *File) splitPath(path string) (pipeline, field string) {
	rest, ok := strings.CutPrefix(path, "pipelines[")
	if !ok {
		return "", path
	}
	num, rest, ok := strings.Cut(rest, "]")
	i, err := strconv.Atoi(num)
	if !ok || err != nil {
		return "", path
	}
	pipeline = fmt.Sprintf("pipelines[%d]", i)
	if i < len(f.Pipelines) && f.Pipelines[i].Name != "" {
		pipeline += fmt.Sprintf(" (%s)", f.Pipelines[i].Name)
	}
	return pipeline, strings.TrimPrefix(rest, ".")
}

// parentPath drops the last element of path: "a.b[2]" → "a.b" → "a" → "".
func parentPath(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i < 0 {
		return ""
	}
	return path[:i]
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// maxDepth bounds nesting, which only an alias that refers to its own
// ancestor can exceed in this schema.
const maxDepth = 64
