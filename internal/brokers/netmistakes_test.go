package brokers_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kafka-catchup/catchup/internal/pipeline"
)

// TestNetworkMistakes: each common mistake in a cluster's connection
// settings, made against a real broker's PLAINTEXT and SASL_SSL listeners,
// fails with an error that names the cluster, says what the listener
// likely is and how to fix the settings, within dial_timeout (3s here)
// rather than after minutes of retries. docs/troubleshooting.md's table
// quotes them.
func TestNetworkMistakes(t *testing.T) {
	e := needSASL(t)
	c := e.source
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "not-a-secret")
	for _, tc := range []struct {
		name string
		ep   endpoint
		want string
	}{
		{"tls to a plaintext listener", endpoint{brokers: c.brokers, tls: true, ca: c.ca}, "remove the tls block"},
		{"plaintext to a SASL_SSL listener", endpoint{brokers: c.saslSSL}, "add a tls block"},
		{"tls without sasl to a SASL_SSL listener", endpoint{brokers: c.saslSSL, tls: true, ca: c.ca}, "add a sasl block"},
		{"sasl without tls to a SASL_SSL listener", endpoint{brokers: c.saslSSL, user: c.user, passwordEnv: c.passwordEnv}, "add a tls block"},
		{"sasl to a plaintext listener", endpoint{brokers: c.brokers, user: c.user, passwordEnv: c.passwordEnv}, "remove the sasl block"},
		// The listener enables SCRAM and PLAIN; AWS_MSK_IAM signs with AWS
		// credentials (dummies here) that the broker never checks.
		{"a mechanism the listener does not enable", endpoint{brokers: c.saslSSL, tls: true, ca: c.ca, mechanism: "AWS_MSK_IAM"}, "enabled mechanisms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t, time.Minute)
			tc.ep.name, tc.ep.dialTimeout = "it-source", "3s"
			s := spec{store: t.TempDir(), name: "net", topic: "none", source: tc.ep, target: plaintext("it-target", e.target.brokers)}
			var logs syncBuffer
			pl := open(ctx, t, s, pipeline.Options{Log: captureLog(&logs)})
			defer pl.Close()
			start := time.Now()
			_, err := pl.Engine.Survey(ctx)
			took := time.Since(start)
			t.Logf("%s: after %v: %v", tc.name, took.Round(time.Millisecond), err)
			if err == nil || !strings.Contains(err.Error(), `cluster "it-source"`) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v; want an error naming cluster it-source and saying %q", tc.name, err, tc.want)
			}
			if took > 30*time.Second {
				t.Errorf("%s: the error took %v; want it within a few dial timeouts (3s)", tc.name, took)
			}
		})
	}
}
