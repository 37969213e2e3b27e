package mirrormaker

import (
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
		{"GSSAPI without JAAS", "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n", true, "sasl.jaas.config", []string{
			"invalid: not set: GSSAPI needs a principal and its keytab; add sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule " +
				"required useKeyTab=true keyTab=\"/path/to.keytab\" principal=\"NAME@REALM\"; (if MirrorMaker read a JAAS file named by " +
				"-Djava.security.auth.login.config, copy its KafkaClient entry here)"}},
		{"no mechanism", "security.protocol=SASL_SSL\n", true, "sasl.mechanism", []string{
			"invalid: not set, so with security.protocol=SASL_SSL the Java client used GSSAPI (Kerberos) with the JAAS file of " +
				"-Djava.security.auth.login.config: add sasl.mechanism=GSSAPI and sasl.jaas.config with its KafkaClient entry " +
				"(Krb5LoginModule with useKeyTab=true, keyTab and principal), or set sasl.mechanism to the one the brokers expect"}},
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

func TestPasswordEnvDistinct(t *testing.T) {
	c := &converter{envs: map[string]string{}}
	got := []string{c.passwordEnv("east-1"), c.passwordEnv("east.1"), c.passwordEnv("east-1")}
	want := []string{"CATCHUP_EAST_1_PASSWORD", "CATCHUP_EAST_1_2_PASSWORD", "CATCHUP_EAST_1_PASSWORD"}
	if !slices.Equal(got, want) {
		t.Errorf("passwordEnv = %q, want %q", got, want)
	}
}

// oauthConsumer is the Java client's OAuth login (KIP-768): client
// credentials at a token endpoint.
const oauthConsumer = "security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\n" +
	"sasl.oauthbearer.token.endpoint.url=https://sso.example.com/realms/kafka/protocol/openid-connect/token\n" +
	"sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler\n" +
	`sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="mm" clientSecret="oauth-secret-1" scope="kafka";` + "\n"

// TestOAuth: the Java client's OAuth settings become the OAUTHBEARER block
// of catchup, the client secret an environment variable that no output
// holds; the variants catchup cannot do are refused with the reason.
func TestOAuth(t *testing.T) {
	m, err := convert(t, plainConsumer+oauthConsumer, plainProducer, Flags{})
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	want := &config.SASL{Mechanism: "OAUTHBEARER", TokenEndpointURL: "https://sso.example.com/realms/kafka/protocol/openid-connect/token",
		ClientID: "mm", Scope: "kafka", PasswordEnv: "CATCHUP_C_PASSWORD"}
	if diff := cmp.Diff(want, m.File.Pipelines[0].Source.SASL, cmpopts.IgnoreUnexported(config.SASL{})); diff != "" {
		t.Errorf("source.sasl (-want +got):\n%s", diff)
	}
	if got := m.Passwords["CATCHUP_C_PASSWORD"].Reveal(); got != "oauth-secret-1" {
		t.Errorf("Passwords[CATCHUP_C_PASSWORD] = %q, want the client secret", got)
	}
	everything := string(m.YAML) + fmt.Sprintf("%v %+v %#v", m, m, m.Passwords)
	for _, n := range m.Notices {
		everything += n.String()
	}
	if strings.Contains(everything, "oauth-secret-1") {
		t.Errorf("the output holds the client secret:\n%s", everything)
	}
	if _, err := config.Parse(m.YAML, "catchup.yaml"); err != nil {
		t.Errorf("the YAML does not load: %v\n%s", err, m.YAML)
	}
	for key, want := range map[string][]string{
		"sasl.mechanism":                      {"mapped: → source.sasl.mechanism: the token from sasl.oauthbearer.token.endpoint.url, asked with the client credentials of sasl.jaas.config"},
		"sasl.oauthbearer.token.endpoint.url": {"mapped: → source.sasl.token_endpoint_url: catchup asks it for tokens with the client credentials grant"},
		"sasl.login.callback.handler.class":   {"mapped: the Java client's standard OAuth login (a token from sasl.oauthbearer.token.endpoint.url), which catchup does itself"},
		"sasl.jaas.config": {"mapped: → source.sasl.client_id and scope (options clientId and scope)",
			"action: the client secret is not copied into the YAML, which names the environment variable CATCHUP_C_PASSWORD instead " +
				"(source.sasl.password_env): export it with the secret before `catchup run` (catchup mirrormaker itself uses the one in " +
				"this file when the variable is not set)"},
	} {
		if got := noticesOf(m, key); !slices.Equal(got, want) {
			t.Errorf("notices of %s:\n got %q\nwant %q", key, got, want)
		}
	}

	// A token file (file:// endpoint), and KIP-1139's own keys for the client.
	m, _ = convert(t, plainConsumer+"security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\n"+
		"sasl.oauthbearer.token.endpoint.url=file:///var/run/secrets/tokens/kafka\n", plainProducer, Flags{})
	if !strings.Contains(string(m.YAML), "token_file: /var/run/secrets/tokens/kafka") {
		t.Errorf("file:// endpoint: the YAML has no token_file:\n%s", m.YAML)
	}
	if got := noticesOf(m, "sasl.oauthbearer.token.endpoint.url"); !slices.Equal(got, []string{
		"mapped: → source.sasl.token_file: the token is read from that file at each connection",
		`invalid: source.sasl.token_file: file "/var/run/secrets/tokens/kafka" does not exist`}) {
		t.Errorf("file:// endpoint: %q", got)
	}
	m, err = convert(t, plainConsumer+"security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\n"+
		"sasl.oauthbearer.token.endpoint.url=https://idp/token\nsasl.oauthbearer.client.credentials.client.id=mm\n"+
		"sasl.oauthbearer.client.credentials.client.secret=oauth-secret-2\nsasl.oauthbearer.scope=kafka\n", plainProducer, Flags{})
	if err != nil {
		t.Fatalf("KIP-1139 keys: %v", err)
	}
	if s := m.File.Pipelines[0].Source.SASL; s.ClientID != "mm" || s.Scope != "kafka" || s.PasswordEnv != "CATCHUP_C_PASSWORD" ||
		m.Passwords["CATCHUP_C_PASSWORD"].Reveal() != "oauth-secret-2" {
		t.Errorf("KIP-1139 keys: source.sasl = %+v", s)
	}

	refused := []struct {
		name, props, key, want string
	}{
		{"unsecured login", "security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\n" +
			`sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="mm";` + "\n",
			"sasl.jaas.config", "refused: options unsecuredLogin…: the Java client's unsecured login, which makes up an unsigned token itself"},
		{"no token endpoint", "security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\n" +
			`sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;` + "\n",
			"sasl.oauthbearer.token.endpoint.url", "refused: not set, so the Java client used the Java client's unsecured login"},
		{"custom handler", oauthConsumer + "sasl.login.callback.handler.class=com.example.VaultTokenHandler\n",
			"sasl.login.callback.handler.class", "refused: com.example.VaultTokenHandler is Java code that catchup cannot run"},
		{"SASL extensions", "security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\nsasl.oauthbearer.token.endpoint.url=https://idp/token\n" +
			`sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="a" clientSecret="oauth-secret-3" extension_logicalCluster="lkc-1";` + "\n",
			"sasl.jaas.config", "refused: options extension_…: SASL extensions"},
		{"no client id", "security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\nsasl.oauthbearer.token.endpoint.url=https://idp/token\n" +
			`sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientSecret="oauth-secret-4";` + "\n",
			"sasl.jaas.config", "invalid: no clientId"},
	}
	for _, tt := range refused {
		m, err := convert(t, plainConsumer+tt.props, plainProducer, Flags{})
		if err == nil {
			t.Errorf("%s: converted, want a refusal", tt.name)
		}
		got := noticesOf(m, tt.key)
		if !slices.ContainsFunc(got, func(n string) bool { return strings.HasPrefix(n, tt.want) }) {
			t.Errorf("%s: notices of %s:\n got %q\nwant one starting %q", tt.name, tt.key, got, tt.want)
		}
		var all string
		for _, n := range m.Notices {
			all += n.String() + "\n"
		}
		if strings.Contains(all+string(m.YAML), "oauth-secret") {
			t.Errorf("%s: a client secret in the output:\n%s", tt.name, all)
		}
	}
}
