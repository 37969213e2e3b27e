package config

// The YAML decoder behind Parse: every problem collected with its position.

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// decoder decodes a YAML AST into Go values by reflection on their yaml
// tags. Unlike goccy/go-yaml's strict mode, which stops at the first unknown
// field, it carries on and collects every problem with its position.
// Scalars are still decoded by goccy/go-yaml.
type decoder struct {
	anchors map[string][]*ast.AnchorNode // by name, in document order
	pos     map[string]token.Position    // path → key position, for non-null values
	failed  map[string]bool              // paths whose value did not decode
	homes   map[string][]string          // key → where it belongs, for hints
	probs   []problem
	depth   int
}

func (d *decoder) addf(path string, at token.Position, format string, args ...any) {
	d.probs = append(d.probs, problem{path: path, pos: &at, msg: fmt.Sprintf(format, args...)})
}

// fail reports that the value at path could not be decoded.
func (d *decoder) fail(path string, at token.Position, format string, args ...any) {
	d.addf(path, at, format, args...)
	d.failed[path] = true
}

// followsFailure reports whether path is, or is under, a value that failed
// to decode, so that its zero value would only repeat the problem.
func (d *decoder) followsFailure(path string) bool {
	for ; path != ""; path = parentPath(path) {
		if d.failed[path] {
			return true
		}
	}
	return false
}

// collectAnchors records every anchor, including those under keys the
// decoder will not visit (x- keys, unknown keys).
func (d *decoder) collectAnchors(n ast.Node) {
	ast.Walk(visitFunc(func(n ast.Node) {
		if a, ok := n.(*ast.AnchorNode); ok {
			name := a.Name.GetToken().Value
			d.anchors[name] = append(d.anchors[name], a)
		}
	}), n)
}

type visitFunc func(ast.Node)

func (f visitFunc) Visit(n ast.Node) ast.Visitor { f(n); return f }

// resolve looks through anchors, aliases and collection tags to the node
// holding the value. An alias refers to the last anchor of its name defined
// before it, as YAML says.
func (d *decoder) resolve(n ast.Node) (ast.Node, error) {
	for range maxDepth {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.AliasNode:
			name := v.Value.GetToken().Value
			var found ast.Node
			for _, a := range d.anchors[name] {
				if a.Start.Position.Offset < v.Start.Position.Offset {
					found = a.Value
				}
			}
			if found == nil {
				// The name is not repeated: a password that starts with '*'
				// is read as an alias.
				return nil, errors.New("an alias (*name) refers to no anchor (&name) defined before it; " +
					"quote a value that starts with '*'")
			}
			n = found
		case *ast.TagNode:
			switch v.Value.(type) {
			case *ast.MappingNode, *ast.MappingValueNode, *ast.SequenceNode, *ast.AnchorNode, *ast.AliasNode:
				n = v.Value
			default:
				return n, nil // a tagged scalar: goccy/go-yaml applies the tag
			}
		default:
			return n, nil
		}
	}
	return nil, errors.New("aliases nest too deeply")
}

func isDuration(t reflect.Type) bool { return t == reflect.TypeFor[time.Duration]() }

// value decodes n into v, which is at path.
func (d *decoder) value(n ast.Node, v reflect.Value, path string) {
	d.depth++
	defer func() { d.depth-- }()
	at := nodePos(n)
	if d.depth > maxDepth {
		d.fail(path, at, "nested too deeply (does an alias refer to its own ancestor?)")
		return
	}
	n, err := d.resolve(n)
	if err != nil {
		d.fail(path, at, "%v", err)
		return
	}
	if isNull(n) {
		return
	}
	t := v.Type()
	switch {
	case isDuration(t):
		d.scalar(n, v, path)
	case t.Kind() == reflect.Pointer:
		p := reflect.New(t.Elem())
		if !v.IsNil() {
			p.Elem().Set(v.Elem())
		}
		d.value(n, p.Elem(), path)
		v.Set(p)
	case t.Kind() == reflect.Struct:
		d.structure(n, v, path)
	case t.Kind() == reflect.Slice:
		seq, ok := n.(*ast.SequenceNode)
		if !ok {
			d.fail(path, at, "want a list, got %s (write [a, b] or one \"- item\" per line)", describe(n))
			return
		}
		s := reflect.MakeSlice(t, len(seq.Values), len(seq.Values))
		for i, e := range seq.Values {
			p := fmt.Sprintf("%s[%d]", path, i)
			d.pos[p] = nodePos(e)
			d.value(e, s.Index(i), p)
		}
		v.Set(s)
	case t.Kind() == reflect.Map:
		entries, ok := d.entries(n, path)
		if !ok {
			d.fail(path, at, "want a mapping, got %s", describe(n))
			return
		}
		if v.IsNil() {
			v.Set(reflect.MakeMap(t))
		}
		for _, e := range entries {
			k := reflect.New(t.Key()).Elem()
			p := fmt.Sprintf("%s[%s]", path, keyName(e.Key))
			kpos := nodePos(e.Key)
			d.pos[p] = kpos
			before := len(d.probs)
			d.scalar(e.Key, k, p)
			if len(d.probs) > before {
				continue
			}
			elem := reflect.New(t.Elem()).Elem()
			d.value(e.Value, elem, p)
			v.SetMapIndex(k, elem)
		}
	default:
		d.scalar(n, v, path)
	}
}

// structure decodes the mapping n into the struct v, reporting every key
// that matches no yaml tag of v's type.
func (d *decoder) structure(n ast.Node, v reflect.Value, path string) {
	entries, ok := d.entries(n, path)
	if !ok {
		d.fail(path, nodePos(n), "want a mapping, got %s", describe(n))
		return
	}
	t := v.Type()
	names, index := yamlFields(t)
	for _, e := range entries {
		key := keyName(e.Key)
		at := nodePos(e.Key)
		i, ok := index[key]
		switch {
		case ok:
			p := joinPath(path, key)
			if rv, err := d.resolve(e.Value); err != nil || !isNull(rv) {
				d.pos[p] = at
			}
			d.value(e.Value, v.Field(i), p)
		case path == "" && strings.HasPrefix(key, "x-"):
			// a place for anchors
		case t == reflect.TypeFor[SASL]() && strings.EqualFold(key, "password"):
			d.addf(path, at, "inline %q is not allowed: passwords are never written in the config; "+
				"set password_env to the name of an environment variable that holds it, "+
				"password_file to a file that holds it, or password_secret_arn to an AWS Secrets Manager secret", key)
		default:
			d.addf(path, at, "%s", unknownKeyMsg(key, names, d.homes))
		}
	}
}

// entries lists the key-value pairs of the mapping n with merge keys
// (<<: *base, <<: [*a, *b]) expanded: explicit keys win over merged ones,
// and among merged mappings the first wins. ok is false if n is not a mapping.
func (d *decoder) entries(n ast.Node, path string) (entries []*ast.MappingValueNode, ok bool) {
	var own []*ast.MappingValueNode
	switch m := n.(type) {
	case *ast.MappingNode:
		own = m.Values
	case *ast.MappingValueNode:
		own = []*ast.MappingValueNode{m}
	default:
		return nil, false
	}
	d.depth++
	defer func() { d.depth-- }()
	if d.depth > maxDepth {
		d.fail(path, nodePos(n), "nested too deeply (does an alias refer to its own ancestor?)")
		return nil, true
	}
	var merged []*ast.MappingValueNode
	seen := map[string]bool{}
	for _, mv := range own {
		if _, isMerge := mv.Key.(*ast.MergeKeyNode); !isMerge {
			entries = append(entries, mv)
			seen[keyName(mv.Key)] = true
			continue
		}
		src, err := d.resolve(mv.Value)
		if err != nil {
			d.fail(path, nodePos(mv.Value), "%v", err)
			continue
		}
		srcs := []ast.Node{src}
		if seq, isSeq := src.(*ast.SequenceNode); isSeq {
			srcs = seq.Values
		}
		for _, s := range srcs {
			r, err := d.resolve(s)
			if err != nil {
				d.fail(path, nodePos(s), "%v", err)
				continue
			}
			sub, isMap := d.entries(r, path)
			if !isMap {
				d.fail(path, nodePos(mv.Key), "merge key << wants a mapping or a list of mappings, got %s", describe(r))
				continue
			}
			merged = append(merged, sub...)
		}
	}
	for _, mv := range merged {
		if k := keyName(mv.Key); !seen[k] {
			seen[k] = true
			entries = append(entries, mv)
		}
	}
	return entries, true
}

// scalar decodes the scalar n into v with goccy/go-yaml, which parses
// durations with time.ParseDuration and checks integer ranges.
func (d *decoder) scalar(n ast.Node, v reflect.Value, path string) {
	if v.Kind() == reflect.String {
		if s, ok := flowHostPort(n); ok {
			v.SetString(s)
			return
		}
	}
	p := reflect.New(v.Type())
	if err := yaml.NodeToValue(n, p.Interface()); err != nil {
		d.fail(path, nodePos(n), "want %s, got %s", describeType(v.Type()), describe(n))
		return
	}
	v.Set(p.Elem())
}

// flowHostPort works around goccy/go-yaml v1.19 reading "host:9092" in a
// flow list inside a flow mapping ({brokers: [host:9092]}) as the mapping
// {host: 9092}: YAML says a plain scalar may hold a ':' that is not
// followed by a space, so a one-entry mapping whose key, ':' and value
// touch is read back as the string it was written as.
func flowHostPort(n ast.Node) (string, bool) {
	var mv *ast.MappingValueNode
	switch m := n.(type) {
	case *ast.MappingNode:
		if len(m.Values) != 1 || m.Start == nil || m.Start.Type == token.MappingStartType {
			return "", false
		}
		mv = m.Values[0]
	case *ast.MappingValueNode:
		mv = m
	default:
		return "", false
	}
	k, colon, val := mv.Key.GetToken(), mv.Start, mv.Value.GetToken()
	if k == nil || colon == nil || val == nil {
		return "", false
	}
	if _, ok := mv.Value.(ast.ScalarNode); !ok || k.Type != token.StringType {
		return "", false
	}
	kp, cp, vp := k.Position, colon.Position, val.Position
	sameLine := kp.Line == cp.Line && cp.Line == vp.Line
	touching := kp.Column+len(k.Value) == cp.Column && vp.Column == cp.Column+1
	if !sameLine || !touching {
		return "", false
	}
	return k.Value + ":" + val.Value, true
}

// keyHomes maps every key of the schema to the places it belongs, relative
// to a pipeline ("producer", "source.tls"), to say where a misplaced key goes.
func keyHomes() map[string][]string {
	homes := map[string][]string{"store": {"the top level"}, "pipelines": {"the top level"}}
	var walk func(t reflect.Type, at string)
	walk = func(t reflect.Type, at string) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return
		}
		names, index := yamlFields(t)
		for _, name := range names {
			home := at
			if home == "" {
				home = "a pipeline"
			}
			homes[name] = append(homes[name], home)
			walk(t.Field(index[name]).Type, joinPath(at, name))
		}
	}
	walk(reflect.TypeFor[Pipeline](), "")
	return homes
}

// yamlFields returns the yaml keys of struct type t in declaration order
// and the field index of each.
func yamlFields(t reflect.Type) (names []string, index map[string]int) {
	index = map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		names = append(names, name)
		index[name] = i
	}
	return names, index
}

func keyName(k ast.MapKeyNode) string {
	var n ast.Node = k
	if mk, ok := k.(*ast.MappingKeyNode); ok {
		n = mk.Value
	}
	if tk := n.GetToken(); tk != nil {
		return tk.Value
	}
	return n.String()
}

func isNull(n ast.Node) bool {
	_, ok := n.(*ast.NullNode)
	return n == nil || ok
}

// nodePos is where n starts: the first key of a block mapping rather than
// its first ':', which is what goccy/go-yaml gives as its token.
func nodePos(n ast.Node) token.Position {
	switch v := n.(type) {
	case nil:
		return token.Position{}
	case *ast.MappingNode:
		if v.Start != nil && v.Start.Type == token.MappingStartType {
			return *v.Start.Position
		}
		if len(v.Values) > 0 {
			return nodePos(v.Values[0])
		}
	case *ast.MappingValueNode:
		return nodePos(v.Key)
	case *ast.MappingKeyNode:
		return *v.Start.Position
	case *ast.AnchorNode:
		return *v.Start.Position
	case *ast.AliasNode:
		return *v.Start.Position
	case *ast.TagNode:
		return *v.Start.Position
	}
	if tk := n.GetToken(); tk != nil {
		return *tk.Position
	}
	return token.Position{}
}

// describe names what n holds, for "want X, got Y" messages.
func describe(n ast.Node) string {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	}
	s := n.GetToken().Value
	if r := []rune(s); len(r) > 40 {
		s = string(r[:40]) + "…"
	}
	return strconv.Quote(s)
}

func describeType(t reflect.Type) string {
	switch {
	case isDuration(t):
		return `a duration such as "500ms", "30s", "5m" or "1h30m"`
	case t.Kind() == reflect.String:
		return "a string"
	case t.Kind() == reflect.Bool:
		return "true or false"
	case slices.Contains([]reflect.Kind{reflect.Int, reflect.Int64}, t.Kind()):
		return "an integer"
	case t.Kind() == reflect.Int32:
		return "an integer from -2147483648 to 2147483647"
	}
	return t.String()
}
