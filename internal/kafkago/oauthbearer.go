package kafkago

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/segmentio/kafka-go/sasl"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// OAuth configures SASL OAUTHBEARER: the token comes from TokenFile, or
// from the OAuth 2 token endpoint TokenURL with the client credentials
// grant (ClientID, ClientSecret, Scopes).
type OAuth struct {
	// TokenFile holds the token; it is read again each time a connection
	// authenticates, so that a file its owner replaces (a Kubernetes
	// projected service account token) is followed.
	TokenFile string
	// TokenURL is the token endpoint; ClientSecret is resolved.
	TokenURL, ClientID string
	ClientSecret       Secret
	Scopes             []string
}

// tokenTimeout bounds one request to the token endpoint.
const tokenTimeout = 30 * time.Second

// oauthBearer is the SASL OAUTHBEARER mechanism of RFC 7628 as Kafka
// speaks it (KIP-255): the client's first message carries the token, the
// broker answers nothing on success, or an error status in JSON. kafka-go
// has no OAUTHBEARER mechanism; this one is short, and obtaining the token
// is left to golang.org/x/oauth2.
type oauthBearer struct {
	token func(ctx context.Context) (string, error)
	// from says where the token came from, for the broker's rejection.
	from string
}

func (oauthBearer) Name() string { return "OAUTHBEARER" }

func (m oauthBearer) Start(ctx context.Context) (sasl.StateMachine, []byte, error) {
	tok, err := m.token(ctx)
	if err != nil {
		return nil, nil, err
	}
	return oauthSession{from: m.from}, oauthInitialResponse(tok), nil
}

// oauthInitialResponse is the client's first message, RFC 7628 section
// 3.1: a GS2 header with no authorization identity, then the auth key.
func oauthInitialResponse(token string) []byte {
	return []byte("n,,\x01auth=Bearer " + token + "\x01\x01")
}

type oauthSession struct{ from string }

// Next ends the exchange: an empty server message is success; any other is
// the error JSON of RFC 7628 section 3.2.2, which Kafka sends for a token
// its validator refused.
func (s oauthSession) Next(_ context.Context, challenge []byte) (bool, []byte, error) {
	if len(challenge) == 0 {
		return true, nil, nil
	}
	var e struct {
		Status string `json:"status"`
		Scope  string `json:"scope"`
	}
	status := string(challenge)
	if json.Unmarshal(challenge, &e) == nil && e.Status != "" {
		status = e.Status
		if e.Scope != "" {
			status += ", scope " + e.Scope
		}
	}
	return false, nil, fmt.Errorf("the broker refused the token %s (%s): check that it has not expired, "+
		"and that its audience, issuer and scope are those the broker's OAUTHBEARER validator expects", s.from, status)
}

// oauthMechanism returns the OAUTHBEARER mechanism of o.
func oauthMechanism(o *OAuth) (sasl.Mechanism, error) {
	switch {
	case o == nil || (o.TokenFile == "") == (o.TokenURL == ""):
		return nil, errors.New("OAUTHBEARER needs exactly one of a token file and a token endpoint")
	case o.TokenFile != "":
		return oauthBearer{token: func(context.Context) (string, error) { return readToken(o.TokenFile) },
			from: "read from " + o.TokenFile}, nil
	case o.ClientSecret == nil || o.ClientSecret.Reveal() == "":
		return nil, fmt.Errorf("no client secret for client %q", o.ClientID)
	}
	cc := clientcredentials.Config{ClientID: o.ClientID, ClientSecret: o.ClientSecret.Reveal(), TokenURL: o.TokenURL, Scopes: o.Scopes}
	// The token source caches the token until shortly before it expires;
	// its requests use this context's client, whatever the caller's.
	ts := cc.TokenSource(context.WithValue(context.Background(), oauth2.HTTPClient, &http.Client{Timeout: tokenTimeout}))
	from := fmt.Sprintf("of client %q from %s", o.ClientID, o.TokenURL)
	return oauthBearer{from: from, token: func(context.Context) (string, error) {
		t, err := ts.Token()
		if err != nil {
			// oauth2's errors carry the endpoint's status and answer,
			// never the client secret.
			return "", fmt.Errorf("token endpoint %s, client %q: %w", o.TokenURL, o.ClientID, err)
		}
		return t.AccessToken, nil
	}}, nil
}

// readToken reads the token file, without surrounding white space.
func readToken(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err) // *fs.PathError names the file
	}
	tok := strings.TrimSpace(string(data))
	if tok == "" {
		return "", fmt.Errorf("token file %s is empty", path)
	}
	return tok, nil
}
