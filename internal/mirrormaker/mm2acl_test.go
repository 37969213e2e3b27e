package mirrormaker

import (
	"strings"
	"testing"
	"time"
)

// TestConvertMM2TopicACLs: sync.topic.acls.enabled, whose MirrorMaker 2
// default is true, turns sync_acls on unless it is false, and its interval
// becomes acl_sync_interval; each key gets its answer, and the YAML runs.
func TestConvertMM2TopicACLs(t *testing.T) {
	const head = "clusters = a, b\na.bootstrap.servers = 127.0.0.1:9092\nb.bootstrap.servers = 127.0.0.1:9093\na->b.enabled = true\n"
	for _, tt := range []struct {
		name     string
		extra    string
		sync     bool
		interval time.Duration
		notices  map[string]string // key → what its notice says
	}{
		{"unset: MirrorMaker 2's default", "", true, 10 * time.Minute,
			map[string]string{"a->b.enabled": "sync.topic.acls.enabled not set: MirrorMaker 2's default is true → sync_acls: true"}},
		{"true, with an interval", "sync.topic.acls.enabled = true\nsync.topic.acls.interval.seconds = 60\n", true, time.Minute,
			map[string]string{"sync.topic.acls.enabled": "→ sync_acls: true: the literal ACLs of the copied topics",
				"sync.topic.acls.interval.seconds": "→ acl_sync_interval"}},
		{"false", "sync.topic.acls.enabled = false\nsync.topic.acls.interval.seconds = 60\n", false, 10 * time.Minute,
			map[string]string{"sync.topic.acls.enabled": "no sync_acls",
				"sync.topic.acls.interval.seconds": "used only with sync.topic.acls.enabled = true"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ConvertMM2(File{Name: "mm2.properties", Data: []byte(head + tt.extra)}, Flags{})
			if err != nil {
				t.Fatalf("ConvertMM2: %v\n%s", err, m.YAML)
			}
			p := m.File.Pipelines[0]
			if p.SyncACLs != tt.sync || p.ACLSyncInterval != tt.interval {
				t.Errorf("sync_acls %v, acl_sync_interval %v; want %v, %v\n%s", p.SyncACLs, p.ACLSyncInterval, tt.sync, tt.interval, m.YAML)
			}
			if got := strings.Contains(string(m.YAML), "sync_acls: true"); got != tt.sync {
				t.Errorf("YAML has sync_acls: true = %v, want %v:\n%s", got, tt.sync, m.YAML)
			}
			for key, want := range tt.notices {
				found := false
				for _, n := range m.Notices {
					found = found || n.Key == key && strings.Contains(n.Msg, want)
				}
				if !found {
					t.Errorf("no notice on %s saying %q; notices:\n%v", key, want, m.Notices)
				}
			}
		})
	}
}
