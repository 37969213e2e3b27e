package kafkago_test

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/kafkago"
)

// TestListenerMistakes: a client whose TLS or SASL settings do not match
// the listener fails with an error that names the cluster, says what the
// listener likely is and how to fix the settings, within the dial timeout.
func TestListenerMistakes(t *testing.T) {
	pki := newPKI(t)
	plain := newCluster(t, kfake.SeedTopics(1, "t"))
	tlsOnly := newCluster(t, kfake.SeedTopics(1, "t"), kfake.TLS(&tls.Config{Certificates: []tls.Certificate{pki.cert}}))
	saslPlain := newCluster(t, kfake.SeedTopics(1, "t"), kfake.EnableSASL(), kfake.Superuser("PLAIN", "u", "p"))
	for _, tc := range []struct {
		name string
		c    *kfake.Cluster
		tls  *kafkago.TLS
		sasl *kafkago.SASL
		want string
	}{
		{"tls to a plaintext listener", plain, &kafkago.TLS{CAFile: pki.caFile}, nil, "remove the tls block"},
		{"plaintext to a tls listener", tlsOnly, nil, nil, "add a tls block"},
		{"no sasl to a sasl listener", saslPlain, nil, nil, "add a sasl block"},
		{"mechanism the listener does not enable", saslPlain, nil,
			&kafkago.SASL{Mechanism: "SCRAM-SHA-512", Username: "u", Password: config.NewSecret("p")}, "enabled mechanisms"},
	} {
		cfg := clusterConfig("mistaken", tc.c)
		cfg.TLS, cfg.SASL, cfg.DialTimeout = tc.tls, tc.sasl, time.Second
		src, err := kafkago.NewSource(cfg, "read_committed")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		start := time.Now()
		_, err = src.Partitions(ctx, all)
		cancel()
		src.Close()
		t.Logf("%s: after %v: %v", tc.name, time.Since(start).Round(time.Millisecond), err)
		if err == nil || !strings.Contains(err.Error(), `cluster "mistaken"`) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want an error naming the cluster and saying %q", tc.name, err, tc.want)
		}
	}
}
