package config

import (
	"context"
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
// or the file PasswordFile, dropping one trailing newline from the file, or
// returns the secret of PasswordSecretARN that File.ResolveSecrets fetched.
// It is an error if none or several are set, if the variable is unset, the
// file unreadable or the secret not fetched, or if the password is empty.
// Errors name the variable, file or secret, never the value.
func (s *SASL) Password() (Secret, error) {
	switch {
	case s.PasswordEnv != "" && s.PasswordFile != "":
		return Secret{}, errors.New("sasl password: both password_env and password_file are set")
	case s.PasswordSecretARN != "" && (s.PasswordEnv != "" || s.PasswordFile != ""):
		return Secret{}, errors.New("sasl password: password_secret_arn is set together with password_env or password_file")
	case s.PasswordSecretARN != "":
		if s.fetched == nil {
			return Secret{}, fmt.Errorf("sasl password: secret %s has not been fetched from AWS Secrets Manager", s.PasswordSecretARN)
		}
		return *s.fetched, nil
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

// SecretFetcher returns the value (SecretString) of the AWS Secrets Manager
// secret arn, read as role (SASL.Role: the zero AWSRole for the process's
// own credentials). Its errors must name the ARN, never the value.
type SecretFetcher func(ctx context.Context, arn string, role AWSRole) (Secret, error)

// ResolveSecrets fetches the password of every SASL block of f that names
// password_secret_arn, each distinct ARN once, and keeps it for
// SASL.Password. An empty secret is an error. It returns every failure at
// once; the errors name the ARNs, never the values.
func (f *File) ResolveSecrets(ctx context.Context, fetch SecretFetcher) error {
	type key struct {
		arn  string
		role AWSRole
	}
	fetched := map[key]*Secret{}
	var errs []error
	for i := range f.Pipelines {
		p := &f.Pipelines[i]
		for _, s := range []*SASL{p.Source.SASL, p.Target.SASL} {
			if s == nil || s.PasswordSecretARN == "" {
				continue
			}
			k := key{s.PasswordSecretARN, s.Role()}
			sec, ok := fetched[k]
			if !ok {
				v, err := fetch(ctx, s.PasswordSecretARN, s.Role())
				switch {
				case err != nil:
					as := ""
					if s.AWSRoleARN != "" {
						as = " as role " + s.AWSRoleARN
					}
					errs = append(errs, fmt.Errorf("pipeline %s: fetch secret %s%s: %w", p.Name, s.PasswordSecretARN, as, err))
				case v.Reveal() == "":
					errs = append(errs, fmt.Errorf("pipeline %s: secret %s is empty", p.Name, s.PasswordSecretARN))
				default:
					sec = &v
				}
				fetched[k] = sec
			}
			s.fetched = sec
		}
	}
	return errors.Join(errs...)
}

// CheckPasswords reads every password_env and password_file password of f
// now, so that an unset variable or an unreadable file is reported before
// anything connects, each problem at the key that names the variable or
// file ("FILE:LINE:COL: pipelines[0] (NAME): source.sasl.password_env: ..."
// when f came from Parse or Load), all of them at once. Errors name the
// variable or file, never the value.
func (f *File) CheckPasswords() error {
	var errs []error
	for i, p := range f.Pipelines {
		for _, c := range []struct {
			side string
			sasl *SASL
		}{{"source", p.Source.SASL}, {"target", p.Target.SASL}} {
			s := c.sasl
			if s == nil || s.PasswordSecretARN != "" || (s.PasswordEnv == "" && s.PasswordFile == "") {
				continue
			}
			if _, err := s.Password(); err != nil {
				key := "password_env"
				if s.PasswordEnv == "" {
					key = "password_file"
				}
				pipeline, field := f.splitPath(fmt.Sprintf("pipelines[%d].%s.sasl.%s", i, c.side, key))
				e := fmt.Errorf("%s: %s: %s", pipeline, field, strings.TrimPrefix(err.Error(), "sasl password: "))
				if at := s.keyAt[key]; at != "" {
					e = fmt.Errorf("%s: %w", at, e)
				}
				errs = append(errs, e)
			}
		}
	}
	return errors.Join(errs...)
}
