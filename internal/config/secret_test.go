package config

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

const password = "hunter2-Pa55w0rd"

// holder has a Secret in every kind of place a careless caller might print.
type holder struct {
	User     string
	Password Secret
	Ptr      *Secret
	List     []Secret
	hidden   Secret
}

func TestSecretRedacted(t *testing.T) {
	s := NewSecret(password)
	h := holder{User: "u", Password: s, Ptr: &s, List: []Secret{s}, hidden: s}

	var out []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T %[1]v"} {
		out = append(out, fmt.Sprintf(verb, s), fmt.Sprintf(verb, h), fmt.Sprintf(verb, &h))
	}
	out = append(out, fmt.Sprint(s), fmt.Sprintln(h), s.String(), s.GoString())

	var logs bytes.Buffer
	for _, handler := range []slog.Handler{slog.NewJSONHandler(&logs, nil), slog.NewTextHandler(&logs, nil)} {
		log := slog.New(handler)
		log.Info("sasl", "password", s, "holder", h, "ptr", &s)
		log.Info("sasl", slog.Group("g", slog.Any("password", s)))
	}
	out = append(out, logs.String())

	j, err := json.Marshal(h)
	if err != nil {
		t.Fatalf("json.Marshal: %v", err)
	}
	y, err := yaml.Marshal(h)
	if err != nil {
		t.Fatalf("yaml.Marshal: %v", err)
	}
	out = append(out, string(j), string(y))

	for _, o := range out {
		if strings.Contains(o, password) || strings.Contains(o, fmt.Sprintf("%x", password)) {
			t.Errorf("output shows the password: %s", o)
		}
	}
	if !strings.Contains(logs.String(), `"password":"[REDACTED]"`) || !strings.Contains(string(j), `"Password":"[REDACTED]"`) {
		t.Errorf("redacted outputs do not say [REDACTED]:\nlogs: %s\njson: %s", logs.String(), j)
	}
	if got := s.Reveal(); got != password {
		t.Errorf("Reveal() = %q, want the plaintext", got)
	}
	if got := (Secret{}).Reveal(); got != "" {
		t.Errorf("Secret{}.Reveal() = %q, want empty", got)
	}
}

func TestSASLPassword(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	withNewline := write("nl", password+"\n")
	withCRLF := write("crlf", password+"\r\n")
	bare := write("bare", password)
	empty := write("empty", "\n")
	t.Setenv("CATCHUP_TEST_PASSWORD", password)
	t.Setenv("CATCHUP_TEST_EMPTY", "")

	tests := []struct {
		name    string
		sasl    SASL
		want    string // the plaintext, or a part of the error
		wantErr bool
	}{
		{"env", SASL{PasswordEnv: "CATCHUP_TEST_PASSWORD"}, password, false},
		{"file with newline", SASL{PasswordFile: withNewline}, password, false},
		{"file with crlf", SASL{PasswordFile: withCRLF}, password, false},
		{"file without newline", SASL{PasswordFile: bare}, password, false},
		{"unset env", SASL{PasswordEnv: "CATCHUP_TEST_UNSET"}, "environment variable CATCHUP_TEST_UNSET is not set", true},
		{"empty env", SASL{PasswordEnv: "CATCHUP_TEST_EMPTY"}, "environment variable CATCHUP_TEST_EMPTY is empty", true},
		{"missing file", SASL{PasswordFile: filepath.Join(dir, "nope")}, filepath.Join(dir, "nope"), true},
		{"empty file", SASL{PasswordFile: empty}, "file " + empty + " is empty", true},
		{"both", SASL{PasswordEnv: "CATCHUP_TEST_PASSWORD", PasswordFile: bare}, "both password_env and password_file", true},
		{"neither", SASL{Mechanism: "AWS_MSK_IAM"}, `mechanism "AWS_MSK_IAM" has no password_env or password_file`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.sasl.Password()
			switch {
			case tt.wantErr && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Password() = %v, want an error containing %q", err, tt.want)
			case tt.wantErr && strings.Contains(err.Error(), password):
				t.Errorf("Password() error %q shows the password", err)
			case !tt.wantErr && (err != nil || got.Reveal() != tt.want):
				t.Errorf("Password() = %q, %v; want %q", got.Reveal(), err, tt.want)
			}
		})
	}
}

const testSecretARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:kafka-AbCdEf"

func TestResolveSecrets(t *testing.T) {
	const other = "arn:aws:secretsmanager:us-east-1:123456789012:secret:other-XyZ"
	f := &File{Pipelines: []Pipeline{
		{Name: "a", Source: Cluster{SASL: &SASL{Mechanism: "PLAIN", Username: "u", PasswordSecretARN: testSecretARN}},
			Target: Cluster{SASL: &SASL{Mechanism: "PLAIN", Username: "u", PasswordSecretARN: testSecretARN}}},
		{Name: "b", Source: Cluster{SASL: &SASL{Mechanism: "PLAIN", Username: "u", PasswordSecretARN: testSecretARN}},
			Target: Cluster{SASL: &SASL{Mechanism: "PLAIN", Username: "u", PasswordEnv: "UNUSED"}}},
	}}
	if _, err := f.Pipelines[0].Source.SASL.Password(); err == nil || !strings.Contains(err.Error(), "has not been fetched") {
		t.Errorf("Password() before ResolveSecrets = %v, want an error saying it was not fetched", err)
	}
	calls := map[string]int{}
	fetch := func(_ context.Context, arn string, _ AWSRole) (Secret, error) {
		calls[arn]++
		return NewSecret(password), nil
	}
	if err := f.ResolveSecrets(t.Context(), fetch); err != nil {
		t.Fatalf("ResolveSecrets: %v", err)
	}
	if calls[testSecretARN] != 1 || len(calls) != 1 {
		t.Errorf("ResolveSecrets fetched %v, want %s once", calls, testSecretARN)
	}
	for _, s := range []*SASL{f.Pipelines[0].Source.SASL, f.Pipelines[0].Target.SASL, f.Pipelines[1].Source.SASL} {
		if got, err := s.Password(); err != nil || got.Reveal() != password {
			t.Errorf("Password() after ResolveSecrets = %v, %v; want the fetched secret", got, err)
		}
	}

	// Failures name the ARN, all at once, never a value.
	f = &File{Pipelines: []Pipeline{
		{Name: "a", Source: Cluster{SASL: &SASL{PasswordSecretARN: testSecretARN}}, Target: Cluster{SASL: &SASL{PasswordSecretARN: other}}},
	}}
	err := f.ResolveSecrets(t.Context(), func(_ context.Context, arn string, _ AWSRole) (Secret, error) {
		if arn == other {
			return NewSecret(""), nil
		}
		return Secret{}, errors.New("AccessDeniedException")
	})
	for _, want := range []string{"fetch secret " + testSecretARN + ": AccessDeniedException", "secret " + other + " is empty"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ResolveSecrets error = %v, want it to contain %q", err, want)
		}
	}
}
