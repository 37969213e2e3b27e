package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// validFile returns a valid configuration with its defaults set.
func validFile() *File {
	f := &File{Pipelines: []Pipeline{{
		Name:   "orders-dr",
		Source: Cluster{Brokers: []string{"src:9092"}},
		Target: Cluster{Brokers: []string{"dst:9092"}},
		Topics: Topics{Include: []string{"orders"}},
	}}}
	f.SetDefaults()
	return f
}

func TestValidateValid(t *testing.T) {
	if err := validFile().Validate(); err != nil {
		t.Fatalf("validFile().Validate() = %v, want nil", err)
	}
}

func TestMapTopic(t *testing.T) {
	for _, tt := range []struct{ tmpl, want string }{
		{"", "orders"}, {"{topic}", "orders"}, {"{source}.{topic}", "onprem.orders"}, {"{topic}.mirror", "orders.mirror"},
	} {
		p := Pipeline{TargetTopic: tt.tmpl, Source: Cluster{Name: "onprem"}}
		if got := p.MapTopic("orders"); got != tt.want {
			t.Errorf("MapTopic(orders) with %q = %q, want %q", tt.tmpl, got, tt.want)
		}
	}
	f := validFile()
	f.Pipelines[0].Target.Brokers = f.Pipelines[0].Source.Brokers
	f.Pipelines[0].TargetTopic = "{topic}.copy"
	if err := f.Validate(); err != nil {
		t.Errorf("Validate(same cluster, renamed topics) = %v, want nil", err)
	}
}

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "exists.pem")
	if err := os.WriteFile(existing, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")

	const p0 = "pipelines[0] (orders-dr)"
	tests := []struct {
		name     string
		edit     func(f *File)
		pipeline string // want: the only error's Pipeline, Field, and a part of its Msg
		field    string
		msg      string
	}{
		{"no pipelines", func(f *File) { f.Pipelines = nil }, "", "pipelines", "no pipelines"},
		{"bad store scheme", func(f *File) { f.Store = "s3://bucket" }, "", "store", `"s3://bucket" is not file://PATH or dynamodb://TABLE`},
		{"empty store path", func(f *File) { f.Store = "file://" }, "", "store", "names no path or table"},
		{"bad table name", func(f *File) { f.Store = "dynamodb://a/b" }, "", "store", "DynamoDB table name"},
		{"empty name", func(f *File) { f.Pipelines[0].Name = "" }, "pipelines[0]", "name", "required"},
		{"bad name", func(f *File) { f.Pipelines[0].Name = "orders/dr" }, "pipelines[0] (orders/dr)", "name", "letters, digits"},
		{"duplicate name", func(f *File) { f.Pipelines = append(f.Pipelines, f.Pipelines[0]) },
			"pipelines[1] (orders-dr)", "name", `"orders-dr" is also the name of pipelines[0]`},
		{"missing brokers", func(f *File) { f.Pipelines[0].Source.Brokers = nil }, p0, "source.brokers", "list at least one broker"},
		{"broker without port", func(f *File) { f.Pipelines[0].Target.Brokers = []string{"dst"} }, p0, "target.brokers[0]", `"dst" is not host:port`},
		{"broker bad port", func(f *File) { f.Pipelines[0].Target.Brokers = []string{"dst:99999"} }, p0, "target.brokers[0]", "1 to 65535"},
		{"same broker both sides", func(f *File) { f.Pipelines[0].Target.Brokers = []string{"src:9092"} }, p0, "target.brokers", "loop"},
		{"target topic without {topic}", func(f *File) { f.Pipelines[0].TargetTopic = "{source}.all" }, p0, "target_topic", "must contain {topic}"},
		{"target topic bad characters", func(f *File) { f.Pipelines[0].TargetTopic = "{topic}/mirror" }, p0, "target_topic", "letters, digits"},
		{"bad cluster name", func(f *File) { f.Pipelines[0].Source.Name = "on prem" }, p0, "source.name", `"on prem"`},
		{"no include", func(f *File) { f.Pipelines[0].Topics.Include = nil }, p0, "topics.include", "select at least one topic"},
		{"bad regex", func(f *File) { f.Pipelines[0].Topics.Include = []string{"orders", "(x"} }, p0, "topics.include[1]",
			`"(x" is not a valid Go (RE2) regular expression: error parsing regexp: missing closing )`},
		{"java lookahead", func(f *File) { f.Pipelines[0].Topics.Include = []string{"(?!test).*"} }, p0, "topics.include[0]",
			"Java regex syntax that Go's RE2 engine does not support; rewrite it without lookaround: select with include and drop the unwanted topics with exclude"},
		{"java in exclude", func(f *File) { f.Pipelines[0].Topics.Exclude = []string{"a*+"} }, p0, "topics.exclude[0]", `possessive quantifier "*+"`},
		{"bad start", func(f *File) { f.Pipelines[0].Start = "yesterday" }, p0, "start", "use earliest, latest or an RFC 3339 timestamp"},
		{"negative start offset", func(f *File) { f.Pipelines[0].StartOffsets = map[string]map[int32]int64{"orders": {2: -1}} },
			p0, "start_offsets[orders][2]", "offset -1 is negative"},
		{"start offset for unselected topic", func(f *File) { f.Pipelines[0].StartOffsets = map[string]map[int32]int64{"ordres": {0: 1}} },
			p0, "start_offsets[ordres]", `topic "ordres" is not selected by topics`},
		{"negative window", func(f *File) { f.Pipelines[0].Window.MaxRecords = -1 }, p0, "window.max_records", "negative; use 0 for no limit"},
		{"window outlasts lease", func(f *File) { f.Pipelines[0].Window.MaxDuration = time.Hour }, p0, "window.max_duration", "lease_duration"},
		{"acks enum", func(f *File) { f.Pipelines[0].Producer.Acks = "1" }, p0, "producer.acks", `"1" is not valid; use one of: all, leader, none`},
		{"acks none refused", func(f *File) { f.Pipelines[0].Producer.Acks = "none" }, p0, "producer.acks",
			`"none" can lose records silently`},
		{"compression enum", func(f *File) { f.Pipelines[0].Producer.Compression = "brotli" }, p0, "producer.compression",
			"use one of: none, gzip, snappy, lz4, zstd"},
		{"batch records", func(f *File) { f.Pipelines[0].Producer.BatchRecords = -5 }, p0, "producer.batch_records", "must be positive"},
		{"level of a codec without levels", func(f *File) {
			f.Pipelines[0].Producer.Compression, f.Pipelines[0].Producer.CompressionLevel = "lz4", 9
		}, p0, "producer.compression_level", `9: producer.compression "lz4" takes no level; compression_level is for gzip and zstd: remove it`},
		{"level without compression", func(f *File) { f.Pipelines[0].Producer.CompressionLevel = 3 }, p0, "producer.compression_level",
			`producer.compression "none" takes no level`},
		{"gzip level", func(f *File) {
			f.Pipelines[0].Producer.Compression, f.Pipelines[0].Producer.CompressionLevel = "gzip", 10
		}, p0, "producer.compression_level", "10 is not a gzip level: use 1 (fastest) to 9 (smallest), or 0 for gzip's default (6)"},
		{"zstd negative level", func(f *File) {
			f.Pipelines[0].Producer.Compression, f.Pipelines[0].Producer.CompressionLevel = "zstd", -5
		}, p0, "producer.compression_level", "-5 is not a zstd level catchup offers: use 1 (fastest) to 22 (smallest)"},
		{"negative takeover settle", func(f *File) { f.Pipelines[0].TakeoverSettle = -time.Second }, p0, "takeover_settle", "must be from 0 (no wait) to 10s"},
		{"long takeover settle", func(f *File) { f.Pipelines[0].TakeoverSettle = time.Minute }, p0, "takeover_settle", "must be from 0 (no wait) to 10s"},
		{"negative replication wait", func(f *File) { f.Pipelines[0].ReplicationWait = -time.Second }, p0, "replication_wait", "must be from 0 (no wait) to 10m0s"},
		{"batch bytes too big", func(f *File) { f.Pipelines[0].Producer.BatchBytes = 1048577 }, p0, "producer.batch_bytes",
			"must be from 1 to 1048576: the broker rejects a larger request whole under its default message.max.bytes"},
		{"negative retries", func(f *File) { f.Pipelines[0].Producer.Retries = -1 }, p0, "producer.retries", "negative"},
		{"isolation enum", func(f *File) { f.Pipelines[0].Isolation = "committed" }, p0, "isolation", "use one of: read_committed, read_uncommitted"},
		{"on_gap enum", func(f *File) { f.Pipelines[0].OnGap = "ignore" }, p0, "on_gap", "use one of: fail, skip"},
		{"parallelism", func(f *File) { f.Pipelines[0].Parallelism = -1 }, p0, "parallelism", "at least 1"},
		{"fetch bytes small", func(f *File) { f.Pipelines[0].FetchBytes = 1000 }, p0, "fetch_bytes", "from 1024 (1 KiB) to 67108864 (64 MiB)"},
		{"fetch bytes large", func(f *File) { f.Pipelines[0].FetchBytes = 65 << 20 }, p0, "fetch_bytes", "from 1024 (1 KiB)"},
		{"short lease", func(f *File) { f.Pipelines[0].LeaseDuration = 30 * time.Second }, p0, "lease_duration", "at least 1m0s"},
		{"commit after lease", func(f *File) { f.Pipelines[0].CommitInterval = time.Hour }, p0, "commit_interval", "not shorter than lease_duration"},
		{"cert without key", func(f *File) { f.Pipelines[0].Source.TLS = &TLS{CertFile: existing} }, p0, "source.tls", "cert_file and key_file go together"},
		{"missing ca file", func(f *File) { f.Pipelines[0].Source.TLS = &TLS{CAFile: missing} }, p0, "source.tls.ca_file", missing + `" does not exist`},
		{"mechanism enum", func(f *File) { f.Pipelines[0].Source.SASL = &SASL{Mechanism: "KERBEROS"} }, p0, "source.sasl.mechanism",
			"use one of: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, AWS_MSK_IAM, OAUTHBEARER, GSSAPI"},
		{"no username", func(f *File) { f.Pipelines[0].Source.SASL = &SASL{Mechanism: "PLAIN", PasswordEnv: "P"} }, p0, "source.sasl.username", "required"},
		{"no password", func(f *File) { f.Pipelines[0].Source.SASL = &SASL{Mechanism: "SCRAM-SHA-256", Username: "u"} }, p0, "source.sasl",
			"set password_env (an environment variable) or password_file"},
		{"two passwords", func(f *File) {
			f.Pipelines[0].Source.SASL = &SASL{Mechanism: "SCRAM-SHA-512", Username: "u", PasswordEnv: "P", PasswordFile: existing}
		}, p0, "source.sasl", "only one of password_env, password_file and password_secret_arn"},
		{"password file and secret", func(f *File) {
			f.Pipelines[0].Source.SASL = &SASL{Mechanism: "SCRAM-SHA-512", Username: "u", PasswordFile: existing, PasswordSecretARN: testSecretARN}
		}, p0, "source.sasl", "only one of password_env, password_file and password_secret_arn"},
		{"secret not an ARN", func(f *File) {
			f.Pipelines[0].Source.SASL = &SASL{Mechanism: "SCRAM-SHA-512", Username: "u", PasswordSecretARN: "kafka-password"}
		}, p0, "source.sasl.password_secret_arn", `is not a Secrets Manager secret ARN (arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME); give the ARN`},
		{"iam with secret", func(f *File) {
			f.Pipelines[0].Target.TLS = &TLS{}
			f.Pipelines[0].Target.SASL = &SASL{Mechanism: "AWS_MSK_IAM", PasswordSecretARN: testSecretARN}
		}, p0, "target.sasl.password_secret_arn", "not used with AWS_MSK_IAM"},
		{"missing password file", func(f *File) {
			f.Pipelines[0].Source.SASL = &SASL{Mechanism: "PLAIN", Username: "u", PasswordFile: missing}
		}, p0, "source.sasl.password_file", missing},
		{"iam with username", func(f *File) {
			f.Pipelines[0].Target.TLS = &TLS{}
			f.Pipelines[0].Target.SASL = &SASL{Mechanism: "AWS_MSK_IAM", Username: "u"}
		}, p0, "target.sasl.username", "not used with AWS_MSK_IAM"},
		{"iam without tls", func(f *File) { f.Pipelines[0].Target.SASL = &SASL{Mechanism: "AWS_MSK_IAM"} }, p0, "target.sasl", "AWS_MSK_IAM needs tls"},
		{"role not an ARN", func(f *File) {
			f.Pipelines[0].Target.TLS = &TLS{}
			f.Pipelines[0].Target.SASL = &SASL{Mechanism: "AWS_MSK_IAM", AWSRoleARN: "dr-role"}
		}, p0, "target.sasl.aws_role_arn", `"dr-role" is not an IAM role ARN`},
		{"role without AWS calls", func(f *File) {
			f.Pipelines[0].Source.SASL = &SASL{Mechanism: "PLAIN", Username: "u", PasswordEnv: "P", AWSRoleARN: "arn:aws:iam::222233334444:role/dr"}
		}, p0, "source.sasl.aws_role_arn", "only with mechanism AWS_MSK_IAM or password_secret_arn"},
		{"external id without role", func(f *File) {
			f.Pipelines[0].Source.SASL = &SASL{Mechanism: "SCRAM-SHA-512", Username: "u", PasswordSecretARN: testSecretARN, AWSExternalID: "x"}
		}, p0, "source.sasl.aws_external_id", "only with aws_role_arn"},
		{"oauth without token", func(f *File) { f.Pipelines[0].Source.SASL = &SASL{Mechanism: "OAUTHBEARER"} }, p0, "source.sasl",
			"mechanism OAUTHBEARER needs a token: set token_file"},
		{"oauth file and endpoint", func(f *File) {
			f.Pipelines[0].Source.SASL = &SASL{Mechanism: "OAUTHBEARER", TokenFile: existing, TokenEndpointURL: "https://idp/token", ClientID: "c", PasswordEnv: "S"}
		}, p0, "source.sasl", "set only one of token_file and token_endpoint_url"},
		{"oauth missing token file", func(f *File) {
			f.Pipelines[0].Source.SASL = &SASL{Mechanism: "OAUTHBEARER", TokenFile: missing}
		}, p0, "source.sasl.token_file", missing + `" does not exist`},
		{"oauth token file with client", func(f *File) {
			f.Pipelines[0].Source.SASL = &SASL{Mechanism: "OAUTHBEARER", TokenFile: existing, ClientID: "c"}
		}, p0, "source.sasl", "go with token_endpoint_url, not token_file"},
		{"oauth endpoint not a URL", func(f *File) {
			f.Pipelines[0].Source.SASL = &SASL{Mechanism: "OAUTHBEARER", TokenEndpointURL: "idp/token", ClientID: "c", PasswordEnv: "S"}
		}, p0, "source.sasl.token_endpoint_url", `"idp/token" is not an http(s) URL`},
		{"oauth endpoint with credentials", func(f *File) {
			f.Pipelines[0].Source.SASL = &SASL{Mechanism: "OAUTHBEARER", TokenEndpointURL: "https://c:s3cret@idp/token", ClientID: "c", PasswordEnv: "S"}
		}, p0, "source.sasl.token_endpoint_url", "holds credentials"},
		{"oauth endpoint without client", func(f *File) {
			f.Pipelines[0].Source.SASL = &SASL{Mechanism: "OAUTHBEARER", TokenEndpointURL: "https://idp/token", PasswordEnv: "S"}
		}, p0, "source.sasl.client_id", "required with token_endpoint_url"},
		{"oauth endpoint without secret", func(f *File) {
			f.Pipelines[0].Source.SASL = &SASL{Mechanism: "OAUTHBEARER", TokenEndpointURL: "https://idp/token", ClientID: "c"}
		}, p0, "source.sasl", "token_endpoint_url needs the client secret: set password_env"},
		{"oauth with username", func(f *File) {
			f.Pipelines[0].Source.SASL = &SASL{Mechanism: "OAUTHBEARER", TokenFile: existing, Username: "u"}
		}, p0, "source.sasl.username", "not used with OAUTHBEARER"},
		{"oauth client secret not an ARN", func(f *File) {
			f.Pipelines[0].Source.SASL = &SASL{Mechanism: "OAUTHBEARER", TokenEndpointURL: "https://idp/token", ClientID: "c", PasswordSecretARN: "idp-secret"}
		}, p0, "source.sasl.password_secret_arn", `is not a Secrets Manager secret ARN (arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME); give the ARN`},
		{"token file without oauth", func(f *File) {
			f.Pipelines[0].Source.SASL = &SASL{Mechanism: "PLAIN", Username: "u", PasswordEnv: "P", TokenFile: existing}
		}, p0, "source.sasl.token_file", "only with mechanism OAUTHBEARER"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := validFile()
			tt.edit(f)
			got := problems(t, f.Validate())
			if len(got) != 1 || got[0].Pipeline != tt.pipeline || got[0].Field != tt.field || !strings.Contains(got[0].Msg, tt.msg) {
				t.Errorf("Validate() = %q\nwant one error at %q %q containing %q", got, tt.pipeline, tt.field, tt.msg)
			}
		})
	}
}

// TestPasswordEnvNotAName: a password_env that cannot name a variable is
// most likely the password itself, and the error must not repeat it.
func TestPasswordEnvNotAName(t *testing.T) {
	tests := []struct {
		name string
		sasl SASL
		side string
	}{
		{"PLAIN", SASL{Mechanism: "PLAIN", Username: "u", PasswordEnv: "Tr0ub4dor&3"}, "source"},
		{"SCRAM with a space", SASL{Mechanism: "SCRAM-SHA-512", Username: "u", PasswordEnv: "correct horse"}, "target"},
		{"starts with a digit", SASL{Mechanism: "SCRAM-SHA-256", Username: "u", PasswordEnv: "9lives"}, "source"},
		{"OAUTHBEARER client secret", SASL{Mechanism: "OAUTHBEARER", TokenEndpointURL: "https://idp.example.com/token",
			ClientID: "catchup", PasswordEnv: "s3cr3t/+=="}, "source"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := validFile()
			s := tt.sasl
			if tt.side == "source" {
				f.Pipelines[0].Source.SASL = &s
			} else {
				f.Pipelines[0].Target.SASL = &s
			}
			err := f.Validate()
			got := problems(t, err)
			field := tt.side + ".sasl.password_env"
			if len(got) != 1 || got[0].Field != field || !strings.Contains(got[0].Msg, "is not the name of an environment variable") {
				t.Errorf("Validate() with password_env %q = %q\nwant one error at %q saying it is not a variable name", s.PasswordEnv, got, field)
			}
			if err != nil && strings.Contains(err.Error(), s.PasswordEnv) {
				t.Errorf("Validate() = %q, which repeats password_env %q", err, s.PasswordEnv)
			}
		})
	}
}

// TestSecretSourceNotEchoed: a password pasted where the name of its
// source goes (the secret's ARN, the file's path) is refused at its key
// without being repeated; what looks like an ARN or a path still is, since
// that is what its owner needs to fix a typo.
func TestSecretSourceNotEchoed(t *testing.T) {
	tests := []struct {
		name, field, value string
		echoed             bool
		sasl               SASL
	}{
		{"a password as the secret's ARN", "password_secret_arn", "Tr0ub4dor&3", false,
			SASL{Mechanism: "PLAIN", Username: "u", PasswordSecretARN: "Tr0ub4dor&3"}},
		{"an ARN of another service", "password_secret_arn", "arn:aws:ssm:us-east-1:1:parameter/p", true,
			SASL{Mechanism: "PLAIN", Username: "u", PasswordSecretARN: "arn:aws:ssm:us-east-1:1:parameter/p"}},
		{"a password as the file", "password_file", "Tr0ub4dor&3", false,
			SASL{Mechanism: "SCRAM-SHA-512", Username: "u", PasswordFile: "Tr0ub4dor&3"}},
		{"a missing path", "password_file", "/etc/kafka/no-such-password", true,
			SASL{Mechanism: "SCRAM-SHA-512", Username: "u", PasswordFile: "/etc/kafka/no-such-password"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := validFile()
			s := tt.sasl
			f.Pipelines[0].Source.SASL = &s
			err := f.Validate()
			got := problems(t, err)
			if len(got) != 1 || got[0].Field != "source.sasl."+tt.field {
				t.Fatalf("Validate() = %q, want one error at source.sasl.%s", got, tt.field)
			}
			if echoed := strings.Contains(err.Error(), tt.value); echoed != tt.echoed {
				t.Errorf("Validate() = %q: repeats %q %v, want %v", err, tt.value, echoed, tt.echoed)
			}
		})
	}
}

func TestValidateAllowed(t *testing.T) {
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	for _, name := range []string{cert, key} {
		if err := os.WriteFile(name, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		edit func(f *File)
	}{
		{"acks none with allow_data_loss", func(f *File) { f.Pipelines[0].Producer.Acks = "none"; f.Pipelines[0].Producer.AllowDataLoss = true }},
		{"acks leader", func(f *File) { f.Pipelines[0].Producer.Acks = "leader" }},
		{"password_env of a shell", func(f *File) {
			f.Pipelines[0].Source.SASL = &SASL{Mechanism: "PLAIN", Username: "u", PasswordEnv: "_KAFKA_PASSWORD_2"}
		}},
		{"password_env of Kubernetes", func(f *File) {
			f.Pipelines[0].Source.SASL = &SASL{Mechanism: "PLAIN", Username: "u", PasswordEnv: "kafka.dr-password"}
		}},
		{"zero retries", func(f *File) { f.Pipelines[0].Producer.Retries = 0 }},
		{"zstd level", func(f *File) {
			f.Pipelines[0].Producer.Compression, f.Pipelines[0].Producer.CompressionLevel = "zstd", MaxZstdLevel
		}},
		{"gzip level", func(f *File) {
			f.Pipelines[0].Producer.Compression, f.Pipelines[0].Producer.CompressionLevel = "gzip", 1
		}},
		{"client certificate", func(f *File) { f.Pipelines[0].Source.TLS = &TLS{CertFile: cert, KeyFile: key} }},
		{"timestamp start", func(f *File) { f.Pipelines[0].Start = "2024-05-01T12:00:00+02:00" }},
		{"dynamodb store", func(f *File) { f.Store = "dynamodb://catchup" }},
		{"iam over tls", func(f *File) {
			f.Pipelines[0].Target.TLS = &TLS{}
			f.Pipelines[0].Target.SASL = &SASL{Mechanism: "AWS_MSK_IAM", Region: "eu-west-1"}
		}},
		{"scram with env", func(f *File) {
			f.Pipelines[0].Source.SASL = &SASL{Mechanism: "SCRAM-SHA-256", Username: "u", PasswordEnv: "P"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := validFile()
			tt.edit(f)
			if err := f.Validate(); err != nil {
				t.Errorf("Validate() = %v, want nil", err)
			}
		})
	}
}

// TestParseAcksNone checks acks: none end to end, with the error's position.
func TestParseAcksNone(t *testing.T) {
	refused := minimal + "    producer:\n      acks: none\n"
	_, err := Parse([]byte(refused), "t.yaml")
	want := []*Error{{
		File: "t.yaml", Line: 11, Column: 7, Pipeline: "pipelines[0] (orders-dr)", Field: "producer.acks",
		Msg: `"none" can lose records silently: the producer never learns whether a write arrived, yet the checkpoint moves past it; ` +
			"use acks: all, or set allow_data_loss: true to accept the loss",
	}}
	if diff := cmp.Diff(want, problems(t, err)); diff != "" {
		t.Errorf("Parse(acks: none) mismatch (-want +got):\n%s", diff)
	}

	f, err := Parse([]byte(refused+"      allow_data_loss: true\n"), "t.yaml")
	if err != nil {
		t.Fatalf("Parse(acks: none, allow_data_loss: true): %v", err)
	}
	if got := f.Pipelines[0].Producer; got.Acks != "none" || !got.AllowDataLoss {
		t.Errorf("Parse(acks: none, allow_data_loss: true): producer = %+v", got)
	}
}

// TestParseMissingBrokers checks that a missing key is located at its parent.
func TestParseMissingBrokers(t *testing.T) {
	src := strings.Replace(minimal, "      brokers: [src:9092]\n", "      client_id: x\n", 1)
	_, err := Parse([]byte(src), "t.yaml")
	want := []*Error{{
		File: "t.yaml", Line: 4, Column: 5, Pipeline: "pipelines[0] (orders-dr)", Field: "source.brokers",
		Msg: `list at least one broker as host:port, like "b-1.example.com:9092"`,
	}}
	if diff := cmp.Diff(want, problems(t, err)); diff != "" {
		t.Errorf("Parse(no brokers) mismatch (-want +got):\n%s", diff)
	}
}

func TestStartPolicy(t *testing.T) {
	tests := []struct {
		start   string
		want    StartPolicy
		wantErr bool
	}{
		{"", StartPolicy{Kind: StartEarliest}, false},
		{"earliest", StartPolicy{Kind: StartEarliest}, false},
		{"latest", StartPolicy{Kind: StartLatest}, false},
		{"2024-05-01T00:00:00Z", StartPolicy{Kind: StartTimestamp, Time: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}, false},
		{"2024-05-01", StartPolicy{}, true},
		{"Earliest", StartPolicy{}, true},
	}
	for _, tt := range tests {
		p := Pipeline{Start: tt.start}
		got, err := p.StartPolicy()
		if (err != nil) != tt.wantErr || !got.Time.Equal(tt.want.Time) || got.Kind != tt.want.Kind {
			t.Errorf("Pipeline{Start: %q}.StartPolicy() = %+v, %v; want %+v, error %v", tt.start, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestStoreLocation(t *testing.T) {
	tests := []struct {
		store   string
		want    StoreLocation
		wantErr bool
	}{
		{"file://.catchup", StoreLocation{Scheme: "file", Path: ".catchup"}, false},
		{"file:///var/lib/catchup", StoreLocation{Scheme: "file", Path: "/var/lib/catchup"}, false},
		{"dynamodb://catchup-checkpoints", StoreLocation{Scheme: "dynamodb", Path: "catchup-checkpoints"}, false},
		{"dynamodb://", StoreLocation{}, true},
		{".catchup", StoreLocation{}, true},
		{"s3://b", StoreLocation{}, true},
	}
	for _, tt := range tests {
		f := File{Store: tt.store}
		got, err := f.StoreLocation()
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("File{Store: %q}.StoreLocation() = %+v, %v; want %+v, error %v", tt.store, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestFilePipeline(t *testing.T) {
	two := &File{Pipelines: []Pipeline{{Name: "a"}, {Name: "b"}}}
	one := &File{Pipelines: []Pipeline{{Name: "only"}}}
	tests := []struct {
		name    string
		f       *File
		arg     string
		want    string // the name found, or a part of the error
		wantErr bool
	}{
		{"by name", two, "b", "b", false},
		{"only one", one, "", "only", false},
		{"unknown lists names", two, "c", `pipeline "c": no such pipeline; available: a, b`, true},
		{"ambiguous lists names", two, "", "name one of: a, b", true},
		{"none", &File{}, "", "no pipelines", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.f.Pipeline(tt.arg)
			switch {
			case tt.wantErr && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Pipeline(%q) = %v, want an error containing %q", tt.arg, err, tt.want)
			case !tt.wantErr && (err != nil || p.Name != tt.want):
				t.Errorf("Pipeline(%q) = %v, %v; want %q", tt.arg, p, err, tt.want)
			case !tt.wantErr && p != &tt.f.Pipelines[slices.IndexFunc(tt.f.Pipelines, func(q Pipeline) bool { return q.Name == tt.want })]:
				t.Errorf("Pipeline(%q) returned a copy, want a pointer into File.Pipelines", tt.arg)
			}
		})
	}
}
