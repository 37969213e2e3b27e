package mirrormaker

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kafka-catchup/catchup/internal/config"
)

// kerberosFiles writes a keytab and a krb5.conf, which the configuration
// checks exist, and names the krb5.conf in KRB5_CONFIG.
func kerberosFiles(t *testing.T) (keytab, krb5Conf string) {
	t.Helper()
	dir := t.TempDir()
	keytab, krb5Conf = filepath.Join(dir, "client.keytab"), filepath.Join(dir, "krb5.conf")
	for _, f := range []string{keytab, krb5Conf} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("KRB5_CONFIG", krb5Conf)
	return keytab, krb5Conf
}

// TestKerberos: a GSSAPI client configuration, with its Krb5LoginModule
// entry, converts to a sasl block with the principal, the keytab (or a
// password variable when the entry names none) and the service name; the
// Java client's default mechanism is GSSAPI too. Each key's answer is
// asserted.
func TestKerberos(t *testing.T) {
	kt, conf := kerberosFiles(t)
	jaas := func(opts string) string {
		return "sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required " + opts + ";\n"
	}
	tests := []struct {
		name, consumer string
		want           config.SASL
		notices        map[string][]string // key → its notices
	}{
		{"keytab", "security.protocol=SASL_SSL\nsasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka-prod\n" +
			"sasl.kerberos.min.time.before.relogin=60000\n" +
			jaas(`useKeyTab=true storeKey=true keyTab="`+kt+`" principal="mirror/host-1@CORP.EXAMPLE"`),
			config.SASL{Mechanism: "GSSAPI", Principal: "mirror/host-1@CORP.EXAMPLE", KeytabFile: kt, ServiceName: "kafka-prod"},
			map[string][]string{
				"sasl.mechanism": {"mapped: → source.sasl.mechanism (Kerberos; the realm's KDCs from krb5_conf, default $KRB5_CONFIG " +
					"or /etc/krb5.conf: set source.sasl.krb5_conf if MirrorMaker ran with -Djava.security.krb5.conf)"},
				"sasl.kerberos.service.name": {"mapped: → source.sasl.service_name"},
				"sasl.kerberos.min.time.before.relogin": {"not applicable: tuning of the Java client's Kerberos login; catchup logs in " +
					"with a keytab or a password (never kinit's ticket cache) and renews its ticket-granting ticket before it expires"},
				"sasl.jaas.config": {
					"not applicable: option storeKey of com.sun.security.auth.module.Krb5LoginModule: catchup logs in with the keytab or password itself and renews its tickets",
					"mapped: → source.sasl.principal and source.sasl.keytab_file (the keytab stays where it is; catchup reads it)"},
			}},
		{"default mechanism, ticket cache", "security.protocol=SASL_PLAINTEXT\n" + jaas(`useTicketCache=true principal="mirror@CORP.EXAMPLE"`),
			config.SASL{Mechanism: "GSSAPI", Principal: "mirror@CORP.EXAMPLE", PasswordEnv: "CATCHUP_C_PASSWORD", ServiceName: "kafka"},
			map[string][]string{
				"sasl.jaas.config": {"action: → source.sasl.principal; the entry uses the ticket cache of kinit, which catchup does not read: " +
					"set source.sasl.keytab_file to the principal's keytab, or export CATCHUP_C_PASSWORD with the principal's password before running catchup"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := convert(t, plainConsumer+tt.consumer, plainProducer, Flags{})
			if err != nil {
				t.Fatalf("err = %v, want a runnable configuration (yaml %s)", err, m.YAML)
			}
			got := *m.File.Pipelines[0].Source.SASL
			if got.Krb5Conf != conf {
				t.Errorf("krb5_conf %q, want $KRB5_CONFIG %q", got.Krb5Conf, conf)
			}
			got.Krb5Conf = ""
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreUnexported(config.SASL{})); diff != "" {
				t.Errorf("source.sasl (-want +got):\n%s", diff)
			}
			for key, want := range tt.notices {
				if got := noticesOf(m, key); !slices.Equal(got, want) {
					t.Errorf("notices of %s:\n got %q\nwant %q", key, got, want)
				}
			}
			if strings.Contains(string(m.YAML), "storeKey") {
				t.Errorf("the YAML carries a JAAS option:\n%s", m.YAML)
			}
		})
	}
}

// TestKerberosRefused: a Krb5LoginModule entry without a principal, and a
// service name beside another mechanism, get a line each saying why.
func TestKerberosRefused(t *testing.T) {
	m, err := convert(t, plainConsumer+"security.protocol=SASL_SSL\nsasl.mechanism=GSSAPI\n"+
		"sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab=\"/k\";\n", plainProducer, Flags{})
	if err == nil {
		t.Fatalf("no error for an entry without a principal (yaml %s)", m.YAML)
	}
	want := []string{`invalid: com.sun.security.auth.module.Krb5LoginModule has no principal option: add principal="NAME@REALM", the principal catchup logs in as`}
	if got := noticesOf(m, "sasl.jaas.config"); !slices.Equal(got, want) {
		t.Errorf("notices of sasl.jaas.config:\n got %q\nwant %q", got, want)
	}
	m, _ = convert(t, plainConsumer+"security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.kerberos.service.name=kafka\n"+
		"sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"p\";\n", plainProducer, Flags{})
	want = []string{"not applicable: used only with GSSAPI (Kerberos), and sasl.mechanism is PLAIN"}
	if got := noticesOf(m, "sasl.kerberos.service.name"); !slices.Equal(got, want) {
		t.Errorf("notices of sasl.kerberos.service.name:\n got %q\nwant %q", got, want)
	}
}

// TestLoginModuleMechanism: a login module beside a sasl.mechanism it does
// not serve is invalid, and the notice names the mechanisms it serves.
func TestLoginModuleMechanism(t *testing.T) {
	tests := []struct {
		name, mechanism, jaas, want string
	}{
		{"Kerberos module", "PLAIN", `com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="/k" principal="p@R";`,
			"invalid: login module com.sun.security.auth.module.Krb5LoginModule does not go with sasl.mechanism=PLAIN (it serves GSSAPI)"},
		{"SCRAM module", "PLAIN", `org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p";`,
			"invalid: login module org.apache.kafka.common.security.scram.ScramLoginModule does not go with sasl.mechanism=PLAIN " +
				"(it serves SCRAM-SHA-256 or SCRAM-SHA-512)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := convert(t, plainConsumer+"security.protocol=SASL_SSL\nsasl.mechanism="+tt.mechanism+"\nsasl.jaas.config="+tt.jaas+"\n",
				plainProducer, Flags{})
			if err == nil {
				t.Fatalf("no error for %s with sasl.mechanism=%s (yaml %s)", tt.jaas, tt.mechanism, m.YAML)
			}
			if got := noticesOf(m, "sasl.jaas.config"); !slices.Equal(got, []string{tt.want}) {
				t.Errorf("notices of sasl.jaas.config:\n got %q\nwant %q", got, []string{tt.want})
			}
		})
	}
}

// TestKerberosMM2: a MirrorMaker 2 cluster's GSSAPI settings convert as a
// client file's do.
func TestKerberosMM2(t *testing.T) {
	kt, conf := kerberosFiles(t)
	data := "clusters = onprem, cloud\nonprem.bootstrap.servers = kafka-1:9092\ncloud.bootstrap.servers = b:9092\n" +
		"onprem->cloud.enabled = true\nonprem.security.protocol = SASL_PLAINTEXT\nonprem.sasl.mechanism = GSSAPI\n" +
		"onprem.sasl.kerberos.service.name = kafka\n" +
		`onprem.sasl.jaas.config = com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="` + kt +
		`" principal="mm2@CORP.EXAMPLE";` + "\n"
	m, err := ConvertMM2(File{Name: "mm2.properties", Data: []byte(data)}, Flags{})
	if err != nil {
		t.Fatalf("ConvertMM2: %v", err)
	}
	got := *m.File.Pipelines[0].Source.SASL
	want := config.SASL{Mechanism: "GSSAPI", Principal: "mm2@CORP.EXAMPLE", KeytabFile: kt, ServiceName: "kafka", Krb5Conf: conf}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(config.SASL{})); diff != "" {
		t.Errorf("source.sasl (-want +got):\n%s", diff)
	}
	for key, want := range map[string]string{
		"onprem.sasl.jaas.config":           "→ source.sasl.principal and source.sasl.keytab_file",
		"onprem.sasl.kerberos.service.name": "→ source.sasl.service_name",
	} {
		if got := noticesOf(m, key); len(got) != 1 || !strings.Contains(got[0], want) {
			t.Errorf("notices of %s: %q, want one saying %q", key, got, want)
		}
	}
}
