package kafkago

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sasl/oauth"

	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/kafkago/kafkagotest"
)

// TestOAuthBearerFirstMessage holds the client's first message to franz-go's
// OAUTHBEARER client, an independent implementation of RFC 7628 as Kafka
// speaks it, for the same token.
func TestOAuthBearerFirstMessage(t *testing.T) {
	tok := kafkagotest.UnsecuredJWT("catchup", time.Unix(2e9, 0))
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := oauthMechanism(&OAuth{TokenFile: path})
	if err != nil {
		t.Fatal(err)
	}
	_, got, err := m.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	_, want, err := oauth.Auth{Token: tok}.AsMechanism().Authenticate(t.Context(), "127.0.0.1:9092")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("first message %q, franz-go sends %q", got, want)
	}
}

// TestOAuthBearerTokenFileReread: each authentication reads the token file
// again, so that a token its owner replaced (a Kubernetes projected token)
// is the one sent.
func TestOAuthBearerTokenFileReread(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	m, err := oauthMechanism(&OAuth{TokenFile: path})
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{"first.token.", "second.token."} {
		if err := os.WriteFile(path, []byte(tok), 0o600); err != nil {
			t.Fatal(err)
		}
		_, ir, err := m.Start(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(ir), "auth=Bearer "+tok+"\x01") {
			t.Errorf("after the file became %q the first message is %q", tok, ir)
		}
	}
	if err := os.WriteFile(path, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.Start(t.Context()); err == nil || !strings.Contains(err.Error(), "token file "+path+" is empty") {
		t.Errorf("empty token file: error %v, want one naming the file", err)
	}
}

// TestOAuthBearerRefused: the broker's error status (RFC 7628 section
// 3.2.2) ends the exchange with an error that quotes it and says where the
// token came from, never the token.
func TestOAuthBearerRefused(t *testing.T) {
	s := oauthSession{from: "read from /run/token"}
	done, _, err := s.Next(t.Context(), nil)
	if !done || err != nil {
		t.Fatalf("empty server message: done %v, error %v; want success", done, err)
	}
	_, _, err = s.Next(t.Context(), []byte(`{"status":"invalid_token"}`))
	if err == nil || !strings.Contains(err.Error(), "refused the token read from /run/token (invalid_token)") {
		t.Fatalf("error %v, want the status and the file", err)
	}
}

// TestOAuthBearerTokenEndpoint takes tokens from a client-credentials
// endpoint on loopback: one token serves many connections until it nears
// expiry; a wrong client secret fails with the endpoint's answer, and the
// secret is in no error.
func TestOAuthBearerTokenEndpoint(t *testing.T) {
	const secret = "s3cret-client-secret"
	url, issued := kafkagotest.TokenServer(t, "catchup", secret, time.Now)
	m, err := oauthMechanism(&OAuth{TokenURL: url, ClientID: "catchup", ClientSecret: config.NewSecret(secret), Scopes: []string{"kafka"}})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		_, ir, err := m.Start(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(ir), "n,,\x01auth=Bearer ey") {
			t.Fatalf("first message %q carries no JWT", ir)
		}
	}
	if n := issued(); n != 1 {
		t.Errorf("%d tokens fetched for 3 connections, want 1 (the token is valid for an hour)", n)
	}

	bad, err := oauthMechanism(&OAuth{TokenURL: url, ClientID: "catchup", ClientSecret: config.NewSecret("wrong-" + secret)})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = bad.Start(t.Context())
	if err == nil {
		t.Fatal("wrong client secret: no error")
	}
	msg := err.Error()
	for _, want := range []string{url, `client "catchup"`, "invalid_client"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %s", msg, want)
		}
	}
	if strings.Contains(msg, secret) {
		t.Errorf("error %q shows the client secret", msg)
	}
}
