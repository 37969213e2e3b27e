package kafkago_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/kafkago"
)

func all(string) bool { return true }

func TestSASL(t *testing.T) {
	const secret = "s3cret-Pa55word"
	c := newCluster(t, kfake.SeedTopics(1, "t"), kfake.EnableSASL(),
		kfake.Superuser("PLAIN", "plain-user", secret),
		kfake.Superuser("SCRAM-SHA-256", "scram256", secret),
		kfake.Superuser("SCRAM-SHA-512", "scram512", secret))
	for _, tc := range []struct{ mechanism, user string }{
		{"PLAIN", "plain-user"}, {"SCRAM-SHA-256", "scram256"}, {"SCRAM-SHA-512", "scram512"},
	} {
		ctx := testContext(t)
		cfg := clusterConfig("secure", c)
		cfg.SASL = &kafkago.SASL{Mechanism: tc.mechanism, Username: tc.user, Password: config.NewSecret(secret)}
		good, err := kafkago.NewSource(cfg, "read_committed")
		if err != nil {
			t.Fatal(err)
		}
		ps, err := good.Partitions(ctx, all)
		good.Close()
		if err != nil || len(ps) != 1 {
			t.Errorf("%s: Partitions = %v, %v; want t/0", tc.mechanism, ps, err)
		}

		cfg.SASL.Password = config.NewSecret("wrong-" + secret)
		bad, err := kafkago.NewSource(cfg, "read_committed")
		if err != nil {
			t.Fatal(err)
		}
		// kfake closes the connection on a wrong password, as Kafka
		// does after a SaslAuthenticate v0: the error may be transient.
		_, err = bad.Partitions(ctx, all)
		bad.Close()
		switch {
		case err == nil:
			t.Errorf("%s: Partitions with a wrong password succeeded", tc.mechanism)
		case strings.Contains(err.Error(), secret):
			t.Errorf("%s: authentication failure %q shows the password", tc.mechanism, err)
		case !strings.Contains(err.Error(), `"secure"`) || !strings.Contains(err.Error(), tc.mechanism) || !strings.Contains(err.Error(), tc.user):
			t.Errorf("%s: authentication failure %q does not name the cluster, the mechanism and the user", tc.mechanism, err)
		}
	}
}

func TestSASLAuthenticationFailed(t *testing.T) {
	const secret = "s3cret-Pa55word"
	c := newCluster(t, kfake.SeedTopics(1, "t"), kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "u", secret))
	// Kafka refuses a SaslAuthenticate v1+ with an error code.
	c.ControlKey(int16(kmsg.SASLAuthenticate), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		res := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		res.ErrorCode = kerr.SaslAuthenticationFailed.Code
		msg := "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"
		res.ErrorMessage = &msg
		return res, nil, true
	})
	cfg := clusterConfig("secure", c)
	cfg.SASL = &kafkago.SASL{Mechanism: "SCRAM-SHA-512", Username: "u", Password: config.NewSecret(secret)}
	src, err := kafkago.NewSource(cfg, "read_committed")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	_, err = src.Fetch(testContext(t), catchup.Partition{Topic: "t"}, 0, 1)
	if err == nil || errors.Is(err, catchup.ErrRetriable) || strings.Contains(err.Error(), secret) ||
		!strings.Contains(err.Error(), `cluster "secure": SASL SCRAM-SHA-512 authentication as user "u" failed`) {
		t.Errorf("Fetch with refused credentials = %v; want a permanent error naming the cluster, mechanism and user", err)
	}
}

func TestDialRejects(t *testing.T) {
	dir := t.TempDir()
	cert := filepath.Join(dir, "cert.pem")
	if err := os.WriteFile(cert, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	brokers := []string{"127.0.0.1:1"}
	for _, tc := range []struct {
		name string
		c    kafkago.Settings
		want string
	}{
		{"no brokers", kafkago.Settings{Name: "x"}, "no brokers"},
		{"unknown mechanism", kafkago.Settings{Name: "x", Brokers: brokers, SASL: &kafkago.SASL{Mechanism: "KERBEROS"}}, "unknown mechanism"},
		{"no password", kafkago.Settings{Name: "x", Brokers: brokers, SASL: &kafkago.SASL{Mechanism: "SCRAM-SHA-512", Username: "u"}}, `no password for user "u"`},
		{"bad CA file", kafkago.Settings{Name: "x", Brokers: brokers, TLS: &kafkago.TLS{CAFile: cert}}, "no PEM certificate"},
		{"cert without key", kafkago.Settings{Name: "x", Brokers: brokers, TLS: &kafkago.TLS{CertFile: cert}}, "cert_file and key_file"},
	} {
		_, err := kafkago.Dial(tc.c)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `cluster "x"`) {
			t.Errorf("%s: Dial error = %v, want one naming the cluster and containing %q", tc.name, err, tc.want)
		}
	}
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "none"))
	if _, err := kafkago.Dial(kafkago.Settings{Name: "x", Brokers: brokers, SASL: &kafkago.SASL{Mechanism: "AWS_MSK_IAM"}}); err == nil ||
		!strings.Contains(err.Error(), "region") {
		t.Errorf("Dial with AWS_MSK_IAM and no region = %v, want an error about the region", err)
	}
	if _, err := kafkago.Dial(kafkago.Settings{Name: "x", Brokers: brokers, SASL: &kafkago.SASL{Mechanism: "AWS_MSK_IAM", Region: "eu-west-1"}}); err != nil {
		t.Errorf("Dial with AWS_MSK_IAM in eu-west-1 = %v", err)
	}
}

// testPKI writes a CA and a certificate it signed, for 127.0.0.1 and
// kafka.test, and returns their files.
type testPKI struct {
	caFile, certFile, keyFile string
	cert                      tls.Certificate
	pool                      *x509.CertPool
}

func newPKI(t *testing.T) testPKI {
	t.Helper()
	dir := t.TempDir()
	write := func(name, typ string, der []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "catchup test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kafka.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"kafka.test"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	p := testPKI{
		caFile:   write("ca.pem", "CERTIFICATE", caDER),
		certFile: write("cert.pem", "CERTIFICATE", leafDER),
		keyFile:  write("key.pem", "EC PRIVATE KEY", keyDER),
		pool:     x509.NewCertPool(),
	}
	if p.cert, err = tls.LoadX509KeyPair(p.certFile, p.keyFile); err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	p.pool.AddCert(caCert)
	return p
}

func TestTLS(t *testing.T) {
	pki := newPKI(t)
	// The brokers require a client certificate from the same CA.
	c := newCluster(t, kfake.SeedTopics(1, "t"), kfake.TLS(&tls.Config{
		Certificates: []tls.Certificate{pki.cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pki.pool,
	}))
	withCert := func(t kafkago.TLS) *kafkago.TLS {
		t.CertFile, t.KeyFile = pki.certFile, pki.keyFile
		return &t
	}
	for _, tc := range []struct {
		name string
		tls  *kafkago.TLS
		ok   bool
	}{
		{"CA file", withCert(kafkago.TLS{CAFile: pki.caFile}), true},
		{"server name", withCert(kafkago.TLS{CAFile: pki.caFile, ServerName: "kafka.test"}), true},
		{"insecure", withCert(kafkago.TLS{InsecureSkipVerify: true}), true},
		{"system roots", withCert(kafkago.TLS{}), false},
		{"wrong server name", withCert(kafkago.TLS{CAFile: pki.caFile, ServerName: "other.test"}), false},
		{"no client certificate", &kafkago.TLS{CAFile: pki.caFile}, false},
	} {
		cfg := clusterConfig("tls-cluster", c)
		cfg.TLS = tc.tls
		src, err := kafkago.NewSource(cfg, "read_committed")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		_, err = src.Partitions(testContext(t), all)
		src.Close()
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s: Partitions: %v", tc.name, err)
		case !tc.ok && err == nil:
			t.Errorf("%s: Partitions succeeded, want a TLS error", tc.name)
		case !tc.ok && tc.name != "no client certificate" && (errors.Is(err, catchup.ErrRetriable) || !strings.Contains(err.Error(), `cluster "tls-cluster": TLS`)):
			t.Errorf("%s: error %q is retriable or does not name the cluster and TLS", tc.name, err)
		}
	}
}
