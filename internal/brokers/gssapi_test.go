package brokers_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/keytab"
)

// kdcEnv is the Kerberos side of a run of test/kafka/it.sh: the source's
// GSSAPI listener and the KDC of test/kafka/kdc.sh (Apache Kerby).
type kdcEnv struct {
	listener string // the source's GSSAPI listener (SASL_PLAINTEXT), host:port
	dir      string // krb5.conf, client.keytab, password
	realm    string
}

// needGSSAPI returns the clusters and the KDC, or skips the test when the
// source has no GSSAPI listener.
func needGSSAPI(t *testing.T) (itEnv, kdcEnv) {
	t.Helper()
	e := needBrokers(t)
	k := kdcEnv{listener: os.Getenv("CATCHUP_IT_SOURCE_GSSAPI"), dir: os.Getenv("CATCHUP_IT_KDC_DIR"), realm: os.Getenv("CATCHUP_IT_KDC_REALM")}
	if k.listener == "" || k.dir == "" || k.realm == "" {
		missing(t, "the source cluster has no GSSAPI listener or no KDC (CATCHUP_IT_SOURCE_GSSAPI, CATCHUP_IT_KDC_DIR; "+
			"CATCHUP_KAFKA_SASL_SSL=1 for cluster.sh up)")
	}
	return e, k
}

// gssapiSource is the source's GSSAPI listener with sasl (YAML lines of
// the sasl block after its mechanism and krb5_conf).
func gssapiSource(k kdcEnv, sasl string) endpoint {
	return endpoint{name: "it-source", brokers: k.listener,
		sasl: fmt.Sprintf("        mechanism: GSSAPI\n        krb5_conf: %q\n", filepath.Join(k.dir, "krb5.conf")) + sasl}
}

// TestGSSAPI copies from the source's GSSAPI listener (SASL_PLAINTEXT,
// service principal kafka/127.0.0.1, the host the broker advertises) with
// tickets from a real KDC, Apache Kerby's SimpleKdcServer (test/kafka/
// kdc.sh), the principal logging in with a keytab, then with a password;
// the test's own consumer counts the copy. A keytab whose keys are not the
// principal's, and a principal the KDC does not know, fail the run at once
// with an error that names the cluster, GSSAPI and the principal, and
// shows neither the password nor a key.
func TestGSSAPI(t *testing.T) {
	e, k := needGSSAPI(t)
	t.Run("keytab", func(t *testing.T) {
		copyTopic(t, e, spec{store: t.TempDir(), name: "gssapi-keytab",
			source: gssapiSource(k, fmt.Sprintf("        principal: catchup@%s\n        keytab_file: %q\n", k.realm, filepath.Join(k.dir, "client.keytab"))),
			target: plaintext("it-target", e.target.brokers)})
	})
	t.Run("password", func(t *testing.T) {
		copyTopic(t, e, spec{store: t.TempDir(), name: "gssapi-password",
			// no realm: krb5.conf's default_realm
			source: gssapiSource(k, fmt.Sprintf("        principal: catchup-pw\n        password_file: %q\n", filepath.Join(k.dir, "password"))),
			target: plaintext("it-target", e.target.brokers)})
	})

	wrongPassword := "wrong-" + randomHex(16)
	wrong := keytab.New()
	if err := wrong.AddEntry("catchup", k.realm, wrongPassword, time.Now(), 1, etypeID.AES128_CTS_HMAC_SHA1_96); err != nil {
		t.Fatal(err)
	}
	wrongKeytab := filepath.Join(t.TempDir(), "wrong.keytab")
	wrongBytes, err := wrong.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wrongKeytab, wrongBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	right, err := os.ReadFile(filepath.Join(k.dir, "client.keytab"))
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct{ name, principal, keytab, want string }{
		{"wrong keytab", "catchup@" + k.realm, wrongKeytab, "PREAUTH_FAILED"},
		{"unknown principal", "nobody@" + k.realm, filepath.Join(k.dir, "client.keytab"), "nobody@" + k.realm},
	} {
		t.Run(bad.name, func(t *testing.T) {
			ctx := testContext(t, time.Minute)
			topic := uniqueTopic("gssapi-refused")
			createTopic(ctx, t, e.source.brokers, topic, 1)
			createTopic(ctx, t, e.target.brokers, topic, 1)
			s := spec{store: t.TempDir(), name: "gssapi-refused", topic: topic,
				source: gssapiSource(k, fmt.Sprintf("        principal: %s\n        keytab_file: %q\n", bad.principal, bad.keytab)),
				target: plaintext("it-target", e.target.brokers)}
			rep, logs, took, err := runRefused(ctx, t, s, bad.name)
			msg := err.Error()
			for _, want := range []string{`"it-source"`, "GSSAPI", bad.principal, bad.want} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not mention %s", msg, want)
				}
			}
			if took > 20*time.Second {
				t.Errorf("the run took %v to give up; refused credentials are not worth retrying", took)
			}
			outputs := map[string]string{"error": msg, "error (%+v)": fmt.Sprintf("%+v", err), "log": logs.String(),
				"report (%+v)": fmt.Sprintf("%+v", rep), "store contents": dirContents(t, s.store)}
			for what, out := range outputs {
				if strings.Contains(out, wrongPassword) {
					t.Errorf("the %s shows the wrong keytab's password", what)
				}
				for name, kt := range map[string][]byte{"wrong keytab": wrongBytes, "client keytab": right} {
					if keyShown(out, kt) {
						t.Errorf("the %s shows a key of the %s", what, name)
					}
				}
			}
		})
	}
}

// keyShown reports whether out holds 16 bytes in a row of keytab kt, raw
// or in hex: a key, or part of one.
func keyShown(out string, kt []byte) bool {
	const n = 16
	for i := 0; i+n <= len(kt); i++ {
		part := kt[i : i+n]
		if bytes.Count(part, part[:1]) == n {
			continue // a run of one byte (zeros, padding) is no key
		}
		if strings.Contains(out, string(part)) || strings.Contains(strings.ToLower(out), hex.EncodeToString(part)) {
			return true
		}
	}
	return false
}
