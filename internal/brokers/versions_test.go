package brokers_test

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestAPIVersions logs, for every API catchup's kafka-go adapter uses, the
// versions the broker serves, those kafka-go speaks and the one they agree
// on, and fails if they agree on none or on one below what catchup needs.
// Kafka 4.0 removed old versions (KIP-896); this names the versions in use.
func TestAPIVersions(t *testing.T) {
	e := needBrokers(t)
	ctx := testContext(t, 30*time.Second)
	// The lowest version catchup accepts (internal/kafkago: exchange minVer).
	need := map[protocol.ApiKey]int16{
		protocol.ApiVersions: 0, protocol.Metadata: 1, protocol.ListOffsets: 2, protocol.Fetch: 4,
		protocol.Produce: 3, protocol.SaslHandshake: 1, protocol.SaslAuthenticate: 0,
	}
	for _, c := range []itCluster{e.source, e.target} {
		res, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, newClient(t, c.brokers))
		if err != nil {
			t.Fatalf("ApiVersions of the %s cluster: %v", c.role, err)
		}
		served := map[protocol.ApiKey][2]int16{}
		for _, k := range res.ApiKeys {
			served[protocol.ApiKey(k.ApiKey)] = [2]int16{k.MinVersion, k.MaxVersion}
		}
		for _, key := range slices.Sorted(maps.Keys(need)) {
			b, ok := served[key]
			agreed := min(key.MaxVersion(), b[1])
			switch {
			case !ok:
				t.Errorf("%s: Kafka %s does not serve %s", c.role, e.version, key)
			case agreed < b[0] || agreed < key.MinVersion():
				t.Errorf("%s: %s: Kafka %s serves v%d-%d, kafka-go speaks v%d-%d: no common version",
					c.role, key, e.version, b[0], b[1], key.MinVersion(), key.MaxVersion())
			case agreed < need[key]:
				t.Errorf("%s: %s: kafka-go and Kafka %s agree on v%d, catchup needs v%d or later", c.role, key, e.version, agreed, need[key])
			default:
				t.Logf("%s: %-16s Kafka %s v%d-%d, kafka-go v%d-%d: v%d", c.role, key, e.version, b[0], b[1],
					key.MinVersion(), key.MaxVersion(), agreed)
			}
		}
	}
}
