package brokers_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kafka-catchup/catchup/internal/kafkago/kafkagotest"
)

// needOAuth returns the clusters, or skips the test when the source has no
// OAUTHBEARER listener.
func needOAuth(t *testing.T) itEnv {
	t.Helper()
	e := needBrokers(t)
	if e.source.oauth == "" {
		missing(t, "the source cluster has no OAUTHBEARER listener (CATCHUP_IT_SOURCE_OAUTH; CATCHUP_KAFKA_SASL_SSL=1 for cluster.sh up)")
	}
	return e
}

// oauthSource is the source's OAUTHBEARER listener with sasl (YAML lines of
// the sasl block after its mechanism).
func oauthSource(e itEnv, sasl string) endpoint {
	return endpoint{name: "it-source", brokers: e.source.oauth, sasl: "        mechanism: OAUTHBEARER\n" + sasl}
}

// writeToken writes tok to a new file and returns its path.
func writeToken(t *testing.T, tok string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestOAuthBearer copies from the source's OAUTHBEARER listener
// (SASL_PLAINTEXT). Its tokens are checked by Kafka's own UNSECURED
// validator, OAuthBearerUnsecuredValidatorCallbackHandler (test/kafka/
// start.sh), which accepts unsigned JWTs (alg "none") with a sub and an
// unexpired exp: a real broker's OAUTHBEARER exchange, without an identity
// provider's keys. The token comes from a token file, then from a
// client-credentials token endpoint on loopback; an expired token and a
// token that is no JWT fail the run at once with an error that names the
// cluster and the token file, and shows no token.
func TestOAuthBearer(t *testing.T) {
	e := needOAuth(t)
	t.Run("token file", func(t *testing.T) {
		path := writeToken(t, kafkagotest.UnsecuredJWT("catchup", time.Now().Add(time.Hour)))
		copyTopic(t, e, spec{store: t.TempDir(), name: "oauth-file",
			source: oauthSource(e, fmt.Sprintf("        token_file: %q\n", path)),
			target: plaintext("it-target", e.target.brokers)})
	})
	t.Run("token endpoint", func(t *testing.T) {
		const env = "CATCHUP_IT_OAUTH_CLIENT_SECRET"
		t.Setenv(env, "it-client-secret")
		url, issued := kafkagotest.TokenServer(t, "catchup-it", "it-client-secret", time.Now)
		copyTopic(t, e, spec{store: t.TempDir(), name: "oauth-endpoint",
			source: oauthSource(e, fmt.Sprintf("        token_endpoint_url: %q\n        client_id: catchup-it\n        password_env: %s\n        scope: kafka\n", url, env)),
			target: plaintext("it-target", e.target.brokers)})
		if issued() == 0 {
			t.Error("the token endpoint issued no token")
		}
	})
	for _, bad := range []struct{ name, token, status string }{
		{"expired token", kafkagotest.UnsecuredJWT("catchup", time.Now().Add(-time.Hour)), "invalid_token"},
		{"not a token", "not-a-jwt", "invalid_token"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			ctx := testContext(t, time.Minute)
			path := writeToken(t, bad.token)
			topic := uniqueTopic("oauth-refused")
			createTopic(ctx, t, e.source.brokers, topic, 1)
			createTopic(ctx, t, e.target.brokers, topic, 1)
			s := spec{store: t.TempDir(), name: "oauth-refused", topic: topic,
				source: oauthSource(e, fmt.Sprintf("        token_file: %q\n", path)),
				target: plaintext("it-target", e.target.brokers)}
			_, logs, took, err := runRefused(ctx, t, s, bad.name)
			msg := err.Error()
			for _, want := range []string{`"it-source"`, "OAUTHBEARER", "refused the token read from " + path, bad.status} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not mention %s", msg, want)
				}
			}
			if took > 20*time.Second {
				t.Errorf("the run took %v to give up; a refused token is not worth retrying", took)
			}
			if strings.Contains(msg, bad.token) || strings.Contains(logs.String(), bad.token) {
				t.Error("the error or the log shows the token")
			}
		})
	}
}
