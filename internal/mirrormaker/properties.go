package mirrormaker

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/magiconair/properties"

	"github.com/kafka-catchup/catchup/internal/config"
)

// propFile converts one property file into the cluster at and the pipeline
// settings of its side.
type propFile struct {
	c        *converter
	name     string
	side     fileKind
	props    *properties.Properties
	lines    map[string]int
	mp       *pipe
	cl       *config.Cluster
	at       string // "source" or "target"
	protocol string // security.protocol, upper case
	// labels, when set, name each key as the user wrote it (a MirrorMaker 2
	// file's "A.sasl.jaas.config" for the "sasl.jaas.config" read here);
	// lines are then the lines of those keys.
	labels map[string]string
}

// label returns key as the user wrote it.
func (fc *propFile) label(key string) string {
	if l, ok := fc.labels[key]; ok {
		return l
	}
	if fc.labels != nil {
		return fc.labels[""] + key // the prefix the cluster's keys take
	}
	return key
}

// convertFile converts f into mp; it returns nil if f cannot be read.
func (c *converter) convertFile(f File, side fileKind, clusterName string, mp *pipe) *propFile {
	loader := &properties.Loader{Encoding: properties.UTF8, DisableExpansion: true}
	if !utf8.Valid(f.Data) {
		// Java's Properties.load(InputStream), which Kafka's tools use, reads
		// ISO-8859-1; decoding such a file as UTF-8 would turn a password's
		// bytes into U+FFFD and the login would fail for no visible reason.
		loader.Encoding = properties.ISO_8859_1
		c.add(Notice{File: f.Name, Kind: NoticeWarning, Msg: "not UTF-8: read as ISO-8859-1, as Java's Properties.load does"})
	}
	props, err := loader.LoadBytes(f.Data)
	if err != nil {
		c.add(Notice{File: f.Name, Kind: NoticeInvalid, Msg: propertiesError(err)})
		return nil
	}
	return c.convertProps(&propFile{c: c, name: f.Name, side: side, props: props, lines: keyLines(loader, f.Data), mp: mp}, clusterName)
}

// convertProps converts the properties of fc into its pipe.
func (c *converter) convertProps(fc *propFile, clusterName string) *propFile {
	mp, side := fc.mp, fc.side
	fc.cl, fc.at = &mp.p.Source, "source"
	if side == producerFile {
		fc.cl, fc.at = &mp.p.Target, "target"
	}
	fc.cl.Name = clusterName
	fc.security()
	for _, k := range fc.props.Keys() {
		fc.key(k)
	}
	fc.finish()
	return fc
}

// keyLines finds the line of each key. The properties library does not
// report lines, so it is asked again for every prefix of the file: a key's
// line is the first line at which a prefix defines it.
func keyLines(l *properties.Loader, data []byte) map[string]int {
	lines := map[string]int{}
	rest := data
	if bytes.Count(data, []byte("\n")) > 5000 {
		return lines // quadratic: not worth it for a file no one writes by hand
	}
	for n := 1; len(rest) > 0; n++ {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			i = len(rest) - 1
		}
		rest = rest[i+1:]
		p, err := l.LoadBytes(data[:len(data)-len(rest)])
		if err != nil {
			continue
		}
		for _, k := range p.Keys() {
			if _, ok := lines[k]; !ok {
				lines[k] = n
			}
		}
	}
	return lines
}

// get returns the value of key, trimmed as Kafka trims its settings.
func (fc *propFile) get(key string) (string, bool) {
	v, ok := fc.props.Get(key)
	return strings.TrimSpace(v), ok
}

func (fc *propFile) has(key string) bool { _, ok := fc.props.Get(key); return ok }

// note adds a notice about key.
func (fc *propFile) note(key string, kind NoticeKind, format string, args ...any) {
	fc.c.add(Notice{File: fc.name, Line: fc.lines[key], Key: fc.label(key), Kind: kind, Msg: fmt.Sprintf(format, args...)})
}

// set records that the pipeline setting at path came from key, so that a
// problem Parse finds with it is reported on key.
func (fc *propFile) set(path, key string) {
	fc.mp.origins[path] = keyOrigin{file: fc.name, key: fc.label(key), line: fc.lines[key]}
}

// cover records that a notice already explains the problem Parse would
// find with the setting at path.
func (fc *propFile) cover(path string) { fc.mp.covered[path] = true }

// key explains, and where it means something converts, one key.
func (fc *propFile) key(k string) {
	info, ok := fc.c.keys[k]
	var ans answer
	switch {
	case ok:
		ans = info[fc.side]
	default:
		if ans, ok = prefixAnswer(k); !ok {
			fc.unknown(k)
			return
		}
	}
	other := consumerFile
	if fc.side == consumerFile {
		other = producerFile
	}
	switch {
	case ans.kind == "":
		fc.note(k, NoticeNotApplicable, "a %s setting: MirrorMaker's %s ignored it too (move it to the %s file if it was meant for the %s cluster)",
			other, fc.side, map[fileKind]string{consumerFile: "--consumer.config", producerFile: "--producer.config"}[other],
			map[fileKind]string{consumerFile: "source", producerFile: "target"}[other])
	case ans.kind != NoticeMapped:
		fc.note(k, ans.kind, "%s", ans.why)
	case strings.HasPrefix(k, "ssl."):
		fc.ssl(k)
	case strings.HasPrefix(k, "sasl."):
		fc.saslKey(k)
	case fc.side == consumerFile:
		fc.consumerKey(k)
	default:
		fc.producerKey(k)
	}
}

// unknown explains a key that no Kafka client knows, suggesting the nearest.
func (fc *propFile) unknown(k string) {
	if best := nearestKeys(k, fc.c.known[fc.side]); len(best) > 0 {
		fc.note(k, NoticeUnknown, "not a Kafka %s setting (did you mean %s?)", fc.side, quoteOr(best))
		return
	}
	fc.note(k, NoticeUnknown, "not a Kafka %s setting that catchup knows; remove it, or fix it if it is misspelled", fc.side)
}

// common converts the keys that mean the same on both sides; ok is false
// if k is not one of them.
func (fc *propFile) common(k, v string) bool {
	switch k {
	case "bootstrap.servers":
		fc.brokers(k, v, "")
	case "metadata.broker.list":
		if fc.has("bootstrap.servers") {
			fc.note(k, NoticeNotApplicable, "the old name of bootstrap.servers, which is also set and wins, as in the Java client")
			return true
		}
		fc.brokers(k, v, " (metadata.broker.list is the old producer's name for bootstrap.servers)")
	case "client.id":
		fc.cl.ClientID = v
		fc.set(fc.at+".client_id", k)
		fc.note(k, NoticeMapped, "→ %s.client_id", fc.at)
	case "security.protocol":
		fc.securityNote(k)
	default:
		return false
	}
	return true
}

func (fc *propFile) brokers(k, v, why string) {
	for b := range strings.SplitSeq(v, ",") {
		if b = strings.TrimSpace(b); b != "" {
			fc.cl.Brokers = append(fc.cl.Brokers, b)
		}
	}
	fc.set(fc.at+".brokers", k)
	fc.note(k, NoticeMapped, "→ %s.brokers%s", fc.at, why)
}

// int parses v as an integer of at least lo, or explains why it is not.
func (fc *propFile) int(k, v string, lo int64) (int64, bool) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo {
		fc.note(k, NoticeInvalid, "%q is not an integer of at least %d", v, lo)
		return 0, false
	}
	return n, true
}

// finish reports what is missing once every key of the file is read.
func (fc *propFile) finish() {
	if len(fc.cl.Brokers) == 0 {
		msg := "no bootstrap.servers: list the " + fc.at + " brokers as host:port,host:port"
		if zk, ok := fc.get("zookeeper.connect"); ok {
			msg = fmt.Sprintf("no bootstrap.servers: the old consumer found the brokers through ZooKeeper (%s), but catchup "+
				"talks to the brokers directly: add bootstrap.servers=host:9092,... with the brokers of that cluster", zk)
		}
		fc.c.add(Notice{File: fc.name, Key: fc.label("bootstrap.servers"), Kind: NoticeInvalid, Msg: msg})
		fc.cover(fc.at + ".brokers")
	}
	if s := fc.cl.SASL; s != nil && !fc.mp.covered[fc.at+".sasl"] {
		switch {
		case s.Mechanism == "" && !fc.has("sasl.mechanism"):
			fc.c.add(Notice{File: fc.name, Key: fc.label("sasl.mechanism"), Kind: NoticeInvalid, Msg: fmt.Sprintf("not set, so with "+
				"security.protocol=%s the Java client used GSSAPI (Kerberos) with the JAAS file of -Djava.security.auth.login.config: "+
				"add sasl.mechanism=GSSAPI and sasl.jaas.config with its KafkaClient entry (Krb5LoginModule with useKeyTab=true, "+
				"keyTab and principal), or set sasl.mechanism to the one the brokers expect", fc.protocol)})
			fc.cover(fc.at + ".sasl")
		case s.Mechanism == "GSSAPI" && !fc.has("sasl.jaas.config"):
			fc.c.add(Notice{File: fc.name, Key: fc.label("sasl.jaas.config"), Kind: NoticeInvalid, Msg: "not set: GSSAPI needs a " +
				"principal and its keytab; add sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true " +
				"keyTab=\"/path/to.keytab\" principal=\"NAME@REALM\"; (if MirrorMaker read a JAAS file named by " +
				"-Djava.security.auth.login.config, copy its KafkaClient entry here)"})
			fc.cover(fc.at + ".sasl")
		case s.Mechanism == "OAUTHBEARER" && s.TokenEndpointURL == "" && s.TokenFile == "":
			fc.c.add(Notice{File: fc.name, Key: fc.label("sasl.oauthbearer.token.endpoint.url"), Kind: NoticeRefused,
				Msg: fmt.Sprintf("not set, so the Java client used "+whyUnsecuredOAuth, fc.at)})
			fc.cover(fc.at + ".sasl")
		case s.Mechanism == "OAUTHBEARER" && s.TokenEndpointURL != "" && s.ClientID == "":
			fc.c.add(Notice{File: fc.name, Key: fc.label("sasl.jaas.config"), Kind: NoticeInvalid, Msg: "no clientId: the token " +
				"endpoint needs the client's id and secret; add clientId=\"...\" clientSecret=\"...\" to the " +
				"OAuthBearerLoginModule entry of sasl.jaas.config"})
			fc.cover(fc.at + ".sasl")
		case s.Mechanism == "OAUTHBEARER" && s.TokenEndpointURL != "" && s.PasswordEnv == "":
			env := fc.c.passwordEnv(fc.cl.Name)
			s.PasswordEnv = env
			fc.c.add(Notice{File: fc.name, Key: fc.label("sasl.jaas.config"), Kind: NoticeAction, Msg: fmt.Sprintf("no clientSecret: "+
				"export %s with the client secret of %s before running catchup (%s.sasl.password_env)", env, s.ClientID, fc.at)})
		case s.Mechanism != "" && s.Mechanism != "AWS_MSK_IAM" && s.Mechanism != "OAUTHBEARER" && !fc.has("sasl.jaas.config"):
			fc.c.add(Notice{File: fc.name, Key: fc.label("sasl.jaas.config"), Kind: NoticeInvalid, Msg: fmt.Sprintf("not set: "+
				"%s needs a username; add sasl.jaas.config (if MirrorMaker read a JAAS file named by "+
				"-Djava.security.auth.login.config, copy its KafkaClient entry here)", s.Mechanism)})
			fc.cover(fc.at + ".sasl")
		}
	}
}

// nearestKeys returns the keys of one side (consumer or producer) that a
// misspelled key most likely meant: the nearest whole key, or else the keys
// with a dotted part near one of k's distinctive parts ("derializer.class"
// finds key.deserializer and value.deserializer on the consumer side).
func nearestKeys(k string, candidates []string) []string {
	if best, ok := config.Nearest(k, candidates); ok {
		return []string{best}
	}
	generic := map[string]bool{"class": true, "config": true, "bytes": true, "enable": true, "max": true, "min": true, "ms": true, "type": true}
	var out []string
	for _, c := range candidates {
	parts:
		for _, kp := range strings.Split(strings.ToLower(k), ".") {
			if len(kp) < 6 || generic[kp] {
				continue
			}
			for _, cp := range strings.Split(c, ".") {
				if config.EditDistance(kp, cp) <= max(1, len(kp)/3) {
					out = append(out, c)
					break parts
				}
			}
		}
	}
	if len(out) > 3 {
		return nil // too vague to be a suggestion
	}
	return out
}

// quoteOr joins quoted keys: "a", "a" or "b", "a", "b" or "c".
func quoteOr(keys []string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = strconv.Quote(k)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// propertiesLine finds the line in an error of the properties library.
var propertiesLine = regexp.MustCompile(`^properties: Line (\d+):`)

// propertiesError says which line of a file the properties library could
// not read, without the library's words: they quote the token it did not
// expect, which may be part of a password.
func propertiesError(err error) string {
	const form = " (write KEY=VALUE; a value continued on the next line ends with '\\')"
	if m := propertiesLine.FindStringSubmatch(err.Error()); m != nil {
		return "not a Java .properties file: line " + m[1] + " cannot be read" + form
	}
	return "not a Java .properties file" + form
}
