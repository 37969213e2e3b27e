package mirrormaker

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/magiconair/properties"

	"github.com/kafka-catchup/catchup/internal/config"
)

// MM2Flow is one enabled flow (SOURCE->TARGET) of a MirrorMaker 2
// configuration, with what --take-over needs to find its positions.
type MM2Flow struct {
	Source, Target string // the cluster aliases
	// Pipeline is the name of the catchup pipeline that copies it.
	Pipeline string
	// OffsetsTopic holds MirrorMaker 2's source offsets, on the cluster
	// OffsetsCluster (an alias): mm2-offsets.SOURCE.internal on the target
	// in dedicated mode, mirrormaker2-cluster-offsets on the
	// connectCluster under Strimzi; empty for a Connect connector, whose
	// worker's offset.storage.topic the file does not hold.
	OffsetsTopic, OffsetsCluster string
	// Connector is the name the source offsets are kept under.
	Connector string
	// Heartbeats says whether MirrorMaker 2 was set to emit heartbeats of
	// the flow (MirrorHeartbeatConnector: emit.heartbeats.enabled, true by
	// default; under Strimzi only with a heartbeatConnector) to the
	// heartbeats topic of its Connect cluster, every HeartbeatsInterval
	// (emit.heartbeats.interval.seconds, 1 s by default); HeartbeatsKey
	// names the setting that turned them off, "" if none did.
	Heartbeats         bool
	HeartbeatsInterval time.Duration
	HeartbeatsKey      string
}

// mm2Defaults are MirrorMaker 2's defaults that catchup's differ from.
var (
	mm2TopicsExclude = []string{`.*[\-\.]internal`, `.*\.replica`, `__.*`}
	mm2GroupsExclude = []string{`console-consumer-.*`, `connect-.*`, `__.*`}
)

// Reasons shared by the MirrorMaker 2 keys.
const (
	whyHeartbeats = "catchup writes no heartbeats topic: each run's report, `catchup status` and the lag metrics say how far behind the target is " +
		"(--take-over reads MirrorMaker 2's heartbeats to tell whether it still runs)"
	whyCheckpoints = "catchup writes no checkpoints topic: the provenance header of every copied record translates a consumer offset exactly " +
		"(`catchup translate`; sync_groups commits translated offsets on the target)"
	whyOffsetSyncs = "catchup writes no offset-syncs topic: every copied record carries its source offset in its provenance header"
	whyWorker      = "a Kafka Connect worker setting: catchup has no workers; its progress is in its checkpoint store (--store)"
	whyAdmin       = "a setting of MirrorMaker 2's admin client: catchup's topic creation and config sync use the cluster's own settings"
	whyNoTxn       = "catchup does not write in transactions: its idempotent producer and the provenance read-back after a crash give no duplicates"
)

// ConvertMM2 converts a MirrorMaker 2 configuration — a dedicated-mode
// .properties file, a MirrorSourceConnector's Connect JSON, or a Strimzi
// KafkaMirrorMaker2 resource — into a catchup configuration: one pipeline
// per enabled flow (SOURCE->TARGET), named "SOURCE-to-TARGET", with the
// cluster aliases as cluster names. Every key gets a notice, as Convert
// gives them; the same keys are refused (acks=0, a Java class catchup cannot
// run), plus a custom replication policy or filter class and single message
// transforms. Migration.Flows says where each flow's MirrorMaker 2 offsets
// are, for --take-over.
func ConvertMM2(f File, fl Flags) (*Migration, error) {
	c := newConverter(fl)
	if c.flags.Store == "" {
		c.flags.Store = config.DefaultStore
	}
	format, entries := c.readMM2(f)
	m := &mm2{c: c, file: f, format: format, entries: entries, answered: make([]bool, len(entries)),
		global: map[string]int{}, cluster: map[string]map[string]int{}, flow: map[string]map[string]int{}}
	m.index()

	cf := &config.File{Store: c.flags.Store}
	explicit := map[string]bool{}
	var origins []map[string]keyOrigin
	var covered []map[string]bool
	var flows []MM2Flow
	for i, fw := range m.flows {
		mp := m.pipeline(fw)
		cf.Pipelines = append(cf.Pipelines, mp.p)
		for path := range mp.explicit {
			explicit[fmt.Sprintf("pipelines[%d].%s", i, path)] = true
		}
		origins, covered = append(origins, mp.origins), append(covered, mp.covered)
		flows = append(flows, m.flowInfo(fw, mp.p.Name))
	}
	if len(m.flows) == 0 {
		c.add(Notice{File: f.Name, Key: "clusters", Kind: NoticeInvalid, Msg: "no enabled flow: set SOURCE->TARGET.enabled = true " +
			"for the flow to copy (MirrorMaker 2 copies nothing either)"})
	}
	m.rest()
	top := fmt.Sprintf("# catchup configuration converted from MirrorMaker 2 (%s) by `catchup mirrormaker2 --print-config`\n# from: %s\n", format, f.Name)
	mig, err := c.migration(cf, explicit, origins, covered, top)
	mig.Flows = flows
	return mig, err
}

// mm2 holds one MirrorMaker 2 conversion: the entries by scope.
type mm2 struct {
	c        *converter
	file     File
	format   MM2Format
	entries  []mm2Entry
	answered []bool
	aliases  []string
	global   map[string]int            // key → entry
	cluster  map[string]map[string]int // alias → key without "ALIAS." → entry
	flow     map[string]map[string]int // "A->B" → key without "A->B." → entry
	flows    [][2]string               // enabled, in file order
	// connector (a Connect connector's name) and connectCluster (Strimzi's)
	// say where the source offsets are.
	connector, connectCluster string
}

// note answers entry i.
func (m *mm2) note(i int, kind NoticeKind, format string, args ...any) {
	e := m.entries[i]
	m.answered[i] = true
	m.c.add(Notice{File: m.file.Name, Line: e.line, Key: e.label, Kind: kind, Msg: fmt.Sprintf(format, args...)})
}

// origin records that the setting at path came from entry i.
func (m *mm2) origin(mp *pipe, path string, i int) {
	e := m.entries[i]
	mp.origins[path] = keyOrigin{file: m.file.Name, key: e.label, line: e.line}
}

// index sorts the entries into their scopes and finds the enabled flows.
func (m *mm2) index() {
	for i, e := range m.entries {
		if e.key == "clusters" {
			for a := range strings.SplitSeq(e.value, ",") {
				if a = strings.TrimSpace(a); a != "" && !slices.Contains(m.aliases, a) {
					m.aliases = append(m.aliases, a)
				}
			}
			m.note(i, NoticeMapped, "→ the cluster names (%s): they name the clusters in provenance headers and {source} in target_topic", strings.Join(m.aliases, ", "))
		}
	}
	// The longest alias first, so that "east" does not take "east-2.x".
	byLength := slices.Clone(m.aliases)
	slices.SortFunc(byLength, func(a, b string) int { return len(b) - len(a) })
	for i, e := range m.entries {
		k := e.key
		switch {
		case k == "clusters":
			continue
		case k == "connect.name":
			m.connector = e.value
			m.note(i, NoticeMapped, "the connector %q: --take-over reads its source offsets under this name", e.value)
			continue
		case k == "strimzi.connectCluster":
			m.connectCluster = e.value
			m.note(i, NoticeMapped, "the cluster %q held MirrorMaker 2's Connect topics, among them its source "+
				"offsets (mirrormaker2-cluster-offsets), which --take-over reads", e.value)
			continue
		case k == "strimzi.alias" || k == "strimzi.targetCluster" || strings.HasPrefix(k, "connect."):
			m.note(i, NoticeMapped, "→ the name of cluster %q", e.value)
			continue
		}
		if src, rest, ok := strings.Cut(k, "->"); ok && slices.Contains(m.aliases, src) {
			for _, dst := range byLength {
				if key, ok := strings.CutPrefix(rest, dst+"."); ok {
					fl := src + "->" + dst
					if m.flow[fl] == nil {
						m.flow[fl] = map[string]int{}
					}
					m.flow[fl][key] = i
					if key == "enabled" {
						m.enabled(i, src, dst)
					}
					break
				}
			}
			if !m.answered[i] && !slices.ContainsFunc(byLength, func(d string) bool { return strings.HasPrefix(rest, d+".") }) {
				m.note(i, NoticeUnknown, "names a flow to a cluster not listed in clusters (%s): add it there, or fix the alias",
					strings.Join(m.aliases, ", "))
			}
			continue
		} else if ok {
			m.note(i, NoticeUnknown, "names a flow from %q, which is not listed in clusters (%s): add it there, or fix the alias",
				src, strings.Join(m.aliases, ", "))
			continue
		}
		scoped := false
		for _, a := range byLength {
			if key, ok := strings.CutPrefix(k, a+"."); ok {
				if m.cluster[a] == nil {
					m.cluster[a] = map[string]int{}
				}
				m.cluster[a][key] = i
				scoped = true
				break
			}
		}
		if !scoped {
			m.global[k] = i
		}
	}
}

// enabled reads SOURCE->TARGET.enabled.
func (m *mm2) enabled(i int, src, dst string) {
	v := strings.ToLower(m.entries[i].value)
	switch {
	case src == dst:
		m.note(i, NoticeInvalid, "a flow from a cluster to itself: MirrorMaker 2 refuses it too")
	case v == "true":
		m.flows = append(m.flows, [2]string{src, dst})
		m.note(i, NoticeMapped, "→ pipeline %q: copies %s into %s, once per run (`catchup run --every DURATION` keeps copying as MirrorMaker 2 did); "+
			"create_topics: true, as MirrorMaker 2 creates the target topics and adds partitions", pipelineName(src, dst), src, dst)
	case v == "false":
		m.note(i, NoticeNotApplicable, "the flow is disabled: no pipeline")
	default:
		m.note(i, NoticeInvalid, "%q is not true or false", m.entries[i].value)
	}
}

func pipelineName(src, dst string) string { return sanitizeName(src + "-to-" + dst) }

// lookup returns the entry of key for flow fl: SOURCE->TARGET.key, else
// the top-level key; -1 if neither is set.
func (m *mm2) lookup(fl, key string) int {
	if i, ok := m.flow[fl][key]; ok {
		if g, ok := m.global[key]; ok && !m.answered[g] {
			m.note(g, NoticeNotApplicable, "overridden for the flow %s by %s", fl, m.entries[i].label)
		}
		return i
	}
	if i, ok := m.global[key]; ok {
		return i
	}
	return -1
}

// pipeline converts one enabled flow.
func (m *mm2) pipeline(fw [2]string) *pipe {
	src, dst := fw[0], fw[1]
	fl := src + "->" + dst
	mp := newPipe()
	mp.p.Name = pipelineName(src, dst)
	mp.p.CreateTopics = true
	m.client(src, consumerFile, mp)
	m.client(dst, producerFile, mp)
	m.flowSettings(fl, src, dst, mp)
	return mp
}

// client converts the client settings of cluster alias as the source
// (consumerFile) or the target of mp: the top-level client keys, then
// consumer.X (producer.X), then ALIAS.X, then ALIAS.consumer.X, each
// overriding the last, as MirrorMaker 2 merges them.
func (m *mm2) client(alias string, side fileKind, mp *pipe) {
	role := "consumer."
	if side == producerFile {
		role = "producer."
	}
	props := properties.NewProperties()
	labels := map[string]string{"": alias + "."}
	lines := map[string]int{}
	from := map[string]int{}
	take := func(scope map[string]int, prefix string) {
		for key, i := range scope {
			k, ok := strings.CutPrefix(key, prefix)
			if !ok || (prefix == "" && (strings.HasPrefix(k, "consumer.") || strings.HasPrefix(k, "producer.") || strings.HasPrefix(k, "admin."))) {
				continue
			}
			if !m.clientKey(k, side) {
				continue
			}
			if prev, ok := from[k]; ok && prev != i {
				m.note(prev, NoticeNotApplicable, "overridden for cluster %s by %s", alias, m.entries[i].label)
			}
			from[k] = i
			_, _, _ = props.Set(k, m.entries[i].value)
			labels[k], lines[k] = m.entries[i].label, m.entries[i].line
			m.answered[i] = true
		}
	}
	take(m.global, "")
	take(m.global, role)
	take(m.cluster[alias], "")
	take(m.cluster[alias], role)
	// Keep the file's order, so that notices come in it.
	keys := slices.SortedFunc(maps.Keys(from), func(a, b string) int { return from[a] - from[b] })
	ordered := properties.NewProperties()
	for _, k := range keys {
		v, _ := props.Get(k)
		_, _, _ = ordered.Set(k, v)
	}
	fc := &propFile{c: m.c, name: m.file.Name, side: side, props: ordered, lines: lines, mp: mp, labels: labels}
	m.c.convertProps(fc, alias)
	m.strimziSecurity(alias, fc)
}

// clientKey reports whether k is a Kafka client key that side reads.
func (m *mm2) clientKey(k string, side fileKind) bool {
	if a, ok := m.c.keys[k]; ok {
		return a[side].kind != ""
	}
	_, ok := prefixAnswer(k)
	return ok
}

// strimziSecurity converts a Strimzi cluster's tls and authentication
// blocks, which name Kubernetes Secrets catchup cannot read: the YAML names
// a file or variable to fill from them, and the notice says how.
func (m *mm2) strimziSecurity(alias string, fc *propFile) {
	scope := m.cluster[alias]
	get := func(key string) (string, int) {
		if i, ok := scope["strimzi."+key]; ok {
			return m.entries[i].value, i
		}
		return "", -1
	}
	cl := fc.cl
	for j := 0; ; j++ {
		sec, i := get(fmt.Sprintf("tls.trustedCertificates[%d].secretName", j))
		if i < 0 {
			break
		}
		cert, ci := get(fmt.Sprintf("tls.trustedCertificates[%d].certificate", j))
		if ci < 0 {
			cert, ci = get(fmt.Sprintf("tls.trustedCertificates[%d].pattern", j))
		}
		file := sanitizeName(sec + "-" + cert)
		if cl.TLS == nil {
			cl.TLS = &config.TLS{CAFile: file}
			m.origin(fc.mp, fc.at+".tls.ca_file", i)
		}
		m.note(i, NoticeMapped, "→ %s.tls.ca_file: %s: write it from the Secret: kubectl get secret %s -o jsonpath='{.data.%s}' | base64 -d > %s",
			fc.at, file, sec, strings.ReplaceAll(cert, ".", `\.`), file)
		if ci >= 0 {
			m.note(ci, NoticeMapped, "the key of the certificate in Secret %s", sec)
		}
	}
	if _, i := get("tls"); i >= 0 { // tls: {} enables TLS with the system's CAs
		cl.TLS = &config.TLS{}
		m.note(i, NoticeMapped, "→ %s.tls: the system's trusted CAs", fc.at)
	}
	typ, ti := get("authentication.type")
	if ti < 0 {
		for key, i := range scope {
			if strings.HasPrefix(key, "strimzi.") && !m.answered[i] {
				m.note(i, NoticeNotApplicable, "a Strimzi setting of the cluster that catchup has no use for")
			}
		}
		return
	}
	user, ui := get("authentication.username")
	secret, _ := get("authentication.passwordSecret.secretName")
	pwKey, _ := get("authentication.passwordSecret.password")
	defer func() {
		for _, i := range slices.Sorted(maps.Values(scope)) {
			if strings.HasPrefix(m.entries[i].key, alias+".strimzi.authentication.") && !m.answered[i] {
				m.note(i, NoticeMapped, "read with authentication.type (above)")
			}
		}
	}()
	mech := map[string]string{"scram-sha-512": "SCRAM-SHA-512", "scram-sha-256": "SCRAM-SHA-256", "plain": "PLAIN"}[typ]
	switch {
	case mech != "":
		env := m.c.passwordEnv(alias)
		cl.SASL = &config.SASL{Mechanism: mech, Username: user, PasswordEnv: env}
		m.origin(fc.mp, fc.at+".sasl", ti)
		m.note(ti, NoticeMapped, "→ %s.sasl: mechanism %s, password_env %s: export %s=$(kubectl get secret %s -o jsonpath='{.data.%s}' | base64 -d)",
			fc.at, mech, env, env, secret, pwKey)
		if ui >= 0 {
			m.note(ui, NoticeMapped, "→ %s.sasl.username", fc.at)
		}
	case typ == "tls":
		cert, _ := get("authentication.certificateAndKey.certificate")
		key, _ := get("authentication.certificateAndKey.key")
		sec, _ := get("authentication.certificateAndKey.secretName")
		if cl.TLS == nil {
			cl.TLS = &config.TLS{}
		}
		cl.TLS.CertFile, cl.TLS.KeyFile = sanitizeName(sec+"-"+cert), sanitizeName(sec+"-"+key)
		m.origin(fc.mp, fc.at+".tls", ti)
		m.note(ti, NoticeMapped, "→ %s.tls.cert_file and key_file: write them from the Secret %s (keys %s and %s) with kubectl get secret", fc.at, sec, cert, key)
	case typ == "oauth":
		m.strimziOAuth(alias, fc, get, ti)
	default:
		m.note(ti, NoticeRefused, "authentication type %q: catchup converts scram-sha-512, scram-sha-256, plain, tls and oauth", typ)
		fc.cover(fc.at + ".sasl")
	}
}

// strimziOAuth converts a Strimzi authentication of type oauth: the client
// credentials grant (tokenEndpointUri, clientId, clientSecret, scope)
// becomes an OAUTHBEARER block whose client secret, in a Kubernetes
// Secret, is an environment variable; the other grants are refused.
func (m *mm2) strimziOAuth(alias string, fc *propFile, get func(string) (string, int), ti int) {
	cl := fc.cl
	refused := false
	for _, r := range []struct{ key, why string }{
		{"refreshToken.secretName", "a refresh token grant: catchup asks for tokens with the client credentials grant only; give the client a " +
			"clientSecret instead"},
		{"accessToken.secretName", "a fixed access token: write it from the Secret to a file and set " + fc.at + ".sasl.token_file " +
			"(docs/configuration.md, OAUTHBEARER)"},
		{"passwordSecret.secretName", "the password grant: catchup asks for tokens with the client credentials grant only; give the " +
			"client a clientSecret instead"},
		{"clientAssertion.secretName", "a client assertion: catchup authenticates to the token endpoint with a client secret only"},
		{"audience", "catchup asks the token endpoint for no audience: a token issued without it would be refused by the brokers"},
		{"saslExtensions", "SASL extensions, which catchup does not send"},
		{"disableTlsHostnameVerification", "catchup always verifies the token endpoint's host name"},
	} {
		v, i := get("authentication." + r.key)
		if i < 0 && r.key == "saslExtensions" {
			v, i = m.prefixed(alias, "strimzi.authentication.saslExtensions.")
		}
		if i < 0 || r.key == "disableTlsHostnameVerification" && v != "true" {
			continue
		}
		m.note(i, NoticeRefused, "%s", r.why)
		refused = true
	}
	uri, ui := get("authentication.tokenEndpointUri")
	id, ii := get("authentication.clientId")
	secret, si := get("authentication.clientSecret.secretName")
	key, ki := get("authentication.clientSecret.key")
	scope, sci := get("authentication.scope")
	switch {
	case refused:
	case ui < 0:
		m.note(ti, NoticeInvalid, "authentication type oauth without tokenEndpointUri: catchup needs the identity provider's token "+
			"endpoint (or a token file: %s.sasl.token_file)", fc.at)
		refused = true
	case ii < 0 || si < 0:
		m.note(ti, NoticeInvalid, "authentication type oauth without clientId and clientSecret: catchup asks for tokens with the "+
			"client credentials grant")
		refused = true
	}
	if refused {
		fc.cover(fc.at + ".sasl")
		return
	}
	env := m.c.passwordEnv(alias)
	cl.SASL = &config.SASL{Mechanism: "OAUTHBEARER", TokenEndpointURL: uri, ClientID: id, Scope: scope, PasswordEnv: env}
	m.origin(fc.mp, fc.at+".sasl", ti)
	m.note(ti, NoticeMapped, "→ %s.sasl: mechanism OAUTHBEARER, the client credentials grant", fc.at)
	m.note(ui, NoticeMapped, "→ %s.sasl.token_endpoint_url", fc.at)
	m.note(ii, NoticeMapped, "→ %s.sasl.client_id", fc.at)
	m.note(si, NoticeMapped, "→ %s.sasl.password_env %s: export %s=$(kubectl get secret %s -o jsonpath='{.data.%s}' | base64 -d)",
		fc.at, env, env, secret, strings.ReplaceAll(key, ".", `\.`))
	if ki >= 0 {
		m.note(ki, NoticeMapped, "the key of the client secret in Secret %s", secret)
	}
	if sci >= 0 {
		m.note(sci, NoticeMapped, "→ %s.sasl.scope", fc.at)
	}
	if _, i := m.prefixed(alias, "strimzi.authentication.tlsTrustedCertificates"); i >= 0 {
		m.note(i, NoticeAction, "catchup verifies the token endpoint's certificate against the system's CAs: add this CA to them, or "+
			"point SSL_CERT_FILE at a PEM file that holds it, when catchup runs")
	}
	for _, k := range []string{"maxTokenExpirySeconds", "accessTokenIsJwt", "enableMetrics", "includeAcceptHeader", "readTimeoutSeconds",
		"connectTimeoutSeconds", "httpRetries", "httpRetryPauseMs", "accessTokenLocation"} {
		if _, i := get("authentication." + k); i >= 0 {
			m.note(i, NoticeNotApplicable, "a setting of Strimzi's OAuth client: catchup keeps a token until shortly before it expires "+
				"and asks again")
		}
	}
}

// prefixed returns the value and entry of the first key of alias's scope
// that starts with prefix; -1 if there is none.
func (m *mm2) prefixed(alias, prefix string) (string, int) {
	first := -1
	for k, i := range m.cluster[alias] {
		if strings.HasPrefix(k, prefix) && (first < 0 || i < first) {
			first = i
		}
	}
	if first < 0 {
		return "", -1
	}
	return m.entries[first].value, first
}

// flowSettings converts the settings of flow fl (SOURCE->TARGET.X, or the
// top-level X every flow inherits).
func (m *mm2) flowSettings(fl, src, dst string, mp *pipe) {
	p := &mp.p
	en := m.flow[fl]["enabled"]
	set := func(path string, i int) { m.origin(mp, path, i) }
	boolOf := func(i int, def bool) bool {
		if i < 0 {
			return def
		}
		switch strings.ToLower(m.entries[i].value) {
		case "true":
			return true
		case "false":
			return false
		}
		m.note(i, NoticeInvalid, "%q is not true or false", m.entries[i].value)
		return def
	}
	patterns := func(i int, path string) []string {
		pats := splitMM2List(m.entries[i].value)
		for _, pat := range pats {
			if err := config.CheckPattern(pat); err != nil {
				m.note(i, NoticeInvalid, "%v", err)
				mp.covered[path] = true
			}
		}
		set(path, i)
		return pats
	}

	// Topics.
	if i := m.lookup(fl, "topics"); i >= 0 {
		p.Topics.Include = patterns(i, "topics.include")
		m.note(i, NoticeMapped, "→ topics.include (for %s): %s; each pattern must match a whole topic name, as in MirrorMaker 2", fl, strings.Join(p.Topics.Include, ", "))
	} else {
		p.Topics.Include = []string{".*"}
		set("topics.include", en)
		m.note(en, NoticeMapped, "topics not set: → topics.include: .* (MirrorMaker 2's default: every topic)")
	}
	excl := m.lookup(fl, "topics.exclude")
	if excl < 0 {
		excl = m.lookup(fl, "topics.blacklist")
	}
	if excl >= 0 {
		p.Topics.Exclude = patterns(excl, "topics.exclude")
		m.note(excl, NoticeMapped, "→ topics.exclude (for %s): %s; exclude wins over include", fl, strings.Join(p.Topics.Exclude, ", "))
	} else {
		p.Topics.Exclude = slices.Clone(mm2TopicsExclude)
		set("topics.exclude", en)
		m.note(en, NoticeMapped, "topics.exclude not set: → topics.exclude: %s (MirrorMaker 2's default)", strings.Join(mm2TopicsExclude, ", "))
	}

	// Naming.
	sep := "."
	if i := m.lookup(fl, "replication.policy.separator"); i >= 0 {
		sep = m.entries[i].value
		m.note(i, NoticeMapped, "the separator of the target topic names (target_topic)")
	}
	policy := "DefaultReplicationPolicy"
	pi := m.lookup(fl, "replication.policy.class")
	if pi >= 0 {
		policy = m.entries[pi].value
	}
	switch strings.TrimPrefix(policy, "org.apache.kafka.connect.mirror.") {
	case "DefaultReplicationPolicy":
		p.TargetTopic = "{source}" + sep + "{topic}"
		// MirrorMaker 2 never copies a topic back to the cluster it came
		// from; the prefix says where it came from.
		p.Topics.Exclude = append(p.Topics.Exclude, regexp.QuoteMeta(dst+sep)+".*", "heartbeats", `.*\.heartbeats`)
		msg := fmt.Sprintf("→ target_topic: %q (a topic t of %s is written to %s%st); topics.exclude also gets %s.* (topics that came from %s, "+
			"which MirrorMaker 2 never copies back) and its heartbeats topics", p.TargetTopic, src, src, sep, regexp.QuoteMeta(dst+sep), dst)
		if pi >= 0 {
			set("target_topic", pi)
			m.note(pi, NoticeMapped, "%s", msg)
		} else {
			set("target_topic", en)
			m.note(en, NoticeMapped, "replication.policy.class not set: MirrorMaker 2's DefaultReplicationPolicy %s", msg)
		}
	case "IdentityReplicationPolicy":
		p.TargetTopic = "{topic}"
		m.note(pi, NoticeMapped, "→ target_topic: \"{topic}\": topic names are kept; loop_prevention (on by default) keeps records "+
			"that came from %s from being copied back, which MirrorMaker 2 could not tell under this policy", dst)
	default:
		m.note(pi, NoticeRefused, "a custom replication policy (a Java class) catchup cannot run: write the naming it implements as "+
			"target_topic in the YAML, a template of {source} and {topic} (\"{source}.{topic}\", \"{topic}.mirror\"), and drop this key")
		mp.covered["target_topic"] = true
	}

	// Topic creation and configs.
	if i := m.lookup(fl, "replication.factor"); i >= 0 {
		if n, err := strconv.Atoi(m.entries[i].value); err != nil || (n < 1 && n != -1) {
			m.note(i, NoticeInvalid, "%q is not a replication factor: give 1 or more, or -1 for the target brokers' default", m.entries[i].value)
		} else {
			p.ReplicationFactor = n
			set("replication_factor", i)
			m.note(i, NoticeMapped, "→ replication_factor of the target topics create_topics creates")
		}
	} else {
		p.ReplicationFactor = 2
		set("replication_factor", en)
		m.note(en, NoticeMapped, "replication.factor not set: → replication_factor: 2 (MirrorMaker 2's default)")
	}
	if i := m.lookup(fl, "sync.topic.configs.enabled"); i >= 0 {
		if boolOf(i, true) {
			m.note(i, NoticeMapped, "→ create_topics: true, which also syncs the configs of the target topics with their source topics")
		} else {
			m.note(i, NoticeWarning, "catchup syncs the configs that decide what a target topic keeps and accepts (retention, "+
				"cleanup.policy, max.message.bytes, ...) whenever create_topics is true, and cannot turn that off alone; set "+
				"create_topics: false in the YAML (then create the target topics yourself) if the target's configs must differ")
		}
	}
	interval := func(key, path string, d *time.Duration) {
		if i := m.lookup(fl, key); i >= 0 {
			if v, ok := m.seconds(i); ok {
				*d = v
				mp.explicit[path] = true
				set(path, i)
				m.note(i, NoticeMapped, "→ %s", path)
			}
		}
	}
	interval("sync.topic.configs.interval.seconds", "config_sync_interval", &p.ConfigSyncInterval)
	for _, k := range []string{"config.properties.exclude", "config.properties.blacklist"} {
		if i := m.lookup(fl, k); i >= 0 {
			m.note(i, NoticeWarning, "catchup copies a fixed list of topic configs (cleanup.policy, retention, max.message.bytes, "+
				"min.insync.replicas, ...; never replication or broker-specific ones), so no exclusion is needed for those; "+
				"a config in the list that catchup copies is copied anyway")
		}
	}
	const aclRules = "the literal ACLs of the copied topics, renamed with them, as MirrorMaker 2 does: never ALLOW WRITE, ALLOW ALL " +
		"becomes READ, DENY kept, prefixed ACLs not copied, no target ACL removed; catchup's principal needs DESCRIBE on the cluster " +
		"of %s and DESCRIBE and ALTER on the cluster of %s"
	acl := m.lookup(fl, "sync.topic.acls.enabled")
	switch {
	case acl >= 0 && !boolOf(acl, true):
		m.note(acl, NoticeMapped, "no sync_acls: topic ACLs are not copied")
	case acl >= 0:
		p.SyncACLs = true
		set("sync_acls", acl)
		m.note(acl, NoticeMapped, "→ sync_acls: true: "+aclRules, src, dst)
	default:
		p.SyncACLs = true
		set("sync_acls", en)
		m.note(en, NoticeMapped, "sync.topic.acls.enabled not set: MirrorMaker 2's default is true → sync_acls: true: "+aclRules, src, dst)
	}
	if p.SyncACLs {
		interval("sync.topic.acls.interval.seconds", "acl_sync_interval", &p.ACLSyncInterval)
	}

	// Consumer groups.
	sync := m.lookup(fl, "sync.group.offsets.enabled")
	groups, groupsEx := m.lookup(fl, "groups"), m.lookup(fl, "groups.exclude")
	if groupsEx < 0 {
		groupsEx = m.lookup(fl, "groups.blacklist")
	}
	if sync >= 0 && boolOf(sync, false) {
		sg := &config.SyncGroups{Include: []string{".*"}, Exclude: slices.Clone(mm2GroupsExclude)}
		p.SyncGroups = sg
		set("sync_groups", sync)
		m.note(sync, NoticeMapped, "→ sync_groups: the offsets of the selected groups are committed on %s, translated exactly "+
			"through the provenance headers (no checkpoints topic, no offset-syncs); as in MirrorMaker 2, only for groups not active on %s", dst, dst)
		if groups >= 0 {
			sg.Include = patterns(groups, "sync_groups.include")
			m.note(groups, NoticeMapped, "→ sync_groups.include: %s", strings.Join(sg.Include, ", "))
		}
		if groupsEx >= 0 {
			sg.Exclude = patterns(groupsEx, "sync_groups.exclude")
			m.note(groupsEx, NoticeMapped, "→ sync_groups.exclude: %s", strings.Join(sg.Exclude, ", "))
		}
		interval("sync.group.offsets.interval.seconds", "sync_groups.interval", &sg.Interval)
	} else {
		if sync >= 0 {
			m.note(sync, NoticeMapped, "no sync_groups: consumer group offsets are not committed on the target (translate one with `catchup translate`)")
		}
		for _, i := range []int{groups, groupsEx, m.lookup(fl, "sync.group.offsets.interval.seconds")} {
			if i >= 0 {
				m.note(i, NoticeNotApplicable, "used only with sync.group.offsets.enabled = true, which is not set for %s", fl)
			}
		}
	}

	// Parallelism and commits.
	if i := m.lookup(fl, "tasks.max"); i >= 0 {
		if n, err := strconv.Atoi(m.entries[i].value); err != nil || n < 1 {
			m.note(i, NoticeInvalid, "%q is not a positive integer", m.entries[i].value)
		} else {
			p.Parallelism = n
			set("parallelism", i)
			m.note(i, NoticeMapped, "→ parallelism: partitions copied at once")
		}
	}
	if i := m.lookup(fl, "offset.flush.interval.ms"); i >= 0 {
		if n, err := strconv.ParseInt(m.entries[i].value, 10, 64); err != nil || n < 1 {
			m.note(i, NoticeInvalid, "%q is not a positive number of milliseconds", m.entries[i].value)
		} else {
			p.CommitInterval = time.Duration(n) * time.Millisecond
			set("commit_interval", i)
			m.note(i, NoticeMapped, "→ commit_interval: how often a partition's checkpoint is committed")
		}
	}

	// Everything else of the flow, and the top level keys it inherits.
	for _, k := range slices.Sorted(maps.Keys(m.flow[fl])) {
		if i := m.flow[fl][k]; !m.answered[i] {
			m.flowKey(fl, k, i)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m.global)) {
		if i := m.global[k]; !m.answered[i] {
			if _, over := m.flow[fl][k]; !over {
				m.flowKey(fl, k, i)
			}
		}
	}
}

// seconds parses entry i as a number of seconds.
func (m *mm2) seconds(i int) (time.Duration, bool) {
	n, err := strconv.ParseInt(m.entries[i].value, 10, 64)
	if err != nil || n < 0 {
		m.note(i, NoticeInvalid, "%q is not a number of seconds", m.entries[i].value)
		return 0, false
	}
	return time.Duration(n) * time.Second, true
}

// flowKey answers a flow-level key that no setting of the pipeline took.
// Client keys (consumer.X, a top-level sasl.mechanism) are left to rest.
func (m *mm2) flowKey(fl, k string, i int) {
	v := m.entries[i].value
	switch k {
	case "emit.heartbeats.enabled", "emit.heartbeats.interval.seconds", "heartbeats.topic.replication.factor":
		m.note(i, NoticeNotApplicable, "%s", whyHeartbeats)
	case "emit.checkpoints.enabled", "emit.checkpoints.interval.seconds", "checkpoints.topic.replication.factor",
		"sync.group.offsets.interval.seconds", "refresh.groups.enabled", "refresh.groups.interval.seconds":
		m.note(i, NoticeNotApplicable, "%s", whyCheckpoints)
	case "offset-syncs.topic.location", "offset-syncs.topic.replication.factor", "emit.offset-syncs.enabled", "offset.lag.max":
		m.note(i, NoticeNotApplicable, "%s", whyOffsetSyncs)
	case "refresh.topics.enabled", "refresh.topics.interval.seconds":
		m.note(i, NoticeNotApplicable, "every run lists the source topics again, and create_topics adds partitions a source topic gained")
	case "sync.topic.acls.interval.seconds":
		m.note(i, NoticeNotApplicable, "used only with sync.topic.acls.enabled = true (MirrorMaker 2's default), which is false for this flow")
	case "replication.policy.internal.topic.separator.enabled", "internal.topic.separator.enabled":
		m.note(i, NoticeNotApplicable, "catchup creates no internal topics")
	case "consumer.poll.timeout.ms":
		m.note(i, NoticeNotApplicable, "%s", whyNoWait)
	case "admin.timeout.ms", "use.incremental.alter.configs":
		m.note(i, NoticeNotApplicable, "%s", whyAdmin)
	case "exactly.once.support", "transaction.boundary", "exactly.once.source.support":
		m.note(i, NoticeNotApplicable, "%s", whyNoTxn)
	case "add.source.alias.to.metrics":
		m.note(i, NoticeNotApplicable, "catchup's metrics always carry the pipeline name")
	case "connector.class":
		if strings.HasSuffix(v, "MirrorSourceConnector") {
			m.note(i, NoticeMapped, "a MirrorSourceConnector: → one pipeline, %s", fl)
		} else {
			m.note(i, NoticeNotApplicable, "%s: catchup needs no %s (%s); convert the MirrorSourceConnector's configuration", v,
				v[strings.LastIndex(v, ".")+1:], whyCheckpoints)
		}
	case "key.converter", "value.converter", "header.converter":
		m.note(i, NoticeNotApplicable, "%s", whyBytes)
	case "topic.filter.class", "group.filter.class", "config.property.filter.class":
		if strings.HasPrefix(strings.TrimPrefix(v, "org.apache.kafka.connect.mirror."), "Default") {
			m.note(i, NoticeNotApplicable, "MirrorMaker 2's default filter: topics, groups and the config list above stand for it")
		} else {
			m.note(i, NoticeRefused, "%s: express the selection as regular expressions in topics.include and topics.exclude "+
				"(sync_groups.include for groups) and drop this key", whyJavaPlugin)
		}
	case "errors.tolerance":
		if v == "all" {
			m.note(i, NoticeRefused, "errors.tolerance = all skips records that fail: catchup never skips a record; drop it")
		} else {
			m.note(i, NoticeNotApplicable, "catchup never skips a record that fails (the default, none)")
		}
	default:
		switch {
		case strings.HasPrefix(k, "transforms") || strings.HasPrefix(k, "predicates"):
			m.note(i, NoticeRefused, "single message transforms change records; catchup copies them unchanged: transform downstream")
		case strings.HasPrefix(k, "errors."), strings.HasPrefix(k, "tasks."), strings.HasPrefix(k, "strimzi."):
			m.note(i, NoticeNotApplicable, "a setting of the Connect connector's runtime, which catchup does not have")
		case workerKey(k):
			m.note(i, NoticeNotApplicable, "%s", whyWorker)
		}
	}
}

// workerKey reports whether k is a Kafka Connect worker setting.
func workerKey(k string) bool {
	for _, p := range []string{"config.storage.", "offset.storage.", "status.storage.", "key.converter.", "value.converter.",
		"rest.", "listeners", "plugin.path", "config.providers", "dedicated.mode.", "task.shutdown.", "offset.flush.timeout.ms",
		"scheduled.rebalance.", "connect.protocol", "worker.", "emit.heartbeats", "admin.listeners", "config.action.reload",
		"header.converter", "replication.policy.", "ssl.client.auth", "access.control."} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return k == "group.id" || k == "name"
}

// rest answers every entry no flow answered: client keys the clusters'
// roles did not read, keys of clusters or flows no enabled flow uses,
// worker settings, and unknown keys.
func (m *mm2) rest() {
	srcs, dsts := map[string]bool{}, map[string]bool{}
	for _, fw := range m.flows {
		srcs[fw[0]], dsts[fw[1]] = true, true
	}
	var flowKeys []string
	for k := range mm2FlowKeys {
		flowKeys = append(flowKeys, k)
	}
	slices.Sort(flowKeys)
	candidates := slices.Concat(flowKeys, m.c.known[consumerFile], m.c.known[producerFile])
	for i, e := range m.entries {
		if m.answered[i] {
			continue
		}
		k := e.key
		alias := ""
		for a, scope := range m.cluster {
			if scope[strings.TrimPrefix(k, a+".")] == i && strings.HasPrefix(k, a+".") {
				alias, k = a, strings.TrimPrefix(k, a+".")
			}
		}
		if src, _, ok := strings.Cut(e.key, "->"); ok && slices.Contains(m.aliases, src) {
			m.note(i, NoticeNotApplicable, "the flow is not enabled: nothing uses it")
			continue
		}
		role, inner := "", k
		for _, r := range []string{"consumer.", "producer.", "admin."} {
			if s, ok := strings.CutPrefix(k, r); ok {
				role, inner = r, s
			}
		}
		who := "every cluster"
		if alias != "" {
			who = alias
		}
		switch {
		case alias != "" && !srcs[alias] && !dsts[alias]:
			m.note(i, NoticeNotApplicable, "%s is in no enabled flow: nothing uses it", alias)
		case role == "admin.":
			m.note(i, NoticeNotApplicable, "%s", whyAdmin)
		case role == "consumer." && (m.clientKey(inner, consumerFile) || m.c.keys[inner][producerFile].kind != ""):
			m.note(i, NoticeNotApplicable, "a consumer setting of %s, which is the source of no enabled flow: catchup reads only sources", who)
		case role == "producer." && (m.clientKey(inner, producerFile) || m.c.keys[inner][consumerFile].kind != ""):
			m.note(i, NoticeNotApplicable, "a producer setting of %s, which is the target of no enabled flow: catchup writes only to targets "+
				"(MirrorMaker 2 wrote its offset syncs to the source)", who)
		case role == "" && m.clientKey(k, consumerFile):
			m.note(i, NoticeNotApplicable, "a consumer setting: %s is only a target here, where MirrorMaker 2's producer ignored it too", who)
		case role == "" && m.clientKey(k, producerFile):
			m.note(i, NoticeNotApplicable, "a producer setting: %s is only a source here, where MirrorMaker 2's consumer ignored it too", who)
		case workerKey(k) || strings.HasPrefix(k, "strimzi."):
			m.note(i, NoticeNotApplicable, "%s", whyWorker)
		case mm2FlowKeys[k]:
			m.note(i, NoticeNotApplicable, "no enabled flow uses it")
		default:
			if best := nearestKeys(inner, candidates); len(best) > 0 {
				m.note(i, NoticeUnknown, "not a MirrorMaker 2 or Kafka client setting (did you mean %s?)", quoteOr(best))
			} else {
				m.note(i, NoticeUnknown, "not a MirrorMaker 2 or Kafka client setting that catchup knows; remove it, or fix it if it is misspelled")
			}
		}
	}
}

// mm2FlowKeys are the flow-level keys of MirrorMaker 2 that catchup
// answers, for the suggestions given for a misspelled key.
var mm2FlowKeys = map[string]bool{
	"enabled": true, "topics": true, "topics.exclude": true, "groups": true, "groups.exclude": true,
	"replication.policy.class": true, "replication.policy.separator": true, "replication.factor": true,
	"sync.topic.configs.enabled": true, "sync.topic.configs.interval.seconds": true, "sync.topic.acls.enabled": true,
	"sync.topic.acls.interval.seconds": true,
	"sync.group.offsets.enabled":       true, "sync.group.offsets.interval.seconds": true, "emit.heartbeats.enabled": true,
	"emit.checkpoints.enabled": true, "offset-syncs.topic.location": true, "tasks.max": true, "offset.flush.interval.ms": true,
	"refresh.topics.interval.seconds": true, "config.properties.exclude": true,
}

// splitMM2List splits a MirrorMaker 2 list (topics, groups): regular
// expressions separated by commas, spaces around them ignored.
func splitMM2List(s string) []string {
	var out []string
	for _, p := range splitTopics(s) {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// flowInfo says where MirrorMaker 2 kept the source offsets of flow fw.
func (m *mm2) flowInfo(fw [2]string, pipeline string) MM2Flow {
	src, dst := fw[0], fw[1]
	f := MM2Flow{Source: src, Target: dst, Pipeline: pipeline, Heartbeats: m.format != MM2Strimzi, HeartbeatsInterval: time.Second}
	if m.format == MM2Strimzi {
		f.HeartbeatsKey = "spec.mirrors[].heartbeatConnector (not set)"
	}
	if i := m.lookup(src+"->"+dst, "emit.heartbeats.enabled"); i >= 0 {
		f.Heartbeats = strings.EqualFold(strings.TrimSpace(m.entries[i].value), "true")
		f.HeartbeatsKey = ""
		if !f.Heartbeats {
			f.HeartbeatsKey = fmt.Sprintf("%s:%d: %s = %s", m.file.Name, m.entries[i].line, m.entries[i].label, m.entries[i].value)
		}
	}
	if i := m.lookup(src+"->"+dst, "emit.heartbeats.interval.seconds"); i >= 0 {
		if n, err := strconv.ParseInt(strings.TrimSpace(m.entries[i].value), 10, 64); err == nil {
			f.HeartbeatsInterval = time.Duration(n) * time.Second
			if n < 0 { // MirrorHeartbeatTask emits nothing then
				f.Heartbeats = false
				f.HeartbeatsKey = fmt.Sprintf("%s:%d: %s = %s", m.file.Name, m.entries[i].line, m.entries[i].label, m.entries[i].value)
			}
		}
	}
	switch m.format {
	case MM2Dedicated:
		f.OffsetsTopic, f.OffsetsCluster, f.Connector = "mm2-offsets."+src+".internal", dst, "MirrorSourceConnector"
		if i, ok := m.cluster[dst]["offset.storage.topic"]; ok {
			f.OffsetsTopic = m.entries[i].value
		}
	case MM2Strimzi:
		f.OffsetsTopic, f.OffsetsCluster, f.Connector = "mirrormaker2-cluster-offsets", dst, src+"->"+dst+".MirrorSourceConnector"
		if m.connectCluster != "" {
			f.OffsetsCluster = m.connectCluster
		}
		if i, ok := m.cluster[f.OffsetsCluster]["offset.storage.topic"]; ok {
			f.OffsetsTopic = m.entries[i].value
		}
	case MM2Connect:
		f.OffsetsCluster, f.Connector = dst, "MirrorSourceConnector"
		if m.connector != "" {
			f.Connector = m.connector
		}
	}
	return f
}
