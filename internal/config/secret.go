package config

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
)

const redacted = "[REDACTED]"

// Secret holds a password. Every way of printing or encoding it (fmt with
// any verb, slog, encoding/json, YAML, encoding.TextMarshaler) gives
// "[REDACTED]"; only Reveal gives the plaintext, for the code that sends it
// to the broker. The plaintext sits behind a pointer so that even fmt's
// reflection on an unexported Secret field prints an address, not the text.
type Secret struct{ p *string }

// NewSecret wraps plaintext.
func NewSecret(plaintext string) Secret { return Secret{p: &plaintext} }

// Reveal returns the plaintext; "" for the zero Secret.
func (s Secret) Reveal() string {
	if s.p == nil {
		return ""
	}
	return *s.p
}

// String returns "[REDACTED]".
func (Secret) String() string { return redacted }

// GoString returns "[REDACTED]", for %#v.
func (Secret) GoString() string { return redacted }

// Format writes "[REDACTED]" for every verb, so that %d or %x cannot reach
// the plaintext either.
func (Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redacted)) }

// LogValue returns "[REDACTED]".
func (Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalJSON returns the JSON string "[REDACTED]".
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// MarshalText returns "[REDACTED]".
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// MarshalYAML returns "[REDACTED]"; the signature suits both
// goccy/go-yaml and gopkg.in/yaml.v3.
func (Secret) MarshalYAML() (any, error) { return redacted, nil }

var (
	_ fmt.Stringer   = Secret{}
	_ fmt.GoStringer = Secret{}
	_ fmt.Formatter  = Secret{}
	_ slog.LogValuer = Secret{}
)

// Password reads the password from the environment variable PasswordEnv
// or the file PasswordFile, dropping one trailing newline from the file.
// It is an error if neither is set, or if the variable is unset or the
// file unreadable, or if the password is empty. Errors name the variable
// or file, never the value.
func (s *SASL) Password() (Secret, error) {
	switch {
	case s.PasswordEnv != "" && s.PasswordFile != "":
		return Secret{}, errors.New("sasl password: both password_env and password_file are set")
	case s.PasswordEnv != "":
		v, ok := os.LookupEnv(s.PasswordEnv)
		if !ok {
			return Secret{}, fmt.Errorf("sasl password: environment variable %s is not set", s.PasswordEnv)
		}
		if v == "" {
			return Secret{}, fmt.Errorf("sasl password: environment variable %s is empty", s.PasswordEnv)
		}
		return NewSecret(v), nil
	case s.PasswordFile != "":
		data, err := os.ReadFile(s.PasswordFile)
		if err != nil {
			return Secret{}, fmt.Errorf("sasl password: %w", err) // *fs.PathError names the file
		}
		v := strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r")
		if v == "" {
			return Secret{}, fmt.Errorf("sasl password: file %s is empty", s.PasswordFile)
		}
		return NewSecret(v), nil
	}
	return Secret{}, fmt.Errorf("sasl password: mechanism %q has no password_env or password_file", s.Mechanism)
}
