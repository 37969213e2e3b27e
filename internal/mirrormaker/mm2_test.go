package mirrormaker

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kafka-catchup/catchup/internal/config"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/mm2")

// TestConvertMM2Golden converts the three shapes of a MirrorMaker 2
// configuration and compares every notice and the YAML with the golden
// file beside each (go test -run TestConvertMM2Golden -update rewrites
// them); each key the reader found must have a notice at its line.
func TestConvertMM2Golden(t *testing.T) {
	for _, tt := range []struct {
		file     string
		format   MM2Format
		runnable bool
	}{
		{"dedicated.properties", MM2Dedicated, true},
		{"connect.json", MM2Connect, true},
		// The CA certificate lives in a Kubernetes Secret: the YAML names the
		// file to write it to, which does not exist here, so it cannot run yet.
		{"strimzi.yaml", MM2Strimzi, false},
	} {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", "mm2", tt.file)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			m, err := ConvertMM2(File{Name: tt.file, Data: data}, Flags{})
			var convErr *Error
			if tt.runnable && err != nil || !tt.runnable && !errors.As(err, &convErr) {
				t.Fatalf("ConvertMM2(%s) error = %v, want runnable %v", tt.file, err, tt.runnable)
			}
			var b strings.Builder
			for _, n := range m.Notices {
				fmt.Fprintln(&b, n)
				if n.Kind == NoticeUnknown {
					t.Errorf("unknown key in a real configuration: %s", n)
				}
			}
			fmt.Fprintf(&b, "--- flows: %+v\n", m.Flows)
			b.Write(m.YAML)
			golden := path + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(b.String()), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), b.String()); diff != "" {
				t.Errorf("ConvertMM2(%s) (-golden +got):\n%s", tt.file, diff)
			}

			c := newConverter(Flags{})
			format, entries := c.readMM2(File{Name: tt.file, Data: data})
			if format != tt.format {
				t.Errorf("format %q, want %q", format, tt.format)
			}
			for _, e := range entries {
				found := false
				for _, n := range m.Notices {
					found = found || n.Key == e.label && n.Line == e.line
				}
				if !found {
					t.Errorf("%s:%d: %s (read as %s): no notice", tt.file, e.line, e.label, e.key)
				}
			}
		})
	}
}

// TestConvertMM2Refuses: what catchup cannot run stops the conversion
// (exit 2 from the CLI) with the key, its line and the fix.
func TestConvertMM2Refuses(t *testing.T) {
	base := "clusters = a, b\na.bootstrap.servers = a:9092\nb.bootstrap.servers = b:9092\na->b.enabled = true\n"
	tests := []struct{ name, extra, key, want string }{
		{"custom policy", "replication.policy.class = com.example.PrefixPolicy\n", "replication.policy.class", "write the naming it implements as target_topic"},
		{"custom filter", "a->b.topic.filter.class = com.example.Filter\n", "a->b.topic.filter.class", "topics.include and topics.exclude"},
		{"transforms", "transforms = mask\n", "transforms", "catchup copies them unchanged"},
		{"acks 0", "b.producer.acks = 0\n", "b.producer.acks", "acks"},
		{"unknown flow", "a->c.enabled = true\n", "a->c.enabled", "not listed in clusters"},
		{"misspelled", "topics.exlude = x\n", "topics.exlude", "did you mean"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ConvertMM2(File{Name: "mm2.properties", Data: []byte(base + tt.extra)}, Flags{})
			var convErr *Error
			if !errors.As(err, &convErr) {
				t.Fatalf("ConvertMM2 error = %v, want an *Error", err)
			}
			var got []string
			for _, n := range convErr.Problems {
				got = append(got, n.String())
				if n.Key == tt.key && n.Line == 5 && strings.Contains(n.Msg, tt.want) {
					return
				}
			}
			t.Errorf("problems %q: none on %s at line 5 saying %q (yaml %s)", got, tt.key, tt.want, m.YAML)
		})
	}
}

// TestConvertMM2BrokenValueNotRepeated: a JAAS configuration broken over
// two lines without the '\' that continues a value leaves the end of the
// password on a line of its own, which the properties format reads as a
// key. The notice must name the line and never repeat its text.
func TestConvertMM2BrokenValueNotRepeated(t *testing.T) {
	data := "clusters = a, b\na.bootstrap.servers = a:9092\nb.bootstrap.servers = b:9092\na->b.enabled = true\n" +
		"a.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"p4ss\n" +
		"w0rd-s3cret\";\n"
	_, err := ConvertMM2(File{Name: "mm2.properties", Data: []byte(data)}, Flags{})
	var convErr *Error
	if !errors.As(err, &convErr) {
		t.Fatalf("ConvertMM2 error = %v, want an *Error", err)
	}
	found := false
	for _, n := range convErr.Problems {
		if strings.Contains(n.String(), "s3cret") {
			t.Errorf("the end of the password reached a notice: %s", n)
		}
		if n.Line == 6 && n.Kind == NoticeUnknown && strings.Contains(n.Msg, "not repeated") {
			found = true
		}
	}
	if !found {
		t.Errorf("no notice at mm2.properties:6 saying the line is not repeated: %v", convErr.Problems)
	}
}

// TestConvertMM2StrayQuoteNotRepeated: in a Connect request, a stray
// quote makes the end of a password a key of its own, one that the
// converter answers as not applicable rather than unknown; it must not be
// repeated either (found by FuzzConvertMM2).
func TestConvertMM2StrayQuoteNotRepeated(t *testing.T) {
	data := `{"config":{"source.cluster.bootstrap.servers":"a:9092",m,w0rd-s3cret"}}`
	m, _ := ConvertMM2(File{Name: "connect.json", Data: []byte(data)}, Flags{})
	found := false
	for _, n := range m.Notices {
		if strings.Contains(n.String(), "s3cret") {
			t.Errorf("the end of the password reached a notice: %s", n)
		}
		found = found || n.Kind == NoticeNotApplicable && n.Key == "" && strings.Contains(n.Msg, "not repeated")
	}
	if !found {
		t.Errorf("no not-applicable notice saying the key is not repeated: %v", m.Notices)
	}
}

// TestStrimziOAuth: a Strimzi cluster's authentication of type oauth with
// the client credentials grant becomes an OAUTHBEARER block; the other
// grants and settings catchup cannot honour are refused by line.
func TestStrimziOAuth(t *testing.T) {
	const head = `apiVersion: kafka.strimzi.io/v1beta2
kind: KafkaMirrorMaker2
metadata: {name: m}
spec:
  connectCluster: b
  clusters:
    - alias: b
      bootstrapServers: b:9092
    - alias: a
      bootstrapServers: a:9093
      authentication:
        type: oauth
        tokenEndpointUri: https://sso/token
`
	const tail = `  mirrors:
    - {sourceCluster: a, targetCluster: b, topicsPattern: "t"}
`
	const creds = "        clientId: mm2\n        clientSecret: {secretName: s, key: secret}\n"
	m, err := ConvertMM2(File{Name: "mm2.yaml", Data: []byte(head + creds + "        scope: kafka\n" + tail)}, Flags{})
	if err != nil {
		t.Fatalf("ConvertMM2: %v", err)
	}
	got := m.File.Pipelines[0].Source.SASL
	want := config.SASL{Mechanism: "OAUTHBEARER", TokenEndpointURL: "https://sso/token", ClientID: "mm2", Scope: "kafka", PasswordEnv: "CATCHUP_A_PASSWORD"}
	if diff := cmp.Diff(&want, got, cmpopts.IgnoreUnexported(config.SASL{})); diff != "" {
		t.Errorf("source.sasl (-want +got):\n%s", diff)
	}
	if want := "export CATCHUP_A_PASSWORD=$(kubectl get secret s -o jsonpath='{.data.secret}' | base64 -d)"; !slices.ContainsFunc(m.Notices,
		func(n Notice) bool { return strings.Contains(n.Msg, want) }) {
		t.Errorf("no notice gives %q", want)
	}
	for _, tt := range []struct{ name, extra, key, want string }{
		{"refresh token", creds + "        refreshToken: {secretName: r, key: token}\n", "spec.clusters[1].authentication.refreshToken.secretName",
			"refused: a refresh token grant"},
		{"access token", "        accessToken: {secretName: r, key: token}\n", "spec.clusters[1].authentication.accessToken.secretName",
			"refused: a fixed access token: write it from the Secret to a file and set source.sasl.token_file"},
		{"password grant", creds + "        username: u\n        passwordSecret: {secretName: p, password: pw}\n",
			"spec.clusters[1].authentication.passwordSecret.secretName", "refused: the password grant"},
		{"audience", creds + "        audience: kafka-brokers\n", "spec.clusters[1].authentication.audience", "refused: catchup asks the token endpoint for no audience"},
		{"no client", "", "spec.clusters[1].authentication.type", "invalid: authentication type oauth without clientId and clientSecret"},
	} {
		m, err := ConvertMM2(File{Name: "mm2.yaml", Data: []byte(head + tt.extra + tail)}, Flags{})
		if err == nil {
			t.Errorf("%s: converted, want a refusal", tt.name)
		}
		var notes []string
		for _, n := range m.Notices {
			if n.Key == tt.key {
				notes = append(notes, string(n.Kind)+": "+n.Msg)
			}
		}
		if !slices.ContainsFunc(notes, func(n string) bool { return strings.HasPrefix(n, tt.want) }) {
			t.Errorf("%s: notices of %s: %q, want one starting %q", tt.name, tt.key, notes, tt.want)
		}
	}
}

// TestSyntaxErrorQuotesNothing: a MirrorMaker 2 file that does not parse
// as JSON or YAML gets a notice that says where, never what: the parser's
// own message quotes the text it stopped at, here a password.
func TestSyntaxErrorQuotesNothing(t *testing.T) {
	for _, tt := range []struct {
		name, data, where string
	}{
		{"a flow mapping broken at the secret", "{|s3cret0", "line 1, column 2"},
		{"JSON missing a comma after the secret", `{"sasl.jaas.config": "password=s3cret" "b": 1}`, "line 1, column "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ConvertMM2(File{Name: "mm2.json", Data: []byte(tt.data)}, Flags{})
			if err == nil {
				t.Fatalf("ConvertMM2(%q) = nil error, want the file refused", tt.data)
			}
			var syntax *Notice
			for i, n := range m.Notices {
				if strings.Contains(n.Msg, "s3cret") || strings.Contains(n.Key, "s3cret") {
					t.Errorf("notice %q quotes the password", n)
				}
				if strings.Contains(n.Msg, "not a MirrorMaker 2 configuration (JSON or YAML)") {
					syntax = &m.Notices[i]
				}
			}
			if syntax == nil || !strings.Contains(syntax.Msg, tt.where) {
				t.Errorf("notices %q: want one saying the file is not JSON or YAML, at %q", m.Notices, tt.where)
			}
		})
	}
}
