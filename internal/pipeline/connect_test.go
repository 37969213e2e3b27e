package pipeline_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/kafkago"
	"github.com/kafka-catchup/catchup/internal/pipeline"
)

// TestConnectResolvesPasswords: Connect hands kafkago the password the
// configuration names, read from its environment variable or file; the
// broker accepts it.
func TestConnectResolvesPasswords(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "pw")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CATCHUP_TEST_PW", "from-env")
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"), kfake.EnableSASL(),
		kfake.Superuser("PLAIN", "env", "from-env"), kfake.Superuser("PLAIN", "file", "from-file"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, s := range []*config.SASL{
		{Mechanism: "PLAIN", Username: "env", PasswordEnv: "CATCHUP_TEST_PW"},
		{Mechanism: "PLAIN", Username: "file", PasswordFile: file},
	} {
		p := &config.Pipeline{Name: "p", Isolation: "read_committed", Producer: config.DefaultProducer(),
			Source: config.Cluster{Name: "secure", Brokers: c.ListenAddrs(), ClientID: "catchup", SASL: s},
			Target: config.Cluster{Name: "secure", Brokers: c.ListenAddrs(), ClientID: "catchup", SASL: s}}
		cl, err := pipeline.Connect(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cl.Source.Partitions(t.Context(), func(string) bool { return true }); err != nil {
			t.Errorf("user %s: source: %v", s.Username, err)
		}
		if _, err := cl.Target.PartitionCounts(t.Context(), []string{"t"}); err != nil {
			t.Errorf("user %s: target: %v", s.Username, err)
		}
		cl.Close()
	}
}

// TestConnectRejects: a password that cannot be read fails Connect with an
// error naming the pipeline, the cluster, the mechanism, the user and where
// the password was to come from.
func TestConnectRejects(t *testing.T) {
	brokers := []string{"127.0.0.1:1"}
	for _, tc := range []struct {
		name string
		sasl *config.SASL
		want string
	}{
		{"unset password env", &config.SASL{Mechanism: "PLAIN", Username: "u", PasswordEnv: "CATCHUP_TEST_UNSET_VARIABLE"}, "CATCHUP_TEST_UNSET_VARIABLE is not set"},
		{"no password source", &config.SASL{Mechanism: "SCRAM-SHA-512", Username: "u"}, "password_env or password_file"},
	} {
		p := &config.Pipeline{Name: "p", Isolation: "read_committed", Producer: config.DefaultProducer(),
			Source: config.Cluster{Name: "x", Brokers: brokers, SASL: tc.sasl}, Target: config.Cluster{Name: "y", Brokers: brokers}}
		_, err := pipeline.Connect(p)
		if err == nil || !strings.Contains(err.Error(), tc.want) ||
			!strings.Contains(err.Error(), `pipeline p: source: cluster "x": sasl `+tc.sasl.Mechanism+`: password of user "u"`) {
			t.Errorf("%s: Connect error = %v, want one naming the pipeline, cluster, mechanism and user and containing %q", tc.name, err, tc.want)
		}
	}
}

// TestDialTimeoutDefaultsAgree: the Kafka adapter's fallback for a caller
// that gives no dial timeout is the configuration's default, as
// docs/configuration.md says.
func TestDialTimeoutDefaultsAgree(t *testing.T) {
	if kafkago.DefaultDialTimeout != config.DefaultDialTimeout {
		t.Errorf("kafkago.DefaultDialTimeout = %v, config.DefaultDialTimeout = %v: want the same", kafkago.DefaultDialTimeout, config.DefaultDialTimeout)
	}
}
