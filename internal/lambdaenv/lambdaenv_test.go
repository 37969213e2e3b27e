package lambdaenv_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/kafka-catchup/catchup/internal/lambdaenv"
	"github.com/kafka-catchup/catchup/internal/pipeline"
)

const (
	secretARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:kafka-AbCdEf"
	paramARN  = "arn:aws:ssm:us-east-1:123456789012:parameter/catchup/config"
	password  = "Pa55-word-in-secrets-manager"
)

var config = `pipelines:
  - name: p
    source:
      brokers: ["s:9092"]
      sasl: {mechanism: SCRAM-SHA-512, username: u, password_secret_arn: "` + secretARN + `"}
    target: {brokers: ["t:9092"]}
    topics: {include: [x]}
`

// double serves SSM GetParameter and Secrets Manager GetSecretValue (the
// JSON 1.1 protocol), and counts the calls.
func double(t *testing.T, secret string) (*ssm.Client, *secretsmanager.Client, map[string]int) {
	calls := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Name, SecretId string
			WithDecryption bool
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		target := r.Header.Get("X-Amz-Target")
		calls[target]++
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		switch {
		case target == "AmazonSSM.GetParameter" && in.Name == paramARN && in.WithDecryption:
			_ = json.NewEncoder(w).Encode(map[string]any{"Parameter": map[string]any{"Name": "/catchup/config", "Value": config, "Type": "SecureString"}})
		case target == "secretsmanager.GetSecretValue" && in.SecretId == secretARN:
			_ = json.NewEncoder(w).Encode(map[string]any{"ARN": secretARN, "SecretString": secret})
		default:
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]string{"__type": "ResourceNotFoundException", "message": "no " + in.Name + in.SecretId})
		}
	}))
	t.Cleanup(srv.Close)
	creds := credentials.NewStaticCredentialsProvider("id", "secret", "")
	return ssm.New(ssm.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: creds}),
		secretsmanager.New(secretsmanager.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: creds}),
		calls
}

func env(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

func TestLoadConfig(t *testing.T) {
	tests := []struct {
		name    string
		vars    map[string]string
		secret  string
		wantErr string
	}{
		{name: "inline", vars: map[string]string{lambdaenv.EnvConfig: config, lambdaenv.EnvTable: "checkpoints"}, secret: password},
		{name: "ssm parameter", vars: map[string]string{lambdaenv.EnvConfigParameter: paramARN, lambdaenv.EnvTable: "checkpoints"}, secret: password},
		{name: "MSK secret JSON", vars: map[string]string{lambdaenv.EnvConfig: config, lambdaenv.EnvTable: "checkpoints"},
			secret: `{"username":"u","password":"` + password + `"}`},
		{name: "store in the config", vars: map[string]string{lambdaenv.EnvConfig: "store: dynamodb://checkpoints\n" + config}, secret: password},
		{name: "neither", vars: map[string]string{lambdaenv.EnvTable: "tbl"}, wantErr: "no configuration: set CATCHUP_CONFIG"},
		{name: "both", vars: map[string]string{lambdaenv.EnvConfig: config, lambdaenv.EnvConfigParameter: paramARN}, wantErr: "both"},
		{name: "missing parameter", vars: map[string]string{lambdaenv.EnvConfigParameter: "nope", lambdaenv.EnvTable: "tbl"},
			wantErr: "read configuration from SSM parameter nope"},
		{name: "store disagrees with the table", vars: map[string]string{lambdaenv.EnvConfig: "store: dynamodb://other\n" + config, lambdaenv.EnvTable: "tbl"},
			wantErr: "disagrees with CATCHUP_TABLE=tbl"},
		{name: "file store", vars: map[string]string{lambdaenv.EnvConfig: config}, wantErr: "needs a dynamodb:// store"},
		{name: "JSON secret without password", vars: map[string]string{lambdaenv.EnvConfig: config, lambdaenv.EnvTable: "tbl"},
			secret: `{"user":"u"}`, wantErr: `fetch secret ` + secretARN + `: the secret is a JSON object without a "password" string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			params, secrets, calls := double(t, tt.secret)
			f, err := lambdaenv.LoadConfig(t.Context(), env(tt.vars), params, pipeline.SecretsManager(secrets, nil))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("LoadConfig = %v, want an error containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), password) {
					t.Errorf("LoadConfig error %q shows the password", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadConfig: %v", err)
			}
			if f.Store != "dynamodb://checkpoints" || f.Pipelines[0].CommitInterval != 30*time.Second {
				t.Errorf("store %s, commit_interval %s; want dynamodb://checkpoints and its 30s default", f.Store, f.Pipelines[0].CommitInterval)
			}
			pw, err := f.Pipelines[0].Source.SASL.Password()
			if err != nil || pw.Reveal() != password {
				t.Errorf("source password = %v, %v; want the secret's", pw, err)
			}
			if calls["secretsmanager.GetSecretValue"] != 1 {
				t.Errorf("GetSecretValue called %d times, want 1", calls["secretsmanager.GetSecretValue"])
			}
		})
	}
}

func TestSettings(t *testing.T) {
	get := env(map[string]string{"D": "250ms", "BAD_D": "soon", "N": "12", "BAD_N": "-3", "S": "x", "B": "true", "BAD_B": "yes"})
	if d, err := lambdaenv.Duration(get, "D", time.Second); err != nil || d != 250*time.Millisecond {
		t.Errorf("Duration(D) = %s, %v", d, err)
	}
	if d, err := lambdaenv.Duration(get, "UNSET", time.Second); err != nil || d != time.Second {
		t.Errorf("Duration(UNSET) = %s, %v; want the default", d, err)
	}
	if _, err := lambdaenv.Duration(get, "BAD_D", time.Second); err == nil {
		t.Errorf("Duration(BAD_D) accepted %q", "soon")
	}
	if n, err := lambdaenv.Int(get, "N", 1); err != nil || n != 12 {
		t.Errorf("Int(N) = %d, %v", n, err)
	}
	if _, err := lambdaenv.Int(get, "BAD_N", 1); err == nil {
		t.Errorf("Int(BAD_N) accepted -3")
	}
	if b, err := lambdaenv.Bool(get, "B", false); err != nil || !b {
		t.Errorf("Bool(B) = %v, %v", b, err)
	}
	if b, err := lambdaenv.Bool(get, "UNSET", false); err != nil || b {
		t.Errorf("Bool(UNSET) = %v, %v; want the default", b, err)
	}
	if _, err := lambdaenv.Bool(get, "BAD_B", false); err == nil {
		t.Errorf("Bool(BAD_B) accepted %q", "yes")
	}
	if s := lambdaenv.String(get, "UNSET", "def"); s != "def" {
		t.Errorf("String(UNSET) = %q", s)
	}
	owner := lambdaenv.Owner(env(map[string]string{lambdaenv.EnvFunctionName: "f", lambdaenv.EnvLogStreamName: "2026/11/29/[$LATEST]abc"}), "host-1")
	if owner != "f:2026/11/29/[$LATEST]abc" {
		t.Errorf("Owner = %q", owner)
	}
	if o := lambdaenv.Owner(env(nil), "host-1"); o != "host-1" {
		t.Errorf("Owner outside Lambda = %q, want the fallback", o)
	}
}

func TestMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want int64
	}{
		{map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024"}, 966367641}, // 0.9 GiB
		{map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "128"}, 120795955},
		{map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024", "GOMEMLIMIT": "200MiB"}, 0}, // the runtime applied it
		{map[string]string{}, 0},
		{map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "lots"}, 0},
	} {
		if got := lambdaenv.MemoryLimit(func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("MemoryLimit(%v) = %d, want %d", tc.env, got, tc.want)
		}
	}
}
