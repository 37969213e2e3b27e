package mirrormaker

import (
	"strings"
	"testing"
)

// TestEveryKeyAnswered feeds every key catchup knows, on both sides, and
// checks that each gets a notice of its own that is not "unknown".
func TestEveryKeyAnswered(t *testing.T) {
	for key, sides := range knownKeys() {
		for side, ans := range sides {
			consumer, producer := plainConsumer, plainProducer
			line := key + "=x\n"
			if key == "bootstrap.servers" || key == "group.id" {
				line = ""
			}
			if fileKind(side) == consumerFile {
				consumer += line
			} else {
				producer += line
			}
			m, _ := convert(t, consumer, producer, Flags{})
			got := noticesOf(m, key)
			if len(got) == 0 {
				t.Errorf("%s in a %s config (%s): no notice", key, fileKind(side), ans.kind)
			}
			for _, n := range got {
				if strings.HasPrefix(n, string(NoticeUnknown)) {
					t.Errorf("%s in a %s config: %s", key, fileKind(side), n)
				}
			}
		}
	}
	for _, key := range []string{"zookeeper.sync.time.ms", "metrics.num.samples", "sasl.login.refresh.window.factor"} {
		m, _ := convert(t, plainConsumer+key+"=1\n", plainProducer, Flags{})
		if got := noticesOf(m, key); len(got) != 1 || strings.HasPrefix(got[0], string(NoticeUnknown)) {
			t.Errorf("%s: notices %q, want one known answer", key, got)
		}
	}
}
