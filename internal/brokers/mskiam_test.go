package brokers_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/pipeline"
)

// TestMSKIAM checks what the AWS_MSK_IAM configuration sends: an
// in-process kfake broker plays MSK's side of the SASL exchange, accepts
// any AWS_MSK_IAM payload and keeps it, and the test reads the signed
// request out of it: the region in the credential scope, the access key and
// session token from the AWS default credentials chain, and the action.
// It needs no real broker and no AWS account; a live MSK test is out of
// reach here.
func TestMSKIAM(t *testing.T) {
	const secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	for _, tc := range []struct {
		name      string
		region    string            // sasl.region in the configuration
		env       map[string]string // AWS variables
		profile   string            // shared credentials and config files' contents: "[name]\n..."
		config    string
		wantKey   string
		wantToken string
		wantScope string // region in the credential scope
		wantErr   string // Dial's error, or with a kfake exchange the connection's
	}{
		{
			name:   "region from the configuration, credentials from the environment",
			region: "eu-west-1",
			env: map[string]string{"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "AKIAENVEXAMPLE",
				"AWS_SECRET_ACCESS_KEY": secret, "AWS_SESSION_TOKEN": "session-token-env"},
			wantKey: "AKIAENVEXAMPLE", wantToken: "session-token-env", wantScope: "eu-west-1",
		},
		{
			name:    "region from AWS_REGION",
			env:     map[string]string{"AWS_REGION": "ap-southeast-2", "AWS_ACCESS_KEY_ID": "AKIAENVEXAMPLE", "AWS_SECRET_ACCESS_KEY": secret},
			wantKey: "AKIAENVEXAMPLE", wantScope: "ap-southeast-2",
		},
		{
			name:      "credentials and region from a shared profile",
			env:       map[string]string{"AWS_PROFILE": "catchup-it"},
			profile:   "[catchup-it]\naws_access_key_id = AKIAPROFILEEXAMPLE\naws_secret_access_key = " + secret + "\naws_session_token = session-token-profile\n",
			config:    "[profile catchup-it]\nregion = sa-east-1\n",
			wantKey:   "AKIAPROFILEEXAMPLE",
			wantToken: "session-token-profile",
			wantScope: "sa-east-1",
		},
		{
			name:    "no region",
			env:     map[string]string{"AWS_ACCESS_KEY_ID": "AKIAENVEXAMPLE", "AWS_SECRET_ACCESS_KEY": secret},
			wantErr: "no AWS region",
		},
		{
			name:    "no credentials",
			region:  "eu-west-1",
			wantErr: `cluster "msk": SASL AWS_MSK_IAM`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isolateAWS(t, tc.profile, tc.config)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			c, payloads := fakeMSK(t)
			src, err := pipeline.ConnectReader(config.Cluster{Name: "msk", Brokers: c.ListenAddrs(),
				SASL: &config.SASL{Mechanism: "AWS_MSK_IAM", Region: tc.region}}, "read_committed")
			if err == nil {
				defer src.Close()
				ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
				defer cancel()
				_, err = src.Partitions(ctx, func(string) bool { return true })
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("list partitions through AWS_MSK_IAM: %v", err)
			}
			got := payloads()
			if len(got) == 0 {
				t.Fatal("no SaslAuthenticate reached the broker")
			}
			for _, raw := range got {
				if strings.Contains(raw, secret) {
					t.Errorf("the payload holds the secret access key: %s", raw)
				}
				var p map[string]string
				if err := json.Unmarshal([]byte(raw), &p); err != nil {
					t.Fatalf("payload %q is not a JSON object: %v", raw, err)
				}
				scope := strings.Split(p["x-amz-credential"], "/") // key/date/region/service/aws4_request
				if len(scope) != 5 || scope[0] != tc.wantKey || scope[2] != tc.wantScope || scope[3] != "kafka-cluster" || scope[4] != "aws4_request" {
					t.Errorf("x-amz-credential = %q, want %s/<date>/%s/kafka-cluster/aws4_request", p["x-amz-credential"], tc.wantKey, tc.wantScope)
				}
				if p["x-amz-security-token"] != tc.wantToken {
					t.Errorf("x-amz-security-token = %q, want %q", p["x-amz-security-token"], tc.wantToken)
				}
				for k, want := range map[string]string{"action": "kafka-cluster:Connect", "version": "2020_10_22", "x-amz-algorithm": "AWS4-HMAC-SHA256"} {
					if p[k] != want {
						t.Errorf("%s = %q, want %q", k, p[k], want)
					}
				}
				if !strings.HasPrefix(p["host"], "127.0.0.1") || p["x-amz-signature"] == "" {
					t.Errorf("host %q, signature %q: want the broker's host and a signature", p["host"], p["x-amz-signature"])
				}
			}
		})
	}
}

// isolateAWS points the AWS configuration at files holding credentials and
// config (empty: none), and clears every variable the default chain reads,
// so that the host's own AWS setup cannot leak into the test.
func isolateAWS(t *testing.T, credentials, config string) {
	dir := t.TempDir()
	files := map[string]string{"credentials": credentials, "config": config}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION",
		"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ACCESS_KEY", "AWS_SECRET_KEY",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_AUTHORIZATION_TOKEN",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_ROLE_SESSION_NAME"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// fakeMSK returns a kfake cluster that accepts the AWS_MSK_IAM mechanism and
// any payload, and a function returning the payloads received so far.
func fakeMSK(t *testing.T) (*kfake.Cluster, func() []string) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	var (
		mu       sync.Mutex
		payloads []string
	)
	c.ControlKey(int16(kmsg.SASLHandshake), func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := r.(*kmsg.SASLHandshakeRequest)
		res := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
		res.SupportedMechanisms = []string{"AWS_MSK_IAM"}
		if req.Mechanism != "AWS_MSK_IAM" {
			res.ErrorCode = 33 // UNSUPPORTED_SASL_MECHANISM
		}
		return res, nil, true
	})
	c.ControlKey(int16(kmsg.SASLAuthenticate), func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := r.(*kmsg.SASLAuthenticateRequest)
		mu.Lock()
		payloads = append(payloads, string(req.SASLAuthBytes))
		mu.Unlock()
		return req.ResponseKind(), nil, true
	})
	return c, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), payloads...)
	}
}
