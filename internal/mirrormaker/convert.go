// Package mirrormaker converts a MirrorMaker 1 command line (the flags and
// .properties files of kafka.tools.MirrorMaker) into a catchup
// configuration, with a notice for every key and flag: converted, obsolete,
// not applicable and why, or refused. It writes values of internal/config
// and imports nothing else of catchup's; cmd/catchup runs what it writes.
//
// convert.go holds Convert and the pipelines it builds, properties.go the
// reading of one property file, clients.go the consumer and producer keys,
// security.go TLS and SASL (jaas.go parses sasl.jaas.config), flags.go the
// command-line flags, topics.go the topic selection (--whitelist,
// --blacklist), keys.go the answer for every key catchup knows, report.go
// the notices and the problems placed in the YAML.
package mirrormaker

import (
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/kafka-catchup/catchup/internal/config"
)

// File is one MirrorMaker property file (a --consumer.config or the
// --producer.config), read by the caller.
type File struct {
	// Name is the file's path. It labels notices and names the cluster in
	// provenance headers (and the pipeline, when there is no group.id).
	Name string
	Data []byte
}

// Flags are MirrorMaker's command-line flags other than the property
// files, as given on the command line: an empty string means not given.
// Convert checks the values and explains each one in a notice.
type Flags struct {
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

// Migration is a MirrorMaker configuration converted to catchup's.
type Migration struct {
	// File is YAML parsed back by Parse: defaults set and validated, ready
	// to run. Nil when Convert returned an error.
	File *config.File
	// YAML is the equivalent configuration file. It never holds a password:
	// SASL blocks name an environment variable (password_env) instead.
	// When Convert returned an error it is a draft, headed "NOT
	// RUNNABLE YET", with the problems as comments; nil if no pipeline
	// could be built.
	YAML []byte
	// Notices explain every key and flag, in file order, then the problems
	// that Parse found in the result.
	Notices []Notice
	// Passwords holds the passwords found in sasl.jaas.config by the
	// environment variable that File names for each; every way of printing
	// them gives "[REDACTED]".
	Passwords map[string]config.Secret
	// render writes the YAML again after SetStartOffsets.
	render func(pipeline string, offsets map[string]map[int32]int64) []byte
	// Flows are the enabled flows of a MirrorMaker 2 configuration, one per
	// pipeline (ConvertMM2 only).
	Flows []MM2Flow
}

// Convert converts a MirrorMaker command line — its consumer
// configs, its producer config and its other flags — into a catchup
// configuration: one pipeline per consumer config, named after its group.id
// (the checkpoint namespace), all copying into the producer config's
// cluster. Every key and flag gets a notice saying how it was converted or
// why it was not. The property files are Java .properties, read as UTF-8.
//
// Keys that are unknown, values that are invalid, and settings that catchup
// will not honour (acks=0 and other ways of losing records, unless
// flags.AllowDataLoss; Java message handlers; Kerberos) make the conversion
// fail: the error is a *Error, and the returned Migration still
// holds every notice and, when a pipeline could be built, a draft YAML with
// each problem as a comment beside the setting it concerns (or in the
// header), but no File.
func Convert(consumers []File, producer File, flags Flags) (*Migration, error) {
	c := newConverter(flags)
	if c.flags.WhitelistFlag == "" {
		c.flags.WhitelistFlag = "--whitelist"
	}
	if c.flags.Store == "" {
		c.flags.Store = config.DefaultStore
	}
	if len(consumers) == 0 {
		c.add(Notice{Key: "--consumer.config", Kind: NoticeInvalid, Msg: "required: give one property file per source cluster"})
	}
	if producer.Name == "" && producer.Data == nil {
		c.add(Notice{Key: "--producer.config", Kind: NoticeInvalid, Msg: "required: the property file of the target cluster"})
	}

	names := c.clusterNames(consumers, producer)
	var pipes []*pipe
	used := map[string]bool{}
	for i, f := range consumers {
		mp := newPipe()
		if fc := c.convertFile(f, consumerFile, names[i], mp); fc != nil {
			c.namePipeline(fc, used)
			pipes = append(pipes, mp)
		}
	}
	target := newPipe()
	if producer.Name == "" && producer.Data == nil || c.convertFile(producer, producerFile, names[len(names)-1], target) == nil {
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

	f := &config.File{Store: c.flags.Store}
	explicit := map[string]bool{}
	origins := make([]map[string]keyOrigin, len(pipes))
	covered := make([]map[string]bool, len(pipes))
	for i, mp := range pipes {
		mp.merge(target, func(p *config.Pipeline) { p.Target, p.Producer = target.p.Target, target.p.Producer })
		mp.merge(flagPipe, func(p *config.Pipeline) {
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

	files := make([]string, len(consumers))
	for i, cf := range consumers {
		files[i] = cf.Name
	}
	top := fmt.Sprintf("# catchup configuration converted from MirrorMaker by `catchup mirrormaker --print-config`\n"+
		"# consumer configs: %s\n# producer config: %s\n", strings.Join(files, ", "), producer.Name)
	return c.migration(f, explicit, origins, covered, top)
}

// migration parses the YAML of f back, adds the problems Parse found to
// the notices, and returns the Migration, or a draft and an *Error when a
// notice is blocking. top heads the YAML: where it came from.
func (c *converter) migration(f *config.File, explicit map[string]bool, origins []map[string]keyOrigin, covered []map[string]bool, top string) (*Migration, error) {
	m := &Migration{Passwords: c.passwords, render: func(pipeline string, offsets map[string]map[int32]int64) []byte {
		for i := range f.Pipelines {
			if f.Pipelines[i].Name == pipeline {
				f.Pipelines[i].StartOffsets = offsets
			}
		}
		return c.yaml(f, explicit, top, nil, nil)
	}}
	if len(f.Pipelines) > 0 {
		m.YAML = c.yaml(f, explicit, top, nil, nil)
		parsed, err := config.Parse(m.YAML, "catchup.yaml")
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
			m.YAML = c.yaml(f, explicit, top, comments, head)
		}
		return m, &Error{Problems: blocking}
	}
	return m, nil
}

func newConverter(flags Flags) *converter {
	c := &converter{flags: flags, keys: knownKeys(), passwords: map[string]config.Secret{}, envs: map[string]string{}}
	for _, k := range slices.Sorted(maps.Keys(c.keys)) {
		for side, ans := range c.keys[k] {
			if ans.kind != "" {
				c.known[side] = append(c.known[side], k)
			}
		}
	}
	return c
}

// SetStartOffsets sets start_offsets of the pipeline named pipeline, in
// File and in YAML; it returns false if m has no such pipeline.
func (m *Migration) SetStartOffsets(pipeline string, offsets map[string]map[int32]int64) bool {
	if m.File == nil || m.render == nil {
		return false
	}
	for i := range m.File.Pipelines {
		if m.File.Pipelines[i].Name == pipeline {
			m.File.Pipelines[i].StartOffsets = offsets
			m.YAML = m.render(pipeline, offsets)
			return true
		}
	}
	return false
}

// settingName is what a Kafka, MirrorMaker 2 or Strimzi setting's name
// looks like: dotted words ("sasl.jaas.config", "A->B.topics",
// "spec.mirrors[0].groupsPattern").
var settingName = regexp.MustCompile(`^[A-Za-z0-9_-]+(->[A-Za-z0-9_-]+)?(\.[A-Za-z0-9_-]+(\[[0-9]+\])?)+$`)

// bareName is a name of one word ("clusters", "topics"): repeated in a
// notice only when the converter recognised it, never when it is unknown.
var bareName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// converter holds the state of one conversion.
type converter struct {
	flags     Flags
	keys      map[string]keyAnswers
	known     [2][]string // per fileKind, sorted: suggestions come from the file's own kind
	notices   []Notice
	passwords map[string]config.Secret
	envs      map[string]string // password variable → cluster
}

// add records n unless the same notice was already given (a problem in the
// target shows once, not once per pipeline). A key is repeated only when
// it looks like a setting's name (one word too, if the converter knew it):
// a line that does not (the rest of a value broken over two lines, a JAAS
// password after a missing '\', a stray quote in a JSON or YAML file) may
// hold part of a secret, whatever the notice says of it.
func (c *converter) add(n Notice) {
	if n.Key != "" && !settingName.MatchString(n.Key) && (n.Kind == NoticeUnknown || !bareName.MatchString(n.Key)) {
		n.Key = ""
		n.Msg += " (the line is not repeated: it does not look like a setting's name and may be part of a value, such as a password; a value continues on the next line only after a '\\' at the end of the line)"
	}
	if !slices.Contains(c.notices, n) {
		c.notices = append(c.notices, n)
	}
}

// keyOrigin is the property a setting of the YAML came from.
type keyOrigin struct {
	file, key string
	line      int
}

// pipe is one pipeline being converted, with where each setting came
// from; paths are relative to the pipeline ("source.brokers").
type pipe struct {
	p        config.Pipeline
	origins  map[string]keyOrigin
	explicit map[string]bool // settings written even when zero (retries: 0)
	covered  map[string]bool // settings whose problem a notice already explains
}

func newPipe() *pipe {
	return &pipe{origins: map[string]keyOrigin{}, explicit: map[string]bool{}, covered: map[string]bool{}}
}

// merge copies the settings of from into mp with copy, and from's
// bookkeeping with them.
func (mp *pipe) merge(from *pipe, copyFields func(p *config.Pipeline)) {
	copyFields(&mp.p)
	maps.Copy(mp.origins, from.origins)
	maps.Copy(mp.explicit, from.explicit)
	maps.Copy(mp.covered, from.covered)
}

// clusterNames names the source clusters and the target (last) after their
// files, "sourceCluster1Consumer.config" giving "sourceCluster1", each name
// distinct: the names go into provenance headers, where two sources must
// differ.
func (c *converter) clusterNames(consumers []File, producer File) []string {
	names := make([]string, 0, len(consumers)+1)
	for _, f := range consumers {
		names = append(names, clusterStem(f.Name, "consumer", "source"))
	}
	names = append(names, clusterStem(producer.Name, "producer", "target"))
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

// clusterStem derives a cluster name from a file path: the base name without
// its extension or a trailing role word ("consumer"), reduced to the
// characters a name may hold; def if nothing is left.
func clusterStem(path, role, def string) string {
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
		if config.IsName(string(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}

// namePipeline names the pipeline of a consumer config after its group.id,
// the checkpoint namespace, and says where its partitions start.
func (c *converter) namePipeline(fc *propFile, used map[string]bool) {
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

// yaml writes f as a YAML configuration holding only the settings that the
// conversion set, with a header naming the files it came from.
func (c *converter) yaml(f *config.File, explicit map[string]bool, top string, comments yaml.CommentMap, head []string) []byte {
	body, err := config.MarshalSparse(f, explicit, comments)
	if err != nil {
		// Not expected: the document holds only strings, numbers, booleans and lists.
		c.add(Notice{Kind: NoticeInvalid, Msg: fmt.Sprintf("write the YAML: %v", err)})
		return nil
	}
	top += "# Every setting left out takes its default: see internal/config/testdata/pipelines.yaml.\n"
	for _, h := range head {
		top += "# " + h + "\n"
	}
	return append([]byte(top), body...)
}
