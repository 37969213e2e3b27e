package brokers_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// itCluster is one cluster started by test/kafka/cluster.sh, as its env file
// describes it.
type itCluster struct {
	role    string // "source" or "target"
	brokers string // PLAINTEXT listener, host:port
	data    string // start.sh data directory; "" if not given

	// SASL_SSL listeners (CATCHUP_KAFKA_SASL_SSL=1); "" when absent.
	saslSSL, wrongHost string
	ca, user           string
	passwordEnv        string // the variable holding the SCRAM password
	// oauth is the OAUTHBEARER listener (SASL_PLAINTEXT, Kafka's unsecured
	// JWT validator); "" when absent.
	oauth string
}

// password returns the SCRAM password of the cluster's user.
func (c itCluster) password() string { return os.Getenv(c.passwordEnv) }

// itEnv is the environment of a run of test/kafka/it.sh.
type itEnv struct {
	version        string
	source, target itCluster
}

func readCluster(role string) itCluster {
	p := "CATCHUP_IT_" + strings.ToUpper(role)
	return itCluster{
		role:        role,
		brokers:     os.Getenv(p),
		data:        os.Getenv(p + "_DATA"),
		saslSSL:     os.Getenv(p + "_SASL_SSL"),
		wrongHost:   os.Getenv(p + "_SASL_SSL_WRONG_HOST"),
		ca:          os.Getenv(p + "_CA"),
		user:        os.Getenv(p + "_SASL_USER"),
		passwordEnv: p + "_SASL_PASSWORD",
		oauth:       os.Getenv(p + "_OAUTH"),
	}
}

// missing skips the test, or fails it under CATCHUP_REQUIRE_KAFKA=1.
func missing(t *testing.T, what string) {
	t.Helper()
	const how = "run test/kafka/it.sh, or load the env file of test/kafka/cluster.sh up"
	if os.Getenv("CATCHUP_REQUIRE_KAFKA") == "1" {
		t.Fatalf("CATCHUP_REQUIRE_KAFKA=1 but %s: %s", what, how)
	}
	t.Skipf("needs real Kafka brokers: %s (%s)", what, how)
}

// needBrokers returns the clusters of the environment, or skips the test.
func needBrokers(t *testing.T) itEnv {
	t.Helper()
	e := itEnv{version: os.Getenv("CATCHUP_IT_KAFKA_VERSION"), source: readCluster("source"), target: readCluster("target")}
	if e.source.brokers == "" || e.target.brokers == "" {
		missing(t, "CATCHUP_IT_SOURCE or CATCHUP_IT_TARGET is not set")
	}
	t.Logf("Apache Kafka %s: source %s, target %s", e.version, e.source.brokers, e.target.brokers)
	return e
}

// needSASL returns the clusters, or skips the test when they have no
// SASL_SSL listeners.
func needSASL(t *testing.T) itEnv {
	t.Helper()
	e := needBrokers(t)
	for _, c := range []itCluster{e.source, e.target} {
		if c.saslSSL == "" || c.wrongHost == "" || c.ca == "" || c.user == "" || c.password() == "" {
			missing(t, "the "+c.role+" cluster has no SASL_SSL listener (CATCHUP_KAFKA_SASL_SSL=1 for cluster.sh up)")
		}
	}
	return e
}

// needDataDir returns c's data directory, or skips the test when it is not
// known (brokers not started by test/kafka cannot be killed and restarted).
func needDataDir(t *testing.T, c itCluster) string {
	t.Helper()
	if c.data == "" {
		missing(t, "CATCHUP_IT_"+strings.ToUpper(c.role)+"_DATA is not set")
	}
	if _, err := os.Stat(filepath.Join(c.data, "ports")); err != nil {
		t.Fatalf("%s data dir %s was not made by test/kafka/start.sh: %v", c.role, c.data, err)
	}
	return c.data
}

// testContext bounds a test: a hung broker fails it rather than the whole run.
func testContext(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}
