package config

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/magiconair/properties"
)

// MMFile is one MirrorMaker property file (a --consumer.config or the
// --producer.config), read by the caller.
type MMFile struct {
	// Name is the file's path. It labels notices and names the cluster in
	// provenance headers (and the pipeline, when there is no group.id).
	Name string
	Data []byte
}

// MMFlags are MirrorMaker's command-line flags other than the property
// files, as given on the command line: an empty string means not given.
// FromMirrorMaker checks the values and explains each one in a notice.
type MMFlags struct {
	// Whitelist (--whitelist or --include) and Blacklist select topics: Java
	// regular expressions, or MirrorMaker's comma-separated lists.
	Whitelist, Blacklist string
	// WhitelistFlag is the flag that gave Whitelist, for notices
	// (default "--whitelist").
	WhitelistFlag string
	// NumStreams and NumProducers become the pipelines' parallelism.
	NumStreams, NumProducers string
	// AbortOnSendFailure is "true" (catchup's behaviour) or "false".
	AbortOnSendFailure string
	// OffsetCommitIntervalMS becomes commit_interval.
	OffsetCommitIntervalMS string
	// MessageHandler and RebalanceListener name Java classes, which catchup
	// cannot run; the Args go with them.
	MessageHandler, MessageHandlerArgs       string
	RebalanceListener, RebalanceListenerArgs string
	// NewConsumer is the --new.consumer flag of MirrorMaker 0.9 to 1.x.
	NewConsumer bool
	// Store is the checkpoint store, which MirrorMaker had no setting for
	// (default "file://.catchup").
	Store string
	// AllowDataLoss accepts settings that can lose records (acks=0, dropping
	// records when a queue is full or a send fails) instead of refusing them.
	AllowDataLoss bool
	// CreateTopics (--create-topics, catchup's own flag) sets create_topics
	// on every pipeline: missing target topics are created with the source's
	// partition count. Off by default, like MirrorMaker, which relied on the
	// target's auto.create.topics.enable.
	CreateTopics bool
}

// NoticeKind classifies a Notice.
type NoticeKind string

// Notice kinds. Unknown, refused and invalid ones stop the conversion.
const (
	NoticeMapped        NoticeKind = "mapped"         // converted into the YAML
	NoticeObsolete      NoticeKind = "obsolete"       // a setting of a Kafka client that no longer exists
	NoticeNotApplicable NoticeKind = "not applicable" // catchup works another way; the notice says how
	NoticeAction        NoticeKind = "action"         // converted, but the user must do something first
	NoticeWarning       NoticeKind = "warning"        // converted, but catchup behaves differently
	NoticeUnknown       NoticeKind = "unknown"        // not a key catchup knows: a typo?
	NoticeRefused       NoticeKind = "refused"        // a setting catchup will not honour (data loss, Java code)
	NoticeInvalid       NoticeKind = "invalid"        // a value that is wrong, or a setting that is missing
)

// Blocking reports whether a notice of kind k stops the conversion.
func (k NoticeKind) Blocking() bool {
	return k == NoticeUnknown || k == NoticeRefused || k == NoticeInvalid
}

// Notice is what FromMirrorMaker says about one property, flag or
// conversion result.
type Notice struct {
	// File is the property file; empty for a command-line flag.
	File string
	// Line is the 1-based line of Key in File; 0 when the key is absent or
	// is a flag.
	Line int
	// Key is the property (like "bootstrap.servers") or the flag (like
	// "--num.streams"); empty for a notice about the whole conversion.
	Key  string
	Kind NoticeKind
	// Msg explains the outcome. It never holds a password.
	Msg string
}

// String formats n as "FILE:LINE: KEY: KIND: MSG", leaving out the parts
// that are empty.
func (n Notice) String() string {
	var b strings.Builder
	loc := n.File
	if n.Line > 0 {
		loc += ":" + strconv.Itoa(n.Line)
	}
	for _, part := range []string{loc, n.Key, string(n.Kind)} {
		if part != "" {
			b.WriteString(part)
			b.WriteString(": ")
		}
	}
	b.WriteString(n.Msg)
	return b.String()
}

// MirrorMakerError is returned by FromMirrorMaker when a notice is blocking.
type MirrorMakerError struct {
	Problems []Notice // the blocking notices, also in Migration.Notices
}

func (e *MirrorMakerError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, n := range e.Problems {
		lines[i] = n.String()
	}
	return fmt.Sprintf("the MirrorMaker configuration cannot be converted (%d problems):\n%s", len(e.Problems), strings.Join(lines, "\n"))
}

// Migration is a MirrorMaker configuration converted to catchup's.
type Migration struct {
	// File is YAML parsed back by Parse: defaults set and validated, ready
	// to run. Nil when FromMirrorMaker returned an error.
	File *File
	// YAML is the equivalent configuration file. It never holds a password:
	// SASL blocks name an environment variable (password_env) instead.
	// When FromMirrorMaker returned an error it is a draft, headed "NOT
	// RUNNABLE YET", with the problems as comments; nil if no pipeline
	// could be built.
	YAML []byte
	// Notices explain every key and flag, in file order, then the problems
	// that Parse found in the result.
	Notices []Notice
	// Passwords holds the passwords found in sasl.jaas.config by the
	// environment variable that File names for each; every way of printing
	// them gives "[REDACTED]".
	Passwords map[string]Secret
}

// FromMirrorMaker converts a MirrorMaker command line — its consumer
// configs, its producer config and its other flags — into a catchup
// configuration: one pipeline per consumer config, named after its group.id
// (the checkpoint namespace), all copying into the producer config's
// cluster. Every key and flag gets a notice saying how it was converted or
// why it was not. The property files are Java .properties, read as UTF-8.
//
// Keys that are unknown, values that are invalid, and settings that catchup
// will not honour (acks=0 and other ways of losing records, unless
// flags.AllowDataLoss; Java message handlers; Kerberos) make the conversion
// fail: the error is a *MirrorMakerError, and the returned Migration still
// holds every notice and, when a pipeline could be built, a draft YAML with
// each problem as a comment beside the setting it concerns (or in the
// header), but no File.
func FromMirrorMaker(consumers []MMFile, producer MMFile, flags MMFlags) (*Migration, error) {
	c := &mmConv{flags: flags, keys: mmKeys(), passwords: map[string]Secret{}, envs: map[string]string{}}
	for _, k := range slices.Sorted(maps.Keys(c.keys)) {
		for side, ans := range c.keys[k] {
			if ans.kind != "" {
				c.known[side] = append(c.known[side], k)
			}
		}
	}
	if c.flags.WhitelistFlag == "" {
		c.flags.WhitelistFlag = "--whitelist"
	}
	if c.flags.Store == "" {
		c.flags.Store = DefaultStore
	}
	if len(consumers) == 0 {
		c.add(Notice{Key: "--consumer.config", Kind: NoticeInvalid, Msg: "required: give one property file per source cluster"})
	}
	if producer.Name == "" && producer.Data == nil {
		c.add(Notice{Key: "--producer.config", Kind: NoticeInvalid, Msg: "required: the property file of the target cluster"})
	}

	names := c.clusterNames(consumers, producer)
	var pipes []*mmPipe
	used := map[string]bool{}
	for i, f := range consumers {
		mp := newMMPipe()
		if fc := c.convertFile(f, mmConsumer, names[i], mp); fc != nil {
			c.namePipeline(fc, used)
			pipes = append(pipes, mp)
		}
	}
	target := newMMPipe()
	if producer.Name == "" && producer.Data == nil || c.convertFile(producer, mmProducer, names[len(names)-1], target) == nil {
		target.covered["target"] = true // a notice said why there is no target
	}
	flagPipe := c.convertFlags()
	if c.flags.CreateTopics {
		c.add(Notice{Key: "--create-topics", Kind: NoticeMapped, Msg: "→ create_topics: true: missing target topics are created with the source's partition count before copying"})
	}
	if len(consumers) > 1 {
		c.add(Notice{Key: "--consumer.config", Kind: NoticeWarning, Msg: fmt.Sprintf("%d source clusters copy into one "+
			"target under the same topic names: a topic that exists on several sources would be written by several "+
			"pipelines, and the exact resume assumes one writer per target partition; make sure no selected topic is "+
			"on two sources, or set target_topic: \"{source}.{topic}\" in the YAML to keep them apart", len(consumers))})
	}

	f := &File{Store: c.flags.Store}
	explicit := map[string]bool{}
	origins := make([]map[string]mmOrigin, len(pipes))
	covered := make([]map[string]bool, len(pipes))
	for i, mp := range pipes {
		mp.merge(target, func(p *Pipeline) { p.Target, p.Producer = target.p.Target, target.p.Producer })
		mp.merge(flagPipe, func(p *Pipeline) {
			p.Topics, p.Parallelism, p.CommitInterval = flagPipe.p.Topics, flagPipe.p.Parallelism, flagPipe.p.CommitInterval
		})
		if c.flags.CreateTopics {
			mp.p.CreateTopics = true
		}
		f.Pipelines = append(f.Pipelines, mp.p)
		for path := range mp.explicit {
			explicit[fmt.Sprintf("pipelines[%d].%s", i, path)] = true
		}
		origins[i], covered[i] = mp.origins, mp.covered
	}

	m := &Migration{Passwords: c.passwords}
	if len(f.Pipelines) > 0 {
		m.YAML = c.yaml(f, explicit, consumers, producer, nil, nil)
		parsed, err := Parse(m.YAML, "catchup.yaml")
		for _, e := range joinedErrors(err) {
			c.addParseProblem(e, origins, covered)
		}
		m.File = parsed
	}
	m.Notices = c.notices
	var blocking []Notice
	for _, n := range c.notices {
		if n.Kind.Blocking() {
			blocking = append(blocking, n)
		}
	}
	if len(blocking) > 0 {
		m.File, m.YAML = nil, nil
		if len(f.Pipelines) > 0 {
			comments, rest := problemComments(blocking, origins)
			head := []string{fmt.Sprintf("NOT RUNNABLE YET: %d problems, each beside its setting (# PROBLEM: ...) or listed here;", len(blocking)),
				"fix them in the MirrorMaker files and convert again, or fix this file."}
			for _, n := range rest {
				head = append(head, "PROBLEM: "+n.String())
			}
			m.YAML = c.yaml(f, explicit, consumers, producer, comments, head)
		}
		return m, &MirrorMakerError{Problems: blocking}
	}
	return m, nil
}

// mmConv holds the state of one conversion.
type mmConv struct {
	flags     MMFlags
	keys      map[string]mmKey
	known     [2][]string // per mmSide, sorted: suggestions come from the file's own kind
	notices   []Notice
	passwords map[string]Secret
	envs      map[string]string // password variable → cluster
}

// add records n unless the same notice was already given (a problem in the
// target shows once, not once per pipeline).
func (c *mmConv) add(n Notice) {
	if !slices.Contains(c.notices, n) {
		c.notices = append(c.notices, n)
	}
}

// mmOrigin is the property a setting of the YAML came from.
type mmOrigin struct {
	file, key string
	line      int
}

// mmPipe is one pipeline being converted, with where each setting came
// from; paths are relative to the pipeline ("source.brokers").
type mmPipe struct {
	p        Pipeline
	origins  map[string]mmOrigin
	explicit map[string]bool // settings written even when zero (retries: 0)
	covered  map[string]bool // settings whose problem a notice already explains
}

func newMMPipe() *mmPipe {
	return &mmPipe{origins: map[string]mmOrigin{}, explicit: map[string]bool{}, covered: map[string]bool{}}
}

// merge copies the settings of from into mp with copy, and from's
// bookkeeping with them.
func (mp *mmPipe) merge(from *mmPipe, copyFields func(p *Pipeline)) {
	copyFields(&mp.p)
	maps.Copy(mp.origins, from.origins)
	maps.Copy(mp.explicit, from.explicit)
	maps.Copy(mp.covered, from.covered)
}

// clusterNames names the source clusters and the target (last) after their
// files, "sourceCluster1Consumer.config" giving "sourceCluster1", each name
// distinct: the names go into provenance headers, where two sources must
// differ.
func (c *mmConv) clusterNames(consumers []MMFile, producer MMFile) []string {
	names := make([]string, 0, len(consumers)+1)
	for _, f := range consumers {
		names = append(names, mmStem(f.Name, "consumer", "source"))
	}
	names = append(names, mmStem(producer.Name, "producer", "target"))
	return uniqueNames(names, "-")
}

// uniqueNames appends sep and a number to each name already used before it.
func uniqueNames(names []string, sep string) []string {
	seen := map[string]bool{}
	out := make([]string, len(names))
	for i, n := range names {
		u := n
		for k := 2; seen[u]; k++ {
			u = n + sep + strconv.Itoa(k)
		}
		seen[u] = true
		out[i] = u
	}
	return out
}

// mmStem derives a cluster name from a file path: the base name without
// its extension or a trailing role word ("consumer"), reduced to the
// characters a name may hold; def if nothing is left.
func mmStem(path, role, def string) string {
	base := filepath.Base(path)
	for _, ext := range []string{".config", ".properties", ".conf", ".cfg", ".props"} {
		if len(base) > len(ext) && strings.EqualFold(base[len(base)-len(ext):], ext) {
			base = base[:len(base)-len(ext)]
			break
		}
	}
	if strings.EqualFold(base, role) {
		return def
	}
	if len(base) > len(role) && strings.EqualFold(base[len(base)-len(role):], role) {
		base = strings.TrimRight(base[:len(base)-len(role)], "-_.")
	}
	if s := sanitizeName(base); s != "" && s != "." {
		return s
	}
	return def
}

// sanitizeName replaces every character a name may not hold with '-'.
func sanitizeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if isName(string(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}

// mmFile converts one property file into the cluster at and the pipeline
// settings of its side.
type mmFile struct {
	c        *mmConv
	name     string
	side     mmSide
	props    *properties.Properties
	lines    map[string]int
	mp       *mmPipe
	cl       *Cluster
	at       string // "source" or "target"
	protocol string // security.protocol, upper case
}

// convertFile converts f into mp; it returns nil if f cannot be read.
func (c *mmConv) convertFile(f MMFile, side mmSide, clusterName string, mp *mmPipe) *mmFile {
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
		// The library's message says where; it quotes no value.
		c.add(Notice{File: f.Name, Kind: NoticeInvalid, Msg: "not a Java .properties file: " + err.Error()})
		return nil
	}
	fc := &mmFile{c: c, name: f.Name, side: side, props: props, lines: keyLines(loader, f.Data), mp: mp}
	fc.cl, fc.at = &mp.p.Source, "source"
	if side == mmProducer {
		fc.cl, fc.at = &mp.p.Target, "target"
	}
	fc.cl.Name = clusterName
	fc.security()
	for _, k := range props.Keys() {
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
func (fc *mmFile) get(key string) (string, bool) {
	v, ok := fc.props.Get(key)
	return strings.TrimSpace(v), ok
}

func (fc *mmFile) has(key string) bool { _, ok := fc.props.Get(key); return ok }

// note adds a notice about key.
func (fc *mmFile) note(key string, kind NoticeKind, format string, args ...any) {
	fc.c.add(Notice{File: fc.name, Line: fc.lines[key], Key: key, Kind: kind, Msg: fmt.Sprintf(format, args...)})
}

// set records that the pipeline setting at path came from key, so that a
// problem Parse finds with it is reported on key.
func (fc *mmFile) set(path, key string) {
	fc.mp.origins[path] = mmOrigin{file: fc.name, key: key, line: fc.lines[key]}
}

// cover records that a notice already explains the problem Parse would
// find with the setting at path.
func (fc *mmFile) cover(path string) { fc.mp.covered[path] = true }

// tls and sasl report what security.protocol turns on.
func (fc *mmFile) tls() bool  { return strings.HasSuffix(fc.protocol, "SSL") }
func (fc *mmFile) sasl() bool { return strings.HasPrefix(fc.protocol, "SASL_") }

// security reads security.protocol first: it decides whether the ssl.* and
// sasl.* keys mean anything.
func (fc *mmFile) security() {
	v, ok := fc.get("security.protocol")
	fc.protocol = strings.ToUpper(v)
	if !ok {
		fc.protocol = "PLAINTEXT"
	}
	switch fc.protocol {
	case "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL":
	default:
		fc.note("security.protocol", NoticeInvalid, "%q is not a security protocol; use PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", v)
		fc.protocol = "PLAINTEXT"
		return
	}
	if fc.tls() {
		fc.cl.TLS = &TLS{}
		fc.set(fc.at+".tls", "security.protocol")
	}
	if fc.sasl() {
		fc.cl.SASL = &SASL{}
		fc.set(fc.at+".sasl", "security.protocol")
	}
}

// key explains, and where it means something converts, one key.
func (fc *mmFile) key(k string) {
	info, ok := fc.c.keys[k]
	var ans mmAnswer
	switch {
	case ok:
		ans = info[fc.side]
	default:
		if ans, ok = mmPrefixAnswer(k); !ok {
			fc.unknown(k)
			return
		}
	}
	other := mmConsumer
	if fc.side == mmConsumer {
		other = mmProducer
	}
	switch {
	case ans.kind == "":
		fc.note(k, NoticeNotApplicable, "a %s setting: MirrorMaker's %s ignored it too (move it to the %s file if it was meant for the %s cluster)",
			other, fc.side, map[mmSide]string{mmConsumer: "--consumer.config", mmProducer: "--producer.config"}[other],
			map[mmSide]string{mmConsumer: "source", mmProducer: "target"}[other])
	case ans.kind != NoticeMapped:
		fc.note(k, ans.kind, "%s", ans.why)
	case strings.HasPrefix(k, "ssl."):
		fc.ssl(k)
	case strings.HasPrefix(k, "sasl."):
		fc.saslKey(k)
	case fc.side == mmConsumer:
		fc.consumerKey(k)
	default:
		fc.producerKey(k)
	}
}

// unknown explains a key that no Kafka client knows, suggesting the nearest.
func (fc *mmFile) unknown(k string) {
	if best := nearestMMKeys(k, fc.c.known[fc.side]); len(best) > 0 {
		fc.note(k, NoticeUnknown, "not a Kafka %s setting (did you mean %s?)", fc.side, quoteOr(best))
		return
	}
	fc.note(k, NoticeUnknown, "not a Kafka %s setting that catchup knows; remove it, or fix it if it is misspelled", fc.side)
}

// common converts the keys that mean the same on both sides; ok is false
// if k is not one of them.
func (fc *mmFile) common(k, v string) bool {
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

func (fc *mmFile) brokers(k, v, why string) {
	for b := range strings.SplitSeq(v, ",") {
		if b = strings.TrimSpace(b); b != "" {
			fc.cl.Brokers = append(fc.cl.Brokers, b)
		}
	}
	fc.set(fc.at+".brokers", k)
	fc.note(k, NoticeMapped, "→ %s.brokers%s", fc.at, why)
}

func (fc *mmFile) securityNote(k string) {
	switch fc.protocol {
	case "PLAINTEXT":
		if v, _ := fc.get(k); strings.EqualFold(v, "PLAINTEXT") {
			fc.note(k, NoticeMapped, "→ no %s.tls or %s.sasl block: plaintext, as catchup's default", fc.at, fc.at)
		}
	case "SSL":
		fc.note(k, NoticeMapped, "→ %s.tls: TLS, with the broker's certificate and host name verified", fc.at)
	case "SASL_PLAINTEXT":
		fc.note(k, NoticeMapped, "→ %s.sasl, without TLS", fc.at)
	case "SASL_SSL":
		fc.note(k, NoticeMapped, "→ %s.tls and %s.sasl", fc.at, fc.at)
	}
}

// consumerKey converts a key of a consumer config.
func (fc *mmFile) consumerKey(k string) {
	v, _ := fc.get(k)
	if fc.common(k, v) {
		return
	}
	p := &fc.mp.p
	switch k {
	case "group.id":
		// namePipeline uses it once every key is read.
	case "auto.offset.reset":
		switch strings.ToLower(v) {
		case "smallest", "earliest":
			p.Start = "earliest"
		case "largest", "latest":
			p.Start = "latest"
		case "none":
			fc.note(k, NoticeWarning, "catchup has no \"none\": a partition without a checkpoint starts at start "+
				"(earliest, so nothing is lost); set start_offsets in the YAML to say exactly where each partition starts")
			return
		default:
			fc.note(k, NoticeInvalid, "%q is not valid; use earliest (or smallest), latest (or largest) or none", v)
			return
		}
		fc.set("start", k)
		old := ""
		if v == "smallest" || v == "largest" {
			old = " (the old consumer's name for " + p.Start + ")"
		}
		fc.note(k, NoticeMapped, "→ start: %s%s, for a partition without a checkpoint", p.Start, old)
	case "isolation.level":
		switch v {
		case "read_committed", "read_uncommitted":
			p.Isolation = v
			fc.set("isolation", k)
			fc.note(k, NoticeMapped, "→ isolation")
		default:
			fc.note(k, NoticeInvalid, "%q is not valid; use read_committed or read_uncommitted", v)
		}
	case "fetch.message.max.bytes", "max.partition.fetch.bytes":
		if k == "fetch.message.max.bytes" && fc.has("max.partition.fetch.bytes") {
			fc.note(k, NoticeNotApplicable, "the old consumer's name for max.partition.fetch.bytes, which is also set and wins")
			return
		}
		n, ok := fc.int(k, v, 1)
		if !ok {
			return
		}
		p.FetchBytes = int32(min(max(n, minFetchBytes), maxFetchBytes))
		fc.set("fetch_bytes", k)
		msg := "→ fetch_bytes, the most bytes one fetch asks for per partition"
		if int64(p.FetchBytes) != n {
			msg += fmt.Sprintf(" (%d: catchup's bounds are %d to %d)", p.FetchBytes, minFetchBytes, maxFetchBytes)
		}
		if k == "fetch.message.max.bytes" {
			msg += "; fetch.message.max.bytes is the old consumer's name for max.partition.fetch.bytes"
		}
		fc.note(k, NoticeMapped, "%s", msg)
	}
}

// producerKey converts a key of the producer config.
func (fc *mmFile) producerKey(k string) {
	v, _ := fc.get(k)
	if fc.common(k, v) {
		return
	}
	w := &fc.mp.p.Producer
	newer := map[string]string{"request.required.acks": "acks", "message.send.max.retries": "retries", "compression.codec": "compression.type"}
	if n := newer[k]; n != "" && fc.has(n) {
		fc.note(k, NoticeNotApplicable, "the old producer's name for %s, which is also set and wins, as in the Java producer", n)
		return
	}
	switch k {
	case "acks", "request.required.acks":
		fc.acks(k, v)
	case "compression.type", "compression.codec":
		codecs := map[string]string{"none": "none", "gzip": "gzip", "snappy": "snappy", "lz4": "lz4", "zstd": "zstd"}
		if k == "compression.codec" {
			// The old producer's codec numbers (kafka.message.CompressionCodec).
			maps.Copy(codecs, map[string]string{"0": "none", "1": "gzip", "2": "snappy", "3": "lz4", "4": "zstd"})
		}
		c, ok := codecs[strings.ToLower(v)]
		if !ok {
			fc.note(k, NoticeInvalid, "%q is not a compression codec; use none, gzip, snappy, lz4 or zstd", v)
			return
		}
		w.Compression = c
		fc.set("producer.compression", k)
		fc.note(k, NoticeMapped, "→ producer.compression: %s", c)
	case "retries", "message.send.max.retries":
		n, ok := fc.int(k, v, 0)
		if !ok {
			return
		}
		w.Retries = int(min(n, 1<<31-1))
		fc.set("producer.retries", k)
		fc.mp.explicit["producer.retries"] = true
		fc.note(k, NoticeMapped, "→ producer.retries: retries of a produce that wrote nothing, within the run's deadline")
	case "retry.backoff.ms":
		if n, ok := fc.int(k, v, 1); ok {
			w.RetryBackoff = time.Duration(n) * time.Millisecond
			fc.set("producer.retry_backoff", k)
			fc.note(k, NoticeMapped, "→ producer.retry_backoff: the first backoff, doubled each retry up to 5s")
		}
	case "batch.num.messages":
		if n, ok := fc.int(k, v, 1); ok {
			w.BatchRecords = int(min(n, 1<<31-1))
			fc.set("producer.batch_records", k)
			fc.note(k, NoticeMapped, "→ producer.batch_records: the most records per produce request")
		}
	case "max.request.size":
		if n, ok := fc.int(k, v, 1); ok {
			w.BatchBytes = int(min(n, maxBatchBytes))
			fc.set("producer.batch_bytes", k)
			msg := "→ producer.batch_bytes: the most bytes per produce request"
			if n > maxBatchBytes {
				msg += fmt.Sprintf(" (%d: catchup's most, under the broker's default message.max.bytes)", maxBatchBytes)
			}
			fc.note(k, NoticeMapped, "%s", msg)
		}
	case "request.timeout.ms":
		if n, ok := fc.int(k, v, 1); ok {
			w.Timeout = time.Duration(n) * time.Millisecond
			fc.set("producer.timeout", k)
			fc.note(k, NoticeMapped, "→ producer.timeout: how long the broker may take to acknowledge a request")
		}
	case "producer.type":
		switch v {
		case "sync":
			fc.note(k, NoticeNotApplicable, "catchup always waits for the acknowledgements of a request, as the sync producer did")
		case "async":
			fc.note(k, NoticeNotApplicable, "catchup always waits for the acknowledgements before it moves a checkpoint; "+
				"it batches up to producer.batch_records records per request")
		default:
			fc.note(k, NoticeInvalid, "%q is not valid; use sync or async", v)
		}
	case "queue.enqueue.timeout.ms":
		fc.enqueueTimeout(k, v)
	}
}

func (fc *mmFile) acks(k, v string) {
	w := &fc.mp.p.Producer
	switch v {
	case "all", "-1":
		w.Acks = "all"
	case "1":
		w.Acks = "leader"
	case "0":
		if !fc.c.flags.AllowDataLoss {
			fc.note(k, NoticeRefused, "acks=0 can lose records silently: the producer never learns whether a write "+
				"arrived, yet the checkpoint would move past it; use acks=all (catchup's default), "+
				"or pass --allow-data-loss to accept the loss")
			return
		}
		w.Acks, w.AllowDataLoss = "none", true
		fc.set("producer.acks", k)
		fc.set("producer.allow_data_loss", k)
		fc.note(k, NoticeWarning, "→ producer.acks: none and producer.allow_data_loss: true (--allow-data-loss): "+
			"records lost on the way to the target are never noticed, and the checkpoint moves past them")
		return
	default:
		fc.note(k, NoticeInvalid, "%q is not valid; use all (or -1), 1 or 0", v)
		return
	}
	fc.set("producer.acks", k)
	fc.note(k, NoticeMapped, "→ producer.acks: %s", w.Acks)
}

// enqueueTimeout answers queue.enqueue.timeout.ms of the old async
// producer: -1 blocks when the queue is full, 0 or more drops records.
func (fc *mmFile) enqueueTimeout(k, v string) {
	if typ, _ := fc.get("producer.type"); typ != "async" {
		fc.note(k, NoticeNotApplicable, "used only with producer.type=async")
		return
	}
	n, err := strconv.ParseInt(v, 10, 64)
	switch {
	case err != nil || n < -1:
		fc.note(k, NoticeInvalid, "%q is not valid; use -1 (block when the queue is full), 0 or a number of milliseconds", v)
	case n == -1:
		fc.note(k, NoticeNotApplicable, "the producer blocked when its queue was full instead of dropping records; catchup waits for the target too")
	case !fc.c.flags.AllowDataLoss:
		fc.note(k, NoticeRefused, "%s tells the old async producer to drop records when its queue is full, so MirrorMaker "+
			"could lose records silently with this file (check the target with catchup verify); catchup never drops records, "+
			"it waits for the target: remove the key to accept that, or pass --allow-data-loss", dropWhen(n))
	default:
		fc.note(k, NoticeWarning, "%s tells the old async producer to drop records when its queue is full "+
			"(accepted with --allow-data-loss); catchup never drops records, it waits for the target", dropWhen(n))
	}
}

func dropWhen(ms int64) string {
	if ms == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (after %dms)", ms, ms)
}

// int parses v as an integer of at least lo, or explains why it is not.
func (fc *mmFile) int(k, v string, lo int64) (int64, bool) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo {
		fc.note(k, NoticeInvalid, "%q is not an integer of at least %d", v, lo)
		return 0, false
	}
	return n, true
}

// saslKey converts sasl.mechanism, sasl.jaas.config and
// sasl.client.callback.handler.class.
func (fc *mmFile) saslKey(k string) {
	if !fc.sasl() {
		fc.note(k, NoticeNotApplicable, "security.protocol is %s, so the Java client did not use SASL either", fc.protocol)
		return
	}
	v, _ := fc.get(k)
	s := fc.cl.SASL
	switch k {
	case "sasl.mechanism":
		switch m := strings.ToUpper(v); m {
		case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "AWS_MSK_IAM":
			s.Mechanism = m
			fc.set(fc.at+".sasl.mechanism", k)
			fc.note(k, NoticeMapped, "→ %s.sasl.mechanism", fc.at)
		case "GSSAPI", "OAUTHBEARER":
			fc.note(k, NoticeRefused, "%s is not supported by catchup, which authenticates with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or AWS_MSK_IAM", m)
			fc.cover(fc.at + ".sasl")
		default:
			fc.note(k, NoticeInvalid, "%q is not a SASL mechanism; catchup supports PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and AWS_MSK_IAM", v)
			fc.cover(fc.at + ".sasl")
		}
	case "sasl.jaas.config":
		fc.jaas(k, v)
	case "sasl.client.callback.handler.class":
		if v == "software.amazon.msk.auth.iam.IAMClientCallbackHandler" {
			fc.note(k, NoticeMapped, "implied by sasl.mechanism=AWS_MSK_IAM, which catchup signs with the standard AWS configuration")
			return
		}
		fc.note(k, NoticeNotApplicable, "%s", whyJavaPlugin)
	}
}

// Login modules of sasl.jaas.config and the mechanisms they serve.
const (
	plainModule    = "org.apache.kafka.common.security.plain.PlainLoginModule"
	scramModule    = "org.apache.kafka.common.security.scram.ScramLoginModule"
	mskIAMModule   = "software.amazon.msk.auth.iam.IAMLoginModule"
	kerberosModule = "com.sun.security.auth.module.Krb5LoginModule"
	oauthModule    = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
)

// jaas takes the username from sasl.jaas.config and keeps the password out
// of the YAML: the SASL block names an environment variable instead.
func (fc *mmFile) jaas(k, v string) {
	mods, err := parseJAAS(v)
	if err != nil {
		fc.note(k, NoticeInvalid, "%v", err)
		fc.cover(fc.at + ".sasl")
		return
	}
	if len(mods) > 1 {
		fc.note(k, NoticeWarning, "%d login modules: catchup uses the first, %s", len(mods), mods[0].class)
	}
	mod, s := mods[0], fc.cl.SASL
	mech, _ := fc.get("sasl.mechanism")
	mech = strings.ToUpper(mech)
	want := map[string][]string{plainModule: {"PLAIN"}, scramModule: {"SCRAM-SHA-256", "SCRAM-SHA-512"}, mskIAMModule: {"AWS_MSK_IAM"},
		kerberosModule: {"GSSAPI", ""}, oauthModule: {"OAUTHBEARER"}}[mod.class]
	switch {
	case want == nil:
		fc.note(k, NoticeRefused, "login module %s is Java code that catchup cannot run; catchup supports %s, %s and %s",
			mod.class, plainModule, scramModule, mskIAMModule)
		fc.cover(fc.at + ".sasl")
		return
	case mech != "" && !slices.Contains(want, mech):
		fc.note(k, NoticeInvalid, "login module %s does not go with sasl.mechanism=%s (it serves %s)", mod.class, mech, strings.Join(want, " or "))
		fc.cover(fc.at + ".sasl")
		return
	case mod.class == kerberosModule || mod.class == oauthModule:
		fc.note(k, NoticeNotApplicable, "the login module of %s, which catchup does not support (see sasl.mechanism)", want[0])
		return
	}
	if mod.class == mskIAMModule {
		for _, o := range mod.opts {
			switch o.key {
			case "awsProfileName":
				fc.note(k, NoticeAction, "option awsProfileName: catchup signs with the standard AWS configuration: run it with AWS_PROFILE=%s", o.value)
			case "awsRoleArn":
				fc.note(k, NoticeAction, "option awsRoleArn: catchup signs with the standard AWS configuration: "+
					"name the role in a profile (role_arn = %s in ~/.aws/config) and run catchup with AWS_PROFILE set to it", o.value)
			default:
				fc.note(k, NoticeNotApplicable, "option %s of %s is not used by catchup, which signs with the standard AWS configuration", o.key, mod.class)
			}
		}
		fc.note(k, NoticeMapped, "→ %s.sasl (AWS_MSK_IAM: no username or password)", fc.at)
		return
	}
	var password *string
	fc.set(fc.at+".sasl.username", k)
	for _, o := range mod.opts {
		switch o.key {
		case "username":
			s.Username = o.value
		case "password":
			password = &o.value
		default:
			fc.note(k, NoticeNotApplicable, "option %s of the login module is not used by catchup", o.key)
		}
	}
	fc.note(k, NoticeMapped, "→ %s.sasl.username", fc.at)
	env := fc.c.passwordEnv(fc.cl.Name)
	s.PasswordEnv = env
	fc.set(fc.at+".sasl.password_env", k)
	if password == nil {
		fc.note(k, NoticeAction, "holds no password: export %s with the password of %s before running catchup", env, fc.cl.Name)
		return
	}
	fc.c.passwords[env] = NewSecret(*password)
	fc.note(k, NoticeAction, "the password is not copied into the YAML, which names the environment variable %s instead "+
		"(%s.sasl.password_env): export it with the password before `catchup run` "+
		"(catchup mirrormaker itself uses the one in this file when the variable is not set)", env, fc.at)
}

// passwordEnv names the environment variable of cluster's password,
// CATCHUP_<CLUSTER>_PASSWORD, distinct for each cluster even when two names
// differ only in characters that a variable name cannot hold.
func (c *mmConv) passwordEnv(cluster string) string {
	base := "CATCHUP_" + envName(cluster)
	env := base + "_PASSWORD"
	for k := 2; c.envs[env] != "" && c.envs[env] != cluster; k++ {
		env = fmt.Sprintf("%s_%d_PASSWORD", base, k)
	}
	c.envs[env] = cluster
	return env
}

// envName turns a cluster name into the middle of an environment variable name.
func envName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, s)
}

// jaasModule is one entry of a JAAS configuration.
type jaasModule struct {
	class, flag string
	opts        []jaasOption
}

type jaasOption struct{ key, value string }

// parseJAAS reads a sasl.jaas.config value:
//
//	LoginModuleClass ControlFlag option="value" option=value ... ;
//
// Values may be quoted with '"', with '\' escaping the next character.
// Errors never quote values or option names: one of the values is a
// password, and a broken quote turns part of it into a name.
func parseJAAS(s string) ([]jaasModule, error) {
	var mods []jaasModule
	i := 0
	space := func() {
		for i < len(s) && strings.ContainsRune(" \t\r\n\f", rune(s[i])) {
			i++
		}
	}
	word := func() string {
		start := i
		for i < len(s) && !strings.ContainsRune(" \t\r\n\f=;\"", rune(s[i])) {
			i++
		}
		return s[start:i]
	}
	const form = `; write it as: LoginModuleClass required username="..." password="...";`
	for space(); i < len(s); space() {
		m := jaasModule{class: word()}
		space()
		m.flag = word()
		if m.class == "" || !slices.Contains([]string{"required", "requisite", "sufficient", "optional"}, m.flag) {
			return nil, errors.New("not a JAAS login module entry (a class name and then required, requisite, sufficient or optional)" + form)
		}
		for {
			space()
			if i == len(s) {
				return nil, errors.New("the entry of " + m.class + " does not end with ';'" + form)
			}
			if s[i] == ';' {
				i++
				break
			}
			key := word()
			space()
			if key == "" || i == len(s) || s[i] != '=' {
				return nil, fmt.Errorf("option %d of %s has no '=' and value%s", len(m.opts)+1, m.class, form)
			}
			i++
			space()
			value := word()
			if i < len(s) && s[i] == '"' {
				var b strings.Builder
				closed := false
				for i++; i < len(s) && !closed; i++ {
					switch {
					case s[i] == '\\' && i+1 < len(s):
						i++
						b.WriteByte(s[i])
					case s[i] == '"':
						closed = true
					default:
						b.WriteByte(s[i])
					}
				}
				if !closed {
					return nil, fmt.Errorf("the value of option %d of %s has no closing '\"'", len(m.opts)+1, m.class)
				}
				value = b.String()
			}
			m.opts = append(m.opts, jaasOption{key, value})
		}
		mods = append(mods, m)
	}
	if len(mods) == 0 {
		return nil, errors.New("empty" + form)
	}
	return mods, nil
}

// ssl converts the ssl.* keys. catchup reads PEM files only, so a JKS or
// PKCS12 store needs converting, and the store passwords are never needed.
func (fc *mmFile) ssl(k string) {
	if !fc.tls() {
		fc.note(k, NoticeNotApplicable, "security.protocol is %s, so the Java client did not use TLS either", fc.protocol)
		return
	}
	v, _ := fc.get(k)
	t := fc.cl.TLS
	tlsAt := fc.at + ".tls"
	storeType := func(key string) string {
		typ, _ := fc.get(key)
		if typ == "" {
			return "JKS"
		}
		return strings.ToUpper(typ)
	}
	switch k {
	case "ssl.truststore.location":
		switch typ := storeType("ssl.truststore.type"); typ {
		case "PEM":
			t.CAFile = v
			fc.set(tlsAt+".ca_file", k)
			fc.note(k, NoticeMapped, "→ %s.ca_file", tlsAt)
		case "JKS", "PKCS12":
			pem := swapExt(v, ".pem")
			if isFile(pem) {
				t.CAFile = pem
				fc.set(tlsAt+".ca_file", k)
				fc.note(k, NoticeMapped, "→ %s.ca_file: %s, the PEM copy of this %s trust store", tlsAt, pem, typ)
				return
			}
			cmd := fmt.Sprintf("keytool -list -rfc -keystore %s > %s", v, pem)
			if typ == "PKCS12" {
				cmd = fmt.Sprintf("openssl pkcs12 -in %s -nokeys -out %s", v, pem)
			}
			fc.note(k, NoticeAction, "catchup reads PEM files, not %s trust stores: convert it with `%s` (it asks for "+
				"ssl.truststore.password), then set ca_file: %s under %s (catchup mirrormaker does once that file exists); "+
				"until then the brokers' certificates are verified against the system's roots", typ, cmd, pem, tlsAt)
		default:
			fc.note("ssl.truststore.type", NoticeInvalid, "%q is not a trust store type; use JKS, PKCS12 or PEM", typ)
		}
	case "ssl.keystore.location":
		fc.keystore(k, v, storeType("ssl.keystore.type"))
	case "ssl.truststore.type", "ssl.keystore.type":
		loc := strings.Replace(k, ".type", ".location", 1)
		switch {
		case !fc.has(loc):
			fc.note(k, NoticeNotApplicable, "there is no %s", loc)
		case slices.Contains([]string{"JKS", "PKCS12", "PEM"}, storeType(k)):
			fc.note(k, NoticeMapped, "says how %s is converted (see there)", loc)
		}
	case "ssl.truststore.password":
		fc.note(k, NoticeNotApplicable, "it opens the trust store; the PEM file that catchup reads needs no password")
	case "ssl.keystore.password", "ssl.key.password":
		fc.note(k, NoticeNotApplicable, "it opens the key store; catchup reads the client key from an unencrypted PEM file "+
			"(key_file): make that file readable only by the user that runs catchup")
	case "ssl.truststore.certificates":
		fc.note(k, NoticeAction, "catchup reads certificates from a file: save these PEM certificates to a file and set ca_file to it under %s", tlsAt)
	case "ssl.keystore.certificate.chain", "ssl.keystore.key":
		fc.note(k, NoticeAction, "catchup reads the client certificate and key from files: save the certificate chain "+
			"and the unencrypted key to PEM files and set cert_file and key_file under %s", tlsAt)
	case "ssl.endpoint.identification.algorithm":
		switch strings.ToLower(v) {
		case "https":
			fc.note(k, NoticeMapped, "catchup always verifies the broker's host name")
		case "":
			fc.note(k, NoticeWarning, "empty: the Java client checked the broker's certificate chain but not its host name; "+
				"catchup verifies both, because skipping only the name is not possible and skipping both "+
				"(insecure_skip_verify) would accept any certificate: if the certificates do not name the brokers, "+
				"set server_name under %s to the name they carry", tlsAt)
		default:
			fc.note(k, NoticeInvalid, "%q is not valid; use https or an empty value", v)
		}
	}
}

// keystore converts ssl.keystore.location, the client certificate.
func (fc *mmFile) keystore(k, v, typ string) {
	t, tlsAt := fc.cl.TLS, fc.at+".tls"
	cert, key := swapExt(v, ".cert.pem"), swapExt(v, ".key.pem")
	var steps string
	switch typ {
	case "PEM":
		if fc.has("ssl.key.password") {
			fc.note(k, NoticeAction, "its private key is encrypted (ssl.key.password), which catchup cannot read: decrypt it with "+
				"`openssl pkey -in %s -out %s`, then set cert_file: %s and key_file: %s under %s", v, key, v, key, tlsAt)
			return
		}
		t.CertFile, t.KeyFile = v, v
		fc.set(tlsAt+".cert_file", k)
		fc.set(tlsAt+".key_file", k)
		fc.note(k, NoticeMapped, "→ %s.cert_file and key_file (the same file holds both)", tlsAt)
		return
	case "JKS":
		p12 := swapExt(v, ".p12")
		steps = fmt.Sprintf("`keytool -importkeystore -srckeystore %s -destkeystore %s -deststoretype PKCS12`, then "+
			"`openssl pkcs12 -in %s -clcerts -nokeys -out %s` and `openssl pkcs12 -in %s -nocerts -nodes -out %s`", v, p12, p12, cert, p12, key)
	case "PKCS12":
		steps = fmt.Sprintf("`openssl pkcs12 -in %s -clcerts -nokeys -out %s` and `openssl pkcs12 -in %s -nocerts -nodes -out %s`", v, cert, v, key)
	default:
		fc.note("ssl.keystore.type", NoticeInvalid, "%q is not a key store type; use JKS, PKCS12 or PEM", typ)
		return
	}
	if isFile(cert) && isFile(key) {
		t.CertFile, t.KeyFile = cert, key
		fc.set(tlsAt+".cert_file", k)
		fc.set(tlsAt+".key_file", k)
		fc.note(k, NoticeMapped, "→ %s.cert_file: %s and key_file: %s, the PEM copies of this %s key store", tlsAt, cert, key, typ)
		return
	}
	fc.note(k, NoticeAction, "catchup reads PEM files, not %s key stores: convert it with %s (they ask for ssl.keystore.password; "+
		"make the key file readable only by catchup's user), then set cert_file: %s and key_file: %s under %s "+
		"(catchup mirrormaker does once both files exist)", typ, steps, cert, key, tlsAt)
}

// swapExt replaces the extension of path with ext.
func swapExt(path, ext string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + ext
}

func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// finish reports what is missing once every key of the file is read.
func (fc *mmFile) finish() {
	if len(fc.cl.Brokers) == 0 {
		msg := "no bootstrap.servers: list the " + fc.at + " brokers as host:port,host:port"
		if zk, ok := fc.get("zookeeper.connect"); ok {
			msg = fmt.Sprintf("no bootstrap.servers: the old consumer found the brokers through ZooKeeper (%s), but catchup "+
				"talks to the brokers directly: add bootstrap.servers=host:9092,... with the brokers of that cluster", zk)
		}
		fc.c.add(Notice{File: fc.name, Key: "bootstrap.servers", Kind: NoticeInvalid, Msg: msg})
		fc.cover(fc.at + ".brokers")
	}
	if s := fc.cl.SASL; s != nil && !fc.mp.covered[fc.at+".sasl"] {
		switch {
		case s.Mechanism == "" && !fc.has("sasl.mechanism"):
			fc.c.add(Notice{File: fc.name, Key: "sasl.mechanism", Kind: NoticeRefused, Msg: fmt.Sprintf("not set, so with "+
				"security.protocol=%s the Java client used GSSAPI (Kerberos), which catchup does not support; catchup "+
				"authenticates with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or AWS_MSK_IAM", fc.protocol)})
			fc.cover(fc.at + ".sasl")
		case s.Mechanism != "" && s.Mechanism != "AWS_MSK_IAM" && !fc.has("sasl.jaas.config"):
			fc.c.add(Notice{File: fc.name, Key: "sasl.jaas.config", Kind: NoticeInvalid, Msg: fmt.Sprintf("not set: "+
				"%s needs a username; add sasl.jaas.config (if MirrorMaker read a JAAS file named by "+
				"-Djava.security.auth.login.config, copy its KafkaClient entry here)", s.Mechanism)})
			fc.cover(fc.at + ".sasl")
		}
	}
}

// namePipeline names the pipeline of a consumer config after its group.id,
// the checkpoint namespace, and says where its partitions start.
func (c *mmConv) namePipeline(fc *mmFile, used map[string]bool) {
	p := &fc.mp.p
	group, ok := fc.get("group.id")
	name := sanitizeName(group)
	switch {
	case !ok || name == "":
		name = fc.cl.Name
		fc.note("group.id", NoticeMapped, "not set: the pipeline is named %q after the file; the name is its checkpoint namespace", name)
	case name != group:
		fc.note("group.id", NoticeMapped, "→ name %q, the checkpoint namespace (a name holds only letters, digits, '.', '_' and '-')", name)
	default:
		fc.note("group.id", NoticeMapped, "→ name, the checkpoint namespace")
	}
	if used[name] {
		base := name + "." + fc.cl.Name
		unique := base
		for k := 2; used[unique]; k++ {
			unique = base + "-" + strconv.Itoa(k)
		}
		fc.note("group.id", NoticeMapped, "%q also names another pipeline, which keeps its own checkpoints: this one is named %q", name, unique)
		name = unique
	}
	used[name] = true
	p.Name = name
	fc.set("name", "group.id")

	start := "earliest (the whole retained log is copied again)"
	switch {
	case p.Start == "latest":
		start = "latest (records produced before its first run are not copied)"
	case !fc.has("auto.offset.reset"):
		start = "earliest: auto.offset.reset is not set, so MirrorMaker started a new group at latest, but catchup's " +
			"default copies the whole retained log so that nothing is lost (set start: latest to copy only new records)"
	}
	brokers := strings.Join(fc.cl.Brokers, ",")
	if brokers == "" {
		brokers = "BROKER:9092"
	}
	if group == "" {
		group = "GROUP"
	}
	fc.note("group.id", NoticeWarning, "catchup keeps its own checkpoints and does not read the offsets MirrorMaker committed: "+
		"a partition without a catchup checkpoint starts at %s. To continue exactly where MirrorMaker stopped, stop it and "+
		"set start_offsets from `kafka-consumer-groups.sh --bootstrap-server %s --describe --group %s`", start, brokers, group)
}

// convertFlags converts the command-line flags into the pipeline settings
// they give every pipeline.
func (c *mmConv) convertFlags() *mmPipe {
	mp := newMMPipe()
	p := &mp.p
	fl := c.flags
	note := func(key string, kind NoticeKind, format string, args ...any) {
		c.add(Notice{Key: key, Kind: kind, Msg: fmt.Sprintf(format, args...)})
	}
	origin := func(path, key string) { mp.origins[path] = mmOrigin{key: key} }

	include, exclude := mmTopics(fl.Whitelist), mmTopics(fl.Blacklist)
	// Check the patterns here, once, rather than once per pipeline in Parse.
	valid := func(key string, pats []string) bool {
		ok := true
		for _, pat := range pats {
			if _, err := compilePattern(pat); err != nil {
				note(key, NoticeInvalid, "%v", err)
				mp.covered["topics"], ok = true, false
			}
		}
		return ok
	}
	includeOK, excludeOK := valid(fl.WhitelistFlag, include), valid("--blacklist", exclude)
	switch {
	case len(include) > 0:
		p.Topics.Include = include
		origin("topics.include", fl.WhitelistFlag)
		if includeOK {
			note(fl.WhitelistFlag, NoticeMapped, "→ topics.include: %s%s", strings.Join(include, ", "), topicsHow(include))
		}
	case len(exclude) > 0:
		p.Topics.Include = []string{".*"}
		origin("topics.include", "--blacklist")
		note(fl.WhitelistFlag, NoticeMapped, "not given: → topics.include: .* (every topic), less --blacklist")
	default:
		note(fl.WhitelistFlag, NoticeInvalid, "required, as by MirrorMaker: a Java regular expression or a comma-separated "+
			"list of topics; --whitelist '.*' selects every topic (internal topics are never copied)")
		mp.covered["topics"] = true
	}
	if len(exclude) > 0 {
		p.Topics.Exclude = exclude
		origin("topics.exclude", "--blacklist")
		if excludeOK {
			note("--blacklist", NoticeMapped, "→ topics.exclude: %s%s; exclude wins over include", strings.Join(exclude, ", "), topicsHow(exclude))
		}
	}

	for _, f := range []struct{ key, value, what string }{
		{"--num.streams", fl.NumStreams, "consumer threads"},
		{"--num.producers", fl.NumProducers, "producers"},
	} {
		if f.value == "" {
			continue
		}
		n, err := strconv.Atoi(f.value)
		if err != nil || n < 1 {
			note(f.key, NoticeInvalid, "%q is not a positive integer", f.value)
			continue
		}
		p.Parallelism = max(p.Parallelism, n)
		origin("parallelism", f.key)
		note(f.key, NoticeMapped, "→ parallelism (the larger of --num.streams and --num.producers): catchup copies up to %d "+
			"partitions of each pipeline at once where MirrorMaker ran %d %s (catchup's default is %d)", n, n, f.what, DefaultParallelism)
	}

	switch v := strings.ToLower(fl.AbortOnSendFailure); v {
	case "":
	case "true":
		note("--abort.on.send.failure", NoticeMapped, "catchup's behaviour: a failed send stops the partition, whose checkpoint stays before the failed records")
	case "false":
		if fl.AllowDataLoss {
			note("--abort.on.send.failure", NoticeWarning, "false made MirrorMaker skip records it failed to send "+
				"(accepted with --allow-data-loss); catchup still stops the partition and keeps its checkpoint before them, so the next run retries them")
		} else {
			note("--abort.on.send.failure", NoticeRefused, "false made MirrorMaker skip records it failed to send and commit "+
				"past them, losing them; catchup never skips: it stops the partition and keeps its checkpoint before them. "+
				"Drop the flag to accept that, or pass --allow-data-loss")
		}
	default:
		note("--abort.on.send.failure", NoticeInvalid, "%q is not valid; use true or false", fl.AbortOnSendFailure)
	}

	if v := fl.OffsetCommitIntervalMS; v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			note("--offset.commit.interval.ms", NoticeInvalid, "%q is not a positive number of milliseconds", v)
		} else {
			p.CommitInterval = time.Duration(n) * time.Millisecond
			origin("commit_interval", "--offset.commit.interval.ms")
			note("--offset.commit.interval.ms", NoticeMapped, "→ commit_interval: the most time between two checkpoint commits of a partition")
		}
	}

	if fl.MessageHandler != "" {
		note("--message.handler", NoticeRefused, "catchup copies records unchanged (adding only its provenance header) and "+
			"cannot run the Java message handler %s: one that renamed topics can be replaced by target_topic in the YAML "+
			"(\"{source}.{topic}\", \"{topic}.mirror\"); one that filtered or changed records has no equivalent", fl.MessageHandler)
	}
	if fl.MessageHandlerArgs != "" {
		note("--message.handler.args", NoticeNotApplicable, "the arguments of --message.handler")
	}
	if fl.RebalanceListener != "" {
		note("--consumer.rebalance.listener", NoticeNotApplicable, "catchup does not join a consumer group, so there are no rebalances to listen to")
	}
	if fl.RebalanceListenerArgs != "" {
		note("--rebalance.listener.args", NoticeNotApplicable, "the arguments of --consumer.rebalance.listener")
	}
	if fl.NewConsumer {
		note("--new.consumer", NoticeNotApplicable, "catchup always reads from the brokers named by bootstrap.servers")
	}
	return mp
}

// mmTopics converts a MirrorMaker topic list as MirrorMaker read it (its
// TopicFilter): surrounding quotes and all spaces removed, and each comma
// meaning "or", here one pattern per comma-separated part. Commas inside
// [...] or {m,n} belong to the pattern.
func mmTopics(raw string) []string {
	s := strings.Trim(strings.TrimSpace(raw), `"'`)
	s = strings.ReplaceAll(s, " ", "")
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '[', '{':
			depth++
		case ']', '}':
			depth = max(0, depth-1)
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	out = append(out, s[start:])
	return slices.DeleteFunc(out, func(p string) bool { return p == "" })
}

func topicsHow(pats []string) string {
	if len(pats) > 1 {
		return " (MirrorMaker read each comma as \"or\"; each pattern matches whole topic names, as there)"
	}
	return " (matched against whole topic names, as by MirrorMaker)"
}

// addParseProblem turns a problem that Parse found in the converted YAML
// into a notice on the property or flag it came from, unless a notice
// already explains it.
func (c *mmConv) addParseProblem(e *Error, origins []map[string]mmOrigin, covered []map[string]bool) {
	i := -1
	if _, err := fmt.Sscanf(e.Pipeline, "pipelines[%d]", &i); err != nil || i < 0 || i >= len(origins) {
		n := Notice{Kind: NoticeInvalid, Msg: e.Msg}
		if e.Field == "store" {
			n.Key = "--store"
		} else if e.Field != "" {
			n.Msg = e.Field + ": " + e.Msg
		}
		c.add(n)
		return
	}
	for path := e.Field; path != ""; path = parentPath(path) {
		if covered[i][path] {
			return
		}
	}
	for path := e.Field; path != ""; path = parentPath(path) {
		if o, ok := origins[i][path]; ok {
			c.add(Notice{File: o.file, Line: o.line, Key: o.key, Kind: NoticeInvalid, Msg: e.Field + ": " + e.Msg})
			return
		}
	}
	c.add(Notice{Kind: NoticeInvalid, Msg: e.Pipeline + ": " + e.Field + ": " + e.Msg})
}

// joinedErrors returns the *Errors joined in err.
func joinedErrors(err error) []*Error {
	if err == nil {
		return nil
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	out := make([]*Error, 0, len(errs))
	for _, e := range errs {
		var ce *Error
		if errors.As(e, &ce) {
			out = append(out, ce)
		} else {
			out = append(out, &Error{Msg: e.Error()})
		}
	}
	return out
}

// yaml writes f as a YAML configuration holding only the settings that the
// conversion set, with a header naming the files it came from.
func (c *mmConv) yaml(f *File, explicit map[string]bool, consumers []MMFile, producer MMFile, comments yaml.CommentMap, head []string) []byte {
	names := make([]string, len(consumers))
	for i, cf := range consumers {
		names[i] = cf.Name
	}
	doc, _ := sparseYAML(reflect.ValueOf(f).Elem(), "", explicit)
	opts := []yaml.EncodeOption{yaml.IndentSequence(true)}
	if len(comments) > 0 {
		opts = append(opts, yaml.WithComment(comments))
	}
	body, err := yaml.MarshalWithOptions(doc, opts...)
	if err != nil {
		// Not expected: the document holds only strings, numbers, booleans and lists.
		c.add(Notice{Kind: NoticeInvalid, Msg: fmt.Sprintf("write the YAML: %v", err)})
		return nil
	}
	top := fmt.Sprintf("# catchup configuration converted from MirrorMaker by `catchup mirrormaker --print-config`\n"+
		"# consumer configs: %s\n# producer config: %s\n"+
		"# Every setting left out takes its default: see internal/config/testdata/pipelines.yaml.\n",
		strings.Join(names, ", "), producer.Name)
	for _, h := range head {
		top += "# " + h + "\n"
	}
	return append([]byte(top), body...)
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

// nearestMMKeys returns the keys of one side (consumer or producer) that a
// misspelled key most likely meant: the nearest whole key, or else the keys
// with a dotted part near one of k's distinctive parts ("derializer.class"
// finds key.deserializer and value.deserializer on the consumer side).
func nearestMMKeys(k string, candidates []string) []string {
	if best, ok := nearest(k, candidates); ok {
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
				if editDistance(kp, cp) <= max(1, len(kp)/3) {
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

// problemComments places each blocking notice beside the YAML setting it
// came from, as a line comment at its path in the document
// ("$.pipelines[0].source.brokers"); rest holds the notices that no setting
// of the YAML came from (an unknown key, a missing flag).
func problemComments(problems []Notice, origins []map[string]mmOrigin) (comments yaml.CommentMap, rest []Notice) {
	comments = yaml.CommentMap{}
	for _, n := range problems {
		var paths []string
		for i, o := range origins {
			for _, path := range slices.Sorted(maps.Keys(o)) {
				if o[path].key == n.Key && o[path].file == n.File {
					paths = append(paths, fmt.Sprintf("$.pipelines[%d].%s", i, path))
				}
			}
		}
		if len(paths) == 0 {
			rest = append(rest, n)
			continue
		}
		for _, p := range paths {
			comments[p] = []*yaml.Comment{yaml.LineComment(" PROBLEM: " + n.Key + ": " + string(n.Kind) + ": " + n.Msg)}
		}
	}
	return comments, rest
}
