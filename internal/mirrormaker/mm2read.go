package mirrormaker

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
	"github.com/magiconair/properties"
)

// MM2Format is the shape a MirrorMaker 2 configuration was written in.
type MM2Format string

// The three ways MirrorMaker 2 is deployed.
const (
	// MM2Dedicated is the .properties file of connect-mirror-maker.sh.
	MM2Dedicated MM2Format = "dedicated"
	// MM2Connect is the JSON configuration of a MirrorSourceConnector
	// submitted to a Kafka Connect cluster (with "name" and "config", or
	// the config object alone).
	MM2Connect MM2Format = "connect"
	// MM2Strimzi is a Strimzi KafkaMirrorMaker2 custom resource (YAML).
	MM2Strimzi MM2Format = "strimzi"
)

// mm2Entry is one setting of a MirrorMaker 2 configuration, under the key
// MirrorMaker 2's dedicated mode would give it ("A.bootstrap.servers",
// "A->B.topics", "replication.factor"), and the key and line it has in
// the file.
type mm2Entry struct {
	key, value string
	label      string // as written: "spec.clusters[0].bootstrapServers", "source.cluster.bootstrap.servers"
	line       int
}

// readMM2 reads f, whatever its format, into entries in file order, with
// the cluster aliases and flows the format names itself (a Connect
// connector and a Strimzi mirror name theirs outside of "clusters").
func (c *converter) readMM2(f File) (MM2Format, []mm2Entry) {
	trimmed := bytes.TrimSpace(f.Data)
	switch {
	case bytes.HasPrefix(trimmed, []byte("{")):
		root, ok := c.yamlTree(f)
		if !ok {
			return MM2Connect, nil
		}
		return MM2Connect, c.connectEntries(f, root)
	case bytes.Contains(f.Data, []byte("KafkaMirrorMaker2")):
		root, ok := c.yamlTree(f)
		if !ok {
			return MM2Strimzi, nil
		}
		return MM2Strimzi, c.strimziEntries(f, root)
	}
	loader := &properties.Loader{Encoding: properties.UTF8, DisableExpansion: true}
	if !utf8.Valid(f.Data) {
		loader.Encoding = properties.ISO_8859_1 // as Java's Properties.load (see convertFile)
		c.add(Notice{File: f.Name, Kind: NoticeWarning, Msg: "not UTF-8: read as ISO-8859-1, as Java's Properties.load does"})
	}
	props, err := loader.LoadBytes(f.Data)
	if err != nil {
		c.add(Notice{File: f.Name, Kind: NoticeInvalid, Msg: propertiesError(err)})
		return MM2Dedicated, nil
	}
	lines := keyLines(loader, f.Data)
	var out []mm2Entry
	for _, k := range props.Keys() {
		v, _ := props.Get(k)
		out = append(out, mm2Entry{key: k, value: strings.TrimSpace(v), label: k, line: lines[k]})
	}
	return MM2Dedicated, out
}

// ynode is a YAML or JSON value with its line: a scalar, a mapping (keys
// in order) or a sequence.
type ynode struct {
	line   int
	scalar *string
	keys   []string
	vals   []*ynode
	items  []*ynode
}

func (n *ynode) get(key string) *ynode {
	if n == nil {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

func (n *ynode) str() string {
	if n == nil || n.scalar == nil {
		return ""
	}
	return *n.scalar
}

// syntaxError says where err, the parser's, found the file broken, and not
// what: the parser's messages quote the text they stopped at, which may be
// a password (a secret never reaches a notice).
func syntaxError(err error) string {
	var pe interface{ GetToken() *token.Token }
	if errors.As(err, &pe) {
		if tk := pe.GetToken(); tk != nil && tk.Position != nil {
			return fmt.Sprintf("a syntax error at line %d, column %d (the parser's message is left out: it quotes the file, secrets included)",
				tk.Position.Line, tk.Position.Column)
		}
	}
	return "a syntax error (the parser's message is left out: it quotes the file, secrets included)"
}

// yamlTree parses f (YAML, or JSON, which is YAML) with its lines.
func (c *converter) yamlTree(f File) (*ynode, bool) {
	file, err := parser.ParseBytes(f.Data, 0)
	if err != nil || len(file.Docs) == 0 || file.Docs[0].Body == nil {
		msg := "empty"
		if err != nil {
			msg = syntaxError(err)
		}
		c.add(Notice{File: f.Name, Kind: NoticeInvalid, Msg: "not a MirrorMaker 2 configuration (JSON or YAML): " + msg})
		return nil, false
	}
	root := toYNode(file.Docs[0].Body)
	if root.keys == nil {
		c.add(Notice{File: f.Name, Kind: NoticeInvalid, Msg: "not a MirrorMaker 2 configuration: the document is not a mapping"})
		return nil, false
	}
	return root, true
}

func toYNode(n ast.Node) *ynode {
	out := &ynode{}
	if n == nil {
		return out
	}
	if t := n.GetToken(); t != nil && t.Position != nil {
		out.line = t.Position.Line
	}
	switch v := n.(type) {
	case *ast.MappingNode:
		out.keys = []string{}
		for _, mv := range v.Values {
			out.keys = append(out.keys, mv.Key.GetToken().Value)
			out.vals = append(out.vals, toYNode(mv.Value))
			out.vals[len(out.vals)-1].line = mv.Key.GetToken().Position.Line
		}
	case *ast.MappingValueNode:
		out.keys = []string{v.Key.GetToken().Value}
		val := toYNode(v.Value)
		val.line = v.Key.GetToken().Position.Line
		out.vals = []*ynode{val}
	case *ast.SequenceNode:
		for _, it := range v.Values {
			out.items = append(out.items, toYNode(it))
		}
	case *ast.TagNode:
		return toYNode(v.Value)
	case *ast.AnchorNode:
		return toYNode(v.Value)
	case *ast.LiteralNode:
		s := v.Value.Value
		out.scalar = &s
	case *ast.NullNode:
		s := ""
		out.scalar = &s
	default:
		s := n.GetToken().Value
		out.scalar = &s
	}
	return out
}

// connectEntries reads a MirrorSourceConnector's Connect configuration:
// source.cluster.X and target.cluster.X become the two clusters' keys,
// source.consumer.X and producer.override.X their client keys, and the
// rest the settings of the one flow.
func (c *converter) connectEntries(f File, root *ynode) []mm2Entry {
	conf, prefix := root, ""
	var name *mm2Entry
	if cfg := root.get("config"); cfg != nil && cfg.keys != nil {
		conf, prefix = cfg, "config."
		for i, k := range root.keys {
			switch k {
			case "config":
			case "name":
				name = &mm2Entry{key: "connect.name", value: root.vals[i].str(), label: k, line: root.vals[i].line}
			default:
				c.add(Notice{File: f.Name, Line: root.vals[i].line, Key: k, Kind: NoticeUnknown,
					Msg: "not part of a Connect connector request, which holds \"name\" and \"config\""})
			}
		}
	}
	src, dst := "source", "target"
	if a := conf.get("source.cluster.alias").str(); a != "" {
		src = a
	}
	if a := conf.get("target.cluster.alias").str(); a != "" {
		dst = a
	}
	flow := src + "->" + dst
	out := []mm2Entry{{key: "clusters", value: src + "," + dst, label: prefix + "source.cluster.alias", line: conf.get("source.cluster.alias").lineOr(0)},
		{key: flow + ".enabled", value: "true", label: prefix + "connector.class", line: conf.get("connector.class").lineOr(0)}}
	for i, k := range conf.keys {
		v, line := conf.vals[i].str(), conf.vals[i].line
		key := flow + "." + k
		switch {
		case k == "source.cluster.alias" || k == "target.cluster.alias":
			key = "connect." + k
		case strings.HasPrefix(k, "source.cluster."):
			key = src + "." + strings.TrimPrefix(k, "source.cluster.")
		case strings.HasPrefix(k, "target.cluster."):
			key = dst + "." + strings.TrimPrefix(k, "target.cluster.")
		case strings.HasPrefix(k, "source.consumer."):
			key = src + ".consumer." + strings.TrimPrefix(k, "source.consumer.")
		case strings.HasPrefix(k, "producer.override."):
			key = dst + ".producer." + strings.TrimPrefix(k, "producer.override.")
		case strings.HasPrefix(k, "source.admin."), strings.HasPrefix(k, "target.admin."):
			key = strings.Replace(strings.Replace(k, "source.", src+".", 1), "target.", dst+".", 1)
		}
		out = append(out, mm2Entry{key: key, value: v, label: prefix + k, line: line})
	}
	if name != nil {
		out = append(out, *name)
	}
	return out
}

func (n *ynode) lineOr(def int) int {
	if n == nil {
		return def
	}
	return n.line
}

// strimziEntries reads a KafkaMirrorMaker2 resource: spec.clusters give
// the aliases and client settings, spec.mirrors the flows.
func (c *converter) strimziEntries(f File, root *ynode) []mm2Entry {
	var out []mm2Entry
	note := func(label string, line int, kind NoticeKind, format string, args ...any) {
		c.add(Notice{File: f.Name, Line: line, Key: label, Kind: kind, Msg: fmt.Sprintf(format, args...)})
	}
	whyK8s := "a Kubernetes setting of the MirrorMaker 2 deployment; catchup runs as a CLI, a container or AWS Lambda (docs/)"
	for i, k := range root.keys {
		v := root.vals[i]
		switch k {
		case "apiVersion", "kind", "metadata", "status":
			note(k, v.line, NoticeNotApplicable, "%s", "the Kubernetes resource's identity")
		case "spec":
		default:
			note(k, v.line, NoticeUnknown, "not part of a KafkaMirrorMaker2 resource")
		}
	}
	spec := root.get("spec")
	if spec == nil {
		note("spec", 0, NoticeInvalid, "missing: a KafkaMirrorMaker2 resource lists its clusters and mirrors under spec")
		return nil
	}
	var aliases []string
	for i, k := range spec.keys {
		v := spec.vals[i]
		label := "spec." + k
		switch k {
		case "clusters":
			for j, cl := range v.items {
				alias := cl.get("alias").str()
				if alias == "" {
					note(fmt.Sprintf("%s[%d].alias", label, j), cl.line, NoticeInvalid, "missing: every cluster needs an alias")
					continue
				}
				aliases = append(aliases, alias)
				out = append(out, c.strimziCluster(f, fmt.Sprintf("%s[%d]", label, j), alias, cl)...)
			}
		case "mirrors":
			for j, m := range v.items {
				out = append(out, c.strimziMirror(f, fmt.Sprintf("%s[%d]", label, j), m)...)
			}
		case "connectCluster":
			out = append(out, mm2Entry{key: "strimzi.connectCluster", value: v.str(), label: label, line: v.line})
		case "version", "replicas", "image", "resources", "jvmOptions", "logging", "metricsConfig", "template",
			"livenessProbe", "readinessProbe", "rack", "tracing", "externalConfiguration", "clientRackInitImage",
			"jmxOptions", "build", "plugins":
			note(label, v.line, NoticeNotApplicable, "%s", whyK8s)
		default:
			note(label, v.line, NoticeUnknown, "not a setting of a KafkaMirrorMaker2 spec that catchup knows")
		}
	}
	return append([]mm2Entry{{key: "clusters", value: strings.Join(aliases, ","), label: "spec.clusters", line: spec.get("clusters").lineOr(0)}}, out...)
}

// strimziCluster reads one of spec.clusters. Its authentication and tls
// become entries under keys of the alias that only Strimzi has
// ("A.strimzi.authentication.type"), converted by strimziSecurity.
func (c *converter) strimziCluster(f File, label, alias string, cl *ynode) []mm2Entry {
	var out []mm2Entry
	for i, k := range cl.keys {
		v := cl.vals[i]
		l := label + "." + k
		switch k {
		case "alias":
			out = append(out, mm2Entry{key: "strimzi.alias", value: alias, label: l, line: v.line})
		case "bootstrapServers":
			out = append(out, mm2Entry{key: alias + ".bootstrap.servers", value: v.str(), label: l, line: v.line})
		case "config":
			for j, ck := range v.keys {
				out = append(out, mm2Entry{key: alias + "." + ck, value: v.vals[j].str(), label: l + "." + ck, line: v.vals[j].line})
			}
		case "tls", "authentication":
			out = append(out, flatten(alias+".strimzi."+k, l, v)...)
		default:
			out = append(out, mm2Entry{key: alias + ".strimzi." + k, value: v.str(), label: l, line: v.line})
		}
	}
	return out
}

// flatten turns a nested Strimzi block into one entry per scalar, keyed
// by its path ("A.strimzi.tls.trustedCertificates[0].secretName").
func flatten(key, label string, n *ynode) []mm2Entry {
	switch {
	case n.keys != nil:
		var out []mm2Entry
		for i, k := range n.keys {
			out = append(out, flatten(key+"."+k, label+"."+k, n.vals[i])...)
		}
		return out
	case n.items != nil:
		var out []mm2Entry
		for i, it := range n.items {
			s := "[" + strconv.Itoa(i) + "]"
			out = append(out, flatten(key+s, label+s, it)...)
		}
		return out
	}
	return []mm2Entry{{key: key, value: n.str(), label: label, line: n.line}}
}

// strimziMirror reads one of spec.mirrors into the keys of its flow.
func (c *converter) strimziMirror(f File, label string, m *ynode) []mm2Entry {
	src, dst := m.get("sourceCluster").str(), m.get("targetCluster").str()
	if src == "" || dst == "" {
		c.add(Notice{File: f.Name, Line: m.line, Key: label, Kind: NoticeInvalid, Msg: "a mirror needs sourceCluster and targetCluster"})
		return nil
	}
	flow := src + "->" + dst
	var out []mm2Entry
	for i, k := range m.keys {
		v := m.vals[i]
		l := label + "." + k
		switch k {
		case "sourceCluster":
			out = append(out, mm2Entry{key: flow + ".enabled", value: "true", label: l, line: v.line})
		case "targetCluster":
			out = append(out, mm2Entry{key: "strimzi.targetCluster", value: dst, label: l, line: v.line})
		case "topicsPattern":
			out = append(out, mm2Entry{key: flow + ".topics", value: v.str(), label: l, line: v.line})
		case "topicsExcludePattern", "topicsBlacklistPattern":
			out = append(out, mm2Entry{key: flow + ".topics.exclude", value: v.str(), label: l, line: v.line})
		case "groupsPattern":
			out = append(out, mm2Entry{key: flow + ".groups", value: v.str(), label: l, line: v.line})
		case "groupsExcludePattern", "groupsBlacklistPattern":
			out = append(out, mm2Entry{key: flow + ".groups.exclude", value: v.str(), label: l, line: v.line})
		case "sourceConnector", "checkpointConnector", "heartbeatConnector":
			for j, ck := range v.keys {
				cv := v.vals[j]
				switch ck {
				case "config":
					for n, key := range cv.keys {
						out = append(out, mm2Entry{key: flow + "." + key, value: cv.vals[n].str(), label: l + ".config." + key, line: cv.vals[n].line})
					}
				case "tasksMax":
					key := flow + ".tasks.max"
					if k != "sourceConnector" {
						key = flow + ".strimzi." + k + ".tasksMax"
					}
					out = append(out, mm2Entry{key: key, value: cv.str(), label: l + "." + ck, line: cv.line})
				default:
					out = append(out, mm2Entry{key: flow + ".strimzi." + k + "." + ck, value: cv.str(), label: l + "." + ck, line: cv.line})
				}
			}
			if k == "heartbeatConnector" {
				out = append(out, mm2Entry{key: flow + ".emit.heartbeats.enabled", value: "true", label: l, line: v.line})
			}
		default:
			out = append(out, mm2Entry{key: flow + ".strimzi." + k, value: v.str(), label: l, line: v.line})
		}
	}
	return out
}
