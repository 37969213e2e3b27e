package kafkagotest

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// UnsecuredJWT returns an unsigned JWT (header alg "none", empty
// signature) for sub, expiring at exp: the tokens Kafka's unsecured
// validator (OAuthBearerUnsecuredValidatorCallbackHandler) accepts, which
// a test can issue without keys.
func UnsecuredJWT(sub string, exp time.Time) string {
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(map[string]string{"alg": "none"}) + "." +
		enc(map[string]any{"sub": sub, "iat": exp.Add(-time.Hour).Unix(), "exp": exp.Unix()}) + "."
}

// TokenServer starts an OAuth 2 token endpoint on loopback that grants
// client credentials: for clientID with secret (HTTP basic or form
// parameters, as RFC 6749 allows), an UnsecuredJWT for clientID valid for
// an hour from now(); for anything else 401 invalid_client. It returns the
// endpoint's URL and a func counting the tokens issued.
func TokenServer(t testing.TB, clientID, secret string, now func() time.Time) (url string, issued func() int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, sec, basic := r.BasicAuth()
		if err := r.ParseForm(); err != nil || r.Method != http.MethodPost || r.PostForm.Get("grant_type") != "client_credentials" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"unsupported_grant_type"}`))
			return
		}
		if !basic {
			id, sec = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		}
		w.Header().Set("Content-Type", "application/json")
		if id != clientID || sec != secret {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"invalid_client","error_description":"client authentication failed"}`))
			return
		}
		n.Add(1)
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": UnsecuredJWT(clientID, now().Add(time.Hour)),
			"token_type": "Bearer", "expires_in": 3600})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/token", n.Load
}
