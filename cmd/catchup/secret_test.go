package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestCLIFetchesPasswordSecret: a command reads password_secret_arn from
// AWS Secrets Manager (the endpoint of the standard AWS configuration, here
// a loopback server speaking the GetSecretValue JSON protocol to the real
// SDK), as the reference configuration says, and the password reaches no
// output.
func TestCLIFetchesPasswordSecret(t *testing.T) {
	const arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:AmazonMSK_dr-AbCdEf"
	const password = "s3cret-from-secrets-manager"
	var (
		mu    sync.Mutex
		asked []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct{ SecretId string }
		if r.Header.Get("X-Amz-Target") != "secretsmanager.GetSecretValue" || json.NewDecoder(r.Body).Decode(&in) != nil {
			http.Error(w, `{"__type":"InvalidRequestException"}`, http.StatusBadRequest)
			return
		}
		mu.Lock()
		asked = append(asked, in.SecretId)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		_ = json.NewEncoder(w).Encode(map[string]string{"ARN": in.SecretId, "Name": "AmazonMSK_dr", "SecretString": `{"password":"` + password + `"}`})
	}))
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", srv.URL)
	t.Setenv("AWS_REGION", "eu-west-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))

	dir := t.TempDir()
	cfg := filepath.Join(dir, "pipelines.yaml")
	if err := os.WriteFile(cfg, []byte(`store: file://`+filepath.Join(dir, "store")+`
pipelines:
  - name: p
    source: {brokers: ["127.0.0.1:1"], sasl: {mechanism: SCRAM-SHA-512, username: u, password_secret_arn: "`+arn+`"}}
    target: {brokers: ["127.0.0.1:2"]}
    topics: {include: [orders]}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	// The brokers are unreachable: the command fails after the fetch.
	_, stdout, stderr := cli(t, "", "status", "-c", cfg)
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[0] != arn {
		t.Errorf("catchup status asked Secrets Manager for %q; want %s once (stderr %q)", asked, arn, stderr)
	}
	if strings.Contains(stdout+stderr, password) {
		t.Errorf("the password reached the output: %q %q", stdout, stderr)
	}
}
