package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateKerberos: each mistake in a GSSAPI block is one error at its
// key, saying the fix; a keytab, or a password from one source, is valid.
func TestValidateKerberos(t *testing.T) {
	dir := t.TempDir()
	kt := filepath.Join(dir, "catchup.keytab")
	if err := os.WriteFile(kt, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.keytab")
	const p0 = "pipelines[0] (orders-dr)"
	gss := func(s SASL) func(*File) {
		return func(f *File) {
			s.Mechanism = "GSSAPI"
			f.Pipelines[0].Source.SASL = &s
		}
	}
	for _, tt := range []struct {
		name         string
		edit         func(*File)
		field, msg   string // the only error's field and a part of its message; "" : valid
		wantProblems int
	}{
		{"keytab", gss(SASL{Principal: "catchup@EXAMPLE.COM", KeytabFile: kt, ServiceName: "kafka"}), "", "", 0},
		{"password", gss(SASL{Principal: "catchup", PasswordEnv: "KRB_PASSWORD", Krb5Conf: kt}), "", "", 0},
		{"password secret", gss(SASL{Principal: "svc/host@EXAMPLE.COM", PasswordSecretARN: testSecretARN}), "", "", 0},
		{"no principal", gss(SASL{KeytabFile: kt}), "source.sasl.principal", "required with mechanism GSSAPI", 1},
		{"bad principal", gss(SASL{Principal: "catchup@EXAMPLE@COM", KeytabFile: kt}), "source.sasl.principal",
			`"catchup@EXAMPLE@COM" is not a Kerberos principal: write NAME[/INSTANCE]@REALM`, 1},
		{"no keys", gss(SASL{Principal: "catchup"}), "source.sasl", "set keytab_file (a keytab", 1},
		{"keytab and password", gss(SASL{Principal: "catchup", KeytabFile: kt, PasswordEnv: "P"}), "source.sasl",
			"only one of keytab_file, password_env, password_file and password_secret_arn", 1},
		{"missing keytab", gss(SASL{Principal: "catchup", KeytabFile: missing}), "source.sasl.keytab_file", missing + `" does not exist`, 1},
		{"missing krb5.conf", gss(SASL{Principal: "catchup", KeytabFile: kt, Krb5Conf: missing}), "source.sasl.krb5_conf",
			"or leave it out for $KRB5_CONFIG or /etc/krb5.conf", 1},
		{"service principal as service name", gss(SASL{Principal: "catchup", KeytabFile: kt, ServiceName: "kafka/broker-1"}),
			"source.sasl.service_name", "without '/' or '@'", 1},
		{"username", gss(SASL{Principal: "catchup", KeytabFile: kt, Username: "catchup"}), "source.sasl.username",
			"is not used with GSSAPI: give the Kerberos principal in principal", 1},
		{"keytab without GSSAPI", func(f *File) {
			f.Pipelines[0].Source.SASL = &SASL{Mechanism: "PLAIN", Username: "u", PasswordEnv: "P", KeytabFile: kt}
		}, "source.sasl.keytab_file", "only with mechanism GSSAPI", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := validFile()
			tt.edit(f)
			got := problems(t, f.Validate())
			if len(got) != tt.wantProblems || tt.wantProblems == 1 &&
				(got[0].Pipeline != p0 || got[0].Field != tt.field || !strings.Contains(got[0].Msg, tt.msg)) {
				t.Errorf("Validate() = %q\nwant %d error(s) at %q %q containing %q", got, tt.wantProblems, p0, tt.field, tt.msg)
			}
		})
	}
}
