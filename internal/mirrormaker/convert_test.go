package mirrormaker

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/magiconair/properties"

	"github.com/kafka-catchup/catchup/internal/config"
)

// The CLI's tests (cmd/catchup/mirrormaker_test.go) check whole conversions
// of the files in testdata through --print-config, message by
// message; these check the parts.

// convert runs Convert on one consumer and one producer config
// given as text, selecting every topic.
func convert(t *testing.T, consumer, producer string, fl Flags) (*Migration, error) {
	t.Helper()
	if fl.Whitelist == "" {
		fl.Whitelist = ".*"
	}
	m, err := Convert([]File{{Name: "c.properties", Data: []byte(consumer)}},
		File{Name: "p.properties", Data: []byte(producer)}, fl)
	if m == nil {
		t.Fatalf("Convert returned a nil Migration (err %v)", err)
	}
	return m, err
}

// noticesOf returns "kind: msg" of every notice about key.
func noticesOf(m *Migration, key string) []string {
	var out []string
	for _, n := range m.Notices {
		if n.Key == key {
			out = append(out, string(n.Kind)+": "+n.Msg)
		}
	}
	return out
}

const (
	plainConsumer = "bootstrap.servers=src:9092\ngroup.id=g\n"
	plainProducer = "bootstrap.servers=dst:9092\n"
)

func TestParseJAAS(t *testing.T) {
	tests := []struct {
		name, in string
		want     []jaasModule
		wantErr  string
	}{
		{"quoted", `org.x.PlainLoginModule required username="alice" password="p w";`,
			[]jaasModule{{"org.x.PlainLoginModule", "required", []jaasOption{{"username", "alice"}, {"password", "p w"}}}}, ""},
		{"unquoted, spaces, newlines", "  M  optional\n a = b\tc=d ;",
			[]jaasModule{{"M", "optional", []jaasOption{{"a", "b"}, {"c", "d"}}}}, ""},
		{"escapes and ; inside quotes", `M required password="a\"b\\c;d";`,
			[]jaasModule{{"M", "required", []jaasOption{{"password", `a"b\c;d`}}}}, ""},
		{"two modules", `A required; B sufficient x="1";`,
			[]jaasModule{{"A", "required", nil}, {"B", "sufficient", []jaasOption{{"x", "1"}}}}, ""},
		{"no flag", `M username="u";`, nil, "not a JAAS login module entry"},
		{"no semicolon", `M required password="hunter2"`, nil, "does not end with ';'"},
		{"unclosed quote", `M required username="u" password="hunter2;`, nil, `the value of option 2 of M has no closing '"'`},
		{"no value", `M required password;`, nil, `option 1 of M has no '=' and value`},
		{"broken quote", `M required password="a"hunter2" x=y;`, nil, `option 2 of M has no '=' and value`},
		{"empty", "  ", nil, "empty"},
	}
	for _, tt := range tests {
		got, err := parseJAAS(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: parseJAAS(%q) error = %v, want it to contain %q", tt.name, tt.in, err, tt.wantErr)
			} else if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("%s: parseJAAS error %q quotes the password", tt.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: parseJAAS(%q): %v", tt.name, tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(jaasModule{}, jaasOption{})); diff != "" {
			t.Errorf("%s: parseJAAS(%q) (-want +got):\n%s", tt.name, tt.in, diff)
		}
	}
}

func TestKeyLines(t *testing.T) {
	data := "# comment \\\n! another\n\na = 1\nb:2\n  c 3\nd = x\\\n  y\\\n  z\ne=\\u00e9\ne=again\nlast=no newline"
	l := &properties.Loader{Encoding: properties.UTF8, DisableExpansion: true}
	got := keyLines(l, []byte(data))
	want := map[string]int{"a": 4, "b": 5, "c": 6, "d": 7, "e": 10, "last": 12}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("keyLines (-want +got):\n%s", diff)
	}
}

func TestMMTopics(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{".*", []string{".*"}},
		{`"orders, payments"`, []string{"orders", "payments"}},
		{"'a.*|b'", []string{"a.*|b"}},
		{"a{1,3},[x,y]z,c\\,d", []string{"a{1,3}", "[x,y]z", "c\\,d"}},
		{" , ", nil},
	}
	for _, tt := range tests {
		if got := mmTopics(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("mmTopics(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMMStem(t *testing.T) {
	tests := []struct{ path, role, def, want string }{
		{"conf/sourceCluster1Consumer.config", "consumer", "source", "sourceCluster1"},
		{"targetClusterProducer.config", "producer", "target", "targetCluster"},
		{"east-consumer.properties", "consumer", "source", "east"},
		{"consumer.properties", "consumer", "source", "source"},
		{"my cluster.conf", "consumer", "source", "my-cluster"},
	}
	for _, tt := range tests {
		if got := mmStem(tt.path, tt.role, tt.def); got != tt.want {
			t.Errorf("mmStem(%q, %q) = %q, want %q", tt.path, tt.role, got, tt.want)
		}
	}
}

// TestEveryKeyAnswered feeds every key catchup knows, on both sides, and
// checks that each gets a notice of its own that is not "unknown".
func TestEveryKeyAnswered(t *testing.T) {
	for key, sides := range mmKeys() {
		for side, ans := range sides {
			consumer, producer := plainConsumer, plainProducer
			line := key + "=x\n"
			if key == "bootstrap.servers" || key == "group.id" {
				line = ""
			}
			if mmSide(side) == mmConsumer {
				consumer += line
			} else {
				producer += line
			}
			m, _ := convert(t, consumer, producer, Flags{})
			got := noticesOf(m, key)
			if len(got) == 0 {
				t.Errorf("%s in a %s config (%s): no notice", key, mmSide(side), ans.kind)
			}
			for _, n := range got {
				if strings.HasPrefix(n, string(NoticeUnknown)) {
					t.Errorf("%s in a %s config: %s", key, mmSide(side), n)
				}
			}
		}
	}
	for _, key := range []string{"zookeeper.sync.time.ms", "metrics.num.samples", "sasl.login.refresh.window.factor"} {
		m, _ := convert(t, plainConsumer+key+"=1\n", plainProducer, Flags{})
		if got := noticesOf(m, key); len(got) != 1 || strings.HasPrefix(got[0], string(NoticeUnknown)) {
			t.Errorf("%s: notices %q, want one known answer", key, got)
		}
	}
}

func TestUnknownKeys(t *testing.T) {
	m, err := convert(t, plainConsumer+"bootstrap.server=x:1\nfoo.bar.baz=1\nderializer.class=x\n",
		plainProducer+"compresion.type=lz4\nserilizer.class=x\n", Flags{})
	var mmErr *Error
	if !errors.As(err, &mmErr) || len(mmErr.Problems) != 5 || m.File != nil {
		t.Fatalf("err = %v, File %v; want a *Error with 5 problems and no File", err, m.File)
	}
	// The draft YAML is still there, every problem in it as a comment.
	for _, p := range mmErr.Problems {
		if !strings.Contains(string(m.YAML), "PROBLEM: "+p.String()) && !strings.Contains(string(m.YAML), "PROBLEM: "+p.Key+": ") {
			t.Errorf("the draft YAML does not carry %q:\n%s", p, m.YAML)
		}
	}
	want := map[string][]string{
		"bootstrap.server": {`unknown: not a Kafka consumer setting (did you mean "bootstrap.servers"?)`},
		"foo.bar.baz":      {"unknown: not a Kafka consumer setting that catchup knows; remove it, or fix it if it is misspelled"},
		"compresion.type":  {`unknown: not a Kafka producer setting (did you mean "compression.type"?)`},
		// Suggestions come from the file's own kind: a consumer file is
		// never told about serializer.class, a producer key.
		"derializer.class": {`unknown: not a Kafka consumer setting (did you mean "key.deserializer" or "value.deserializer"?)`},
		"serilizer.class":  {`unknown: not a Kafka producer setting (did you mean "serializer.class"?)`},
	}
	for key, w := range want {
		if got := noticesOf(m, key); !slices.Equal(got, w) {
			t.Errorf("notices of %s = %q, want %q", key, got, w)
		}
	}
}

func TestPasswordStaysOut(t *testing.T) {
	const pw = `pa"ss;w0rd`
	consumer := plainConsumer + "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n" +
		// In a .properties file "\\" is one backslash, which escapes the quote for JAAS.
		`sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="pa\\"ss;w0rd";` + "\n"
	producer := plainProducer + "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-256\n" +
		"sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"v\" password=\"other-secret\";\n" +
		"ssl.keystore.password=ks-secret\nssl.key.password=key-secret\n"
	m, err := convert(t, consumer, producer, Flags{Whitelist: "t"})
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	if got := m.Passwords["CATCHUP_C_PASSWORD"].Reveal(); got != pw {
		t.Errorf("Passwords[CATCHUP_C_PASSWORD] = %q, want %q", got, pw)
	}
	if got := m.Passwords["CATCHUP_P_PASSWORD"].Reveal(); got != "other-secret" {
		t.Errorf("Passwords[CATCHUP_P_PASSWORD] = %q, want other-secret", got)
	}
	src, dst := m.File.Pipelines[0].Source.SASL, m.File.Pipelines[0].Target.SASL
	if src.PasswordEnv != "CATCHUP_C_PASSWORD" || src.Username != "u" || dst.PasswordEnv != "CATCHUP_P_PASSWORD" || dst.Username != "v" {
		t.Errorf("SASL blocks = %+v and %+v", src, dst)
	}
	everything := string(m.YAML) + fmt.Sprintf("%v %+v %#v", m, m, m.Passwords)
	for _, n := range m.Notices {
		everything += n.String()
	}
	for _, secret := range []string{pw, "w0rd", "other-secret", "ks-secret", "key-secret"} {
		if strings.Contains(everything, secret) {
			t.Errorf("the output holds the secret %q", secret)
		}
	}
}

func TestSASL(t *testing.T) {
	const iam = "security.protocol=SASL_SSL\nsasl.mechanism=AWS_MSK_IAM\n" +
		"sasl.jaas.config=software.amazon.msk.auth.iam.IAMLoginModule required awsProfileName=\"dr\";\n" +
		"sasl.client.callback.handler.class=software.amazon.msk.auth.iam.IAMClientCallbackHandler\n"
	tests := []struct {
		name, consumer string
		wantErr        bool
		key            string
		want           []string
	}{
		{"MSK IAM", iam, false, "sasl.jaas.config", []string{
			"action: option awsProfileName: catchup signs with the standard AWS configuration: run it with AWS_PROFILE=dr",
			"mapped: → source.sasl (AWS_MSK_IAM: no username or password)"}},
		{"GSSAPI", "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n", true, "sasl.mechanism", []string{
			"refused: GSSAPI is not supported by catchup, which authenticates with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or AWS_MSK_IAM"}},
		{"no mechanism", "security.protocol=SASL_SSL\n", true, "sasl.mechanism", []string{
			"refused: not set, so with security.protocol=SASL_SSL the Java client used GSSAPI (Kerberos), which catchup does not support; " +
				"catchup authenticates with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or AWS_MSK_IAM"}},
		{"no jaas", "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n", true, "sasl.jaas.config", []string{
			"invalid: not set: PLAIN needs a username; add sasl.jaas.config (if MirrorMaker read a JAAS file named by " +
				"-Djava.security.auth.login.config, copy its KafkaClient entry here)"}},
		{"module and mechanism disagree", "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n" +
			"sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\" password=\"p\";\n", true,
			"sasl.jaas.config", []string{"invalid: login module org.apache.kafka.common.security.scram.ScramLoginModule does not go " +
				"with sasl.mechanism=PLAIN (it serves SCRAM-SHA-256 or SCRAM-SHA-512)"}},
		{"sasl keys without SASL", "sasl.mechanism=PLAIN\n", false, "sasl.mechanism", []string{
			"not applicable: security.protocol is PLAINTEXT, so the Java client did not use SASL either"}},
	}
	for _, tt := range tests {
		m, err := convert(t, plainConsumer+tt.consumer, plainProducer, Flags{})
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: err = %v, want error %v", tt.name, err, tt.wantErr)
		}
		if got := noticesOf(m, tt.key); !slices.Equal(got, tt.want) {
			t.Errorf("%s: notices of %s:\n got %q\nwant %q", tt.name, tt.key, got, tt.want)
		}
		if tt.name == "MSK IAM" && err == nil {
			if s := m.File.Pipelines[0].Source; s.SASL.Mechanism != "AWS_MSK_IAM" || !s.TLSEnabled() {
				t.Errorf("MSK IAM: source = %+v, want AWS_MSK_IAM over TLS", s)
			}
		}
	}
}

func TestTLSStores(t *testing.T) {
	dir := t.TempDir()
	write := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pemCA := write("ca.pem")
	write("converted.truststore.pem")
	write("converted.keystore.cert.pem")
	write("converted.keystore.key.pem")
	pemKeystore := write("client.pem")
	converted := filepath.Join(dir, "converted.truststore.jks")
	convertedKS := filepath.Join(dir, "converted.keystore.p12")

	tests := []struct {
		name, props string
		want        config.TLS
	}{
		{"PEM trust store", "ssl.truststore.type=PEM\nssl.truststore.location=" + pemCA, config.TLS{CAFile: pemCA}},
		{"JKS not converted yet", "ssl.truststore.location=/nowhere/t.jks\nssl.keystore.location=/nowhere/k.jks", config.TLS{}},
		{"converted earlier", "ssl.truststore.location=" + converted + "\nssl.keystore.type=PKCS12\nssl.keystore.location=" + convertedKS,
			config.TLS{CAFile: filepath.Join(dir, "converted.truststore.pem"), CertFile: filepath.Join(dir, "converted.keystore.cert.pem"),
				KeyFile: filepath.Join(dir, "converted.keystore.key.pem")}},
		{"PEM key store", "ssl.keystore.type=PEM\nssl.keystore.location=" + pemKeystore, config.TLS{CertFile: pemKeystore, KeyFile: pemKeystore}},
		{"encrypted PEM key", "ssl.keystore.type=PEM\nssl.keystore.location=" + pemKeystore + "\nssl.key.password=k", config.TLS{}},
	}
	for _, tt := range tests {
		m, err := convert(t, plainConsumer+"security.protocol=SSL\n"+tt.props+"\n", plainProducer, Flags{})
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		enabled := true
		tt.want.Enabled = &enabled
		if diff := cmp.Diff(&tt.want, m.File.Pipelines[0].Source.TLS); diff != "" {
			t.Errorf("%s: tls (-want +got):\n%s", tt.name, diff)
		}
	}

	m, _ := convert(t, plainConsumer+"security.protocol=SSL\nssl.keystore.location=/k/client.keystore.jks\n", plainProducer, Flags{})
	want := []string{"action: catchup reads PEM files, not JKS key stores: convert it with " +
		"`keytool -importkeystore -srckeystore /k/client.keystore.jks -destkeystore /k/client.keystore.p12 -deststoretype PKCS12`, then " +
		"`openssl pkcs12 -in /k/client.keystore.p12 -clcerts -nokeys -out /k/client.keystore.cert.pem` and " +
		"`openssl pkcs12 -in /k/client.keystore.p12 -nocerts -nodes -out /k/client.keystore.key.pem` (they ask for ssl.keystore.password; " +
		"make the key file readable only by catchup's user), then set cert_file: /k/client.keystore.cert.pem and " +
		"key_file: /k/client.keystore.key.pem under source.tls (catchup mirrormaker does once both files exist)"}
	if got := noticesOf(m, "ssl.keystore.location"); !slices.Equal(got, want) {
		t.Errorf("JKS key store:\n got %q\nwant %q", got, want)
	}

	m, _ = convert(t, plainConsumer+"ssl.truststore.location=/t.jks\n", plainProducer, Flags{})
	if got := noticesOf(m, "ssl.truststore.location"); len(got) != 1 || !strings.HasPrefix(got[0], "not applicable: security.protocol is PLAINTEXT") {
		t.Errorf("ssl key without SSL: %q", got)
	}
	if m.File.Pipelines[0].Source.TLS != nil {
		t.Errorf("ssl key without SSL turned TLS on")
	}
}

func TestDataLoss(t *testing.T) {
	const async = "producer.type=async\nqueue.enqueue.timeout.ms=0\n"
	tests := []struct {
		name, producer string
		fl             Flags
		wantErr        bool
		wantAcks       string
		key            string
		want           string
	}{
		{"acks 0 refused", "acks=0\n", Flags{}, true, "", "acks", "refused: acks=0 can lose records silently: the producer never learns " +
			"whether a write arrived, yet the checkpoint would move past it; use acks=all (catchup's default), or pass --allow-data-loss to accept the loss"},
		{"acks 0 allowed", "acks=0\n", Flags{AllowDataLoss: true}, false, "none", "acks", "warning: → producer.acks: none and " +
			"producer.allow_data_loss: true (--allow-data-loss): records lost on the way to the target are never noticed, and the checkpoint moves past them"},
		{"request.required.acks 1", "request.required.acks=1\n", Flags{}, false, "leader", "request.required.acks", "mapped: → producer.acks: leader"},
		{"acks wins", "acks=all\nrequest.required.acks=0\n", Flags{}, false, "all", "request.required.acks",
			"not applicable: the old producer's name for acks, which is also set and wins, as in the Java producer"},
		{"drop when full refused", async, Flags{}, true, "all", "queue.enqueue.timeout.ms", "refused: 0 tells the old async producer to drop " +
			"records when its queue is full, so MirrorMaker could lose records silently with this file (check the target with catchup verify); " +
			"catchup never drops records, it waits for the target: remove the key to accept that, or pass --allow-data-loss"},
		{"drop when full allowed", async, Flags{AllowDataLoss: true}, false, "all", "queue.enqueue.timeout.ms", "warning: 0 tells the old " +
			"async producer to drop records when its queue is full (accepted with --allow-data-loss); catchup never drops records, it waits for the target"},
		{"sync producer queue", "queue.enqueue.timeout.ms=0\n", Flags{}, false, "all", "queue.enqueue.timeout.ms",
			"not applicable: used only with producer.type=async"},
		{"abort.on.send.failure false", "", Flags{AbortOnSendFailure: "false"}, true, "all", "--abort.on.send.failure",
			"refused: false made MirrorMaker skip records it failed to send and commit past them, losing them; catchup never skips: " +
				"it stops the partition and keeps its checkpoint before them. Drop the flag to accept that, or pass --allow-data-loss"},
	}
	for _, tt := range tests {
		m, err := convert(t, plainConsumer, plainProducer+tt.producer, tt.fl)
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: err = %v, want error %v", tt.name, err, tt.wantErr)
		}
		if got := noticesOf(m, tt.key); !slices.Contains(got, tt.want) {
			t.Errorf("%s: notices of %s:\n got %q\nwant %q", tt.name, tt.key, got, tt.want)
		}
		if err == nil {
			w := m.File.Pipelines[0].Producer
			if w.Acks != tt.wantAcks || w.AllowDataLoss != (tt.wantAcks == "none") {
				t.Errorf("%s: acks %q allow_data_loss %v, want %q", tt.name, w.Acks, w.AllowDataLoss, tt.wantAcks)
			}
		}
	}
}

func TestProducerValues(t *testing.T) {
	m, err := convert(t, plainConsumer, plainProducer+"compression.codec=4\nretries=0\nmax.request.size=5000000\nrequest.timeout.ms=15000\n", Flags{})
	if err != nil {
		t.Fatal(err)
	}
	w := m.File.Pipelines[0].Producer
	if w.Compression != "zstd" || w.Retries != 0 || w.BatchBytes != config.MaxBatchBytes || w.Timeout.Seconds() != 15 {
		t.Errorf("producer = %+v, want zstd, 0 retries (kept through the YAML), %d batch bytes, 15s", w, config.MaxBatchBytes)
	}
	if !strings.Contains(string(m.YAML), "retries: 0") {
		t.Errorf("YAML lacks retries: 0:\n%s", m.YAML)
	}
}

func TestFlags(t *testing.T) {
	tests := []struct {
		name    string
		fl      Flags
		wantErr bool
		check   func(p *config.Pipeline) bool
		key     string
		want    string
	}{
		{"comma list", Flags{Whitelist: `"orders, payments"`}, false,
			func(p *config.Pipeline) bool {
				return p.Topics.Match("orders") && p.Topics.Match("payments") && !p.Topics.Match("orders2")
			},
			"--whitelist", `mapped: → topics.include: orders, payments (MirrorMaker read each comma as "or"; each pattern matches whole topic names, as there)`},
		{"blacklist only", Flags{Whitelist: " ", Blacklist: "test.*"}, false,
			func(p *config.Pipeline) bool { return p.Topics.Match("orders") && !p.Topics.Match("test1") },
			"--whitelist", "mapped: not given: → topics.include: .* (every topic), less --blacklist"},
		{"no whitelist", Flags{Whitelist: " "}, true, nil, "--whitelist", "invalid: required, as by MirrorMaker: a Java regular " +
			"expression or a comma-separated list of topics; --whitelist '.*' selects every topic (internal topics are never copied)"},
		{"java regex", Flags{Whitelist: "orders.*+"}, true, nil, "--whitelist", `invalid: "orders.*+" uses the possessive quantifier "*+", ` +
			"Java regex syntax that Go's RE2 engine does not support; drop the extra '+': RE2 never backtracks, so the plain quantifier is already linear-time"},
		{"include flag", Flags{Whitelist: "a", WhitelistFlag: "--include"}, false, nil, "--include",
			"mapped: → topics.include: a (matched against whole topic names, as by MirrorMaker)"},
		{"streams and producers", Flags{NumStreams: "3", NumProducers: "5"}, false,
			func(p *config.Pipeline) bool { return p.Parallelism == 5 }, "--num.producers", "mapped: → parallelism (the larger of --num.streams " +
				"and --num.producers): catchup copies up to 5 partitions of each pipeline at once where MirrorMaker ran 5 producers (catchup's default is 8)"},
		{"bad streams", Flags{NumStreams: "0"}, true, nil, "--num.streams", `invalid: "0" is not a positive integer`},
		{"commit interval", Flags{OffsetCommitIntervalMS: "60000"}, false,
			func(p *config.Pipeline) bool { return p.CommitInterval.Minutes() == 1 }, "--offset.commit.interval.ms",
			"mapped: → commit_interval: the most time between two checkpoint commits of a partition"},
		{"commit interval past the lease", Flags{OffsetCommitIntervalMS: "3600000"}, true, nil, "--offset.commit.interval.ms",
			"invalid: commit_interval: 1h0m0s is not shorter than lease_duration 20m0s; the lease would expire between commits"},
		{"message handler", Flags{MessageHandler: "com.example.Rename"}, true, nil, "--message.handler",
			"refused: catchup copies records unchanged (adding only its provenance header) and cannot run the Java message handler " +
				"com.example.Rename: one that renamed topics can be replaced by target_topic in the YAML (\"{source}.{topic}\", " +
				"\"{topic}.mirror\"); one that filtered or changed records has no equivalent"},
		{"store", Flags{Store: "s3://bucket"}, true, nil, "--store", `invalid: "s3://bucket" is not file://PATH or dynamodb://TABLE`},
	}
	for _, tt := range tests {
		m, err := convert(t, plainConsumer, plainProducer, tt.fl)
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: err = %v, want error %v", tt.name, err, tt.wantErr)
		}
		if got := noticesOf(m, tt.key); !slices.Contains(got, tt.want) {
			t.Errorf("%s: notices of %s:\n got %q\nwant %q", tt.name, tt.key, got, tt.want)
		}
		if tt.check != nil && err == nil && !tt.check(&m.File.Pipelines[0]) {
			t.Errorf("%s: pipeline %+v", tt.name, m.File.Pipelines[0])
		}
	}
}

func TestPipelineNames(t *testing.T) {
	files := []File{
		{Name: "a/east.consumer.config", Data: []byte("bootstrap.servers=e:9092\ngroup.id=mirror\n")},
		{Name: "b/east.consumer.config", Data: []byte("bootstrap.servers=w:9092\ngroup.id=mirror\n")},
		{Name: "west.properties", Data: []byte("bootstrap.servers=w2:9092\ngroup.id=my group/1\n")},
	}
	m, err := Convert(files, File{Name: "east.producer.config", Data: []byte(plainProducer)}, Flags{Whitelist: ".*"})
	if err != nil {
		t.Fatal(err)
	}
	var got [][3]string
	for _, p := range m.File.Pipelines {
		got = append(got, [3]string{p.Name, p.Source.Name, p.Target.Name})
	}
	want := [][3]string{{"mirror", "east", "east-3"}, {"mirror.east-2", "east-2", "east-3"}, {"my-group-1", "west", "east-3"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}

func TestNotAPropertiesFile(t *testing.T) {
	m, err := Convert([]File{{Name: "bad.config", Data: []byte("a=\\u00")}}, File{Name: "p", Data: []byte(plainProducer)}, Flags{Whitelist: "x"})
	if err == nil || len(m.Notices) == 0 || m.Notices[0].File != "bad.config" || m.Notices[0].Kind != NoticeInvalid {
		t.Errorf("err = %v, notices %v; want an invalid notice on bad.config", err, m.Notices)
	}
}

func TestPasswordEnvDistinct(t *testing.T) {
	c := &mmConv{envs: map[string]string{}}
	got := []string{c.passwordEnv("east-1"), c.passwordEnv("east.1"), c.passwordEnv("east-1")}
	want := []string{"CATCHUP_EAST_1_PASSWORD", "CATCHUP_EAST_1_2_PASSWORD", "CATCHUP_EAST_1_PASSWORD"}
	if !slices.Equal(got, want) {
		t.Errorf("passwordEnv = %q, want %q", got, want)
	}
}
