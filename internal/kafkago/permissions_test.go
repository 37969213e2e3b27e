package kafkago_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/kafkago"
	"github.com/kafka-catchup/catchup/internal/kafkago/kafkagotest"
)

// neededKeys returns the API keys kafkago.Needs lists for role, sent
// always or for one of features (all features when all is true), sorted.
func neededKeys(role kafkago.Role, all bool, features ...string) []protocol.ApiKey {
	var out []protocol.ApiKey
	for _, n := range kafkago.Needs() {
		if n.Role == role && (all || n.Feature == kafkago.FeatureAlways || slices.Contains(features, n.Feature)) && !slices.Contains(out, n.API) {
			out = append(out, n.API)
		}
	}
	slices.Sort(out)
	return out
}

func keyNames(ks []protocol.ApiKey) []string {
	var out []string
	for _, k := range ks {
		out = append(out, k.String())
	}
	return out
}

// TestNeedsCoverTheRequestsSent calls every method of Source, Target and
// Cluster that sends requests, the way each command and feature does,
// against two clusters that record the requests they receive: run (the
// idempotent producer; a takeover of an unreleased lease, which reads the
// target leader's log end; the time figures of the lag it leaves), run
// with create_topics (a target topic created, then grown to its grown
// source topic and its configs synced), run with sync_acls, plan, translate, and group sync
// (sync_groups, in run and the dispatcher). Each step's requests must be
// among those kafkago.Needs lists for its role, sent always or for the
// step's features: a request added without its permission, or one listed
// under a feature when the code sends it without, fails here. And all the
// requests together must be exactly those Needs lists: a permission for a
// request the code no longer sends fails too. The template's grants and
// docs/permissions.md follow Needs.
func TestNeedsCoverTheRequestsSent(t *testing.T) {
	ctx := testContext(t)
	srcC := newCluster(t, kfake.SeedTopics(2, "orders"))
	dstC := newCluster(t)
	src, dst := newSource(t, srcC, "read_committed"), newTarget(t, dstC, config.Producer{})
	p := catchup.Partition{Topic: "orders", Partition: 0}
	pr := newProducer(t, srcC, kgo.DisableClientMetrics()) // no GetTelemetrySubscriptions of the test's own in the record
	if err := pr.ProduceSync(ctx, &kgo.Record{Topic: "orders", Partition: 0, Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	takeSrc, takeDst := kafkagotest.Record(srcC), kafkagotest.Record(dstC)
	group := map[catchup.Partition]int64{p: 1}

	steps := []struct {
		name     string
		features []string
		do       func() error
	}{
		{"run with create_topics", []string{kafkago.FeatureCreateTopics}, func() error {
			specs, err := src.DescribeTopics(ctx, []string{"orders"})
			if err != nil {
				return err
			}
			short := specs["orders"]
			short.Partitions-- // the target created before the source grew
			if err := dst.CreateTopics(ctx, []catchup.TopicSpec{short}); err != nil {
				return err
			}
			if err := dst.AddPartitions(ctx, map[string]int{"orders": specs["orders"].Partitions}); err != nil {
				return err
			}
			// config sync: the source's retention changed since the target was created.
			if _, err := dst.ExplicitConfigs(ctx, []string{"orders"}); err != nil {
				return err
			}
			return dst.AlterConfigs(ctx, map[string]map[string]string{"orders": {"retention.ms": "3600000"}})
		}},
		{"run", []string{kafkago.FeatureIdempotent}, func() error {
			// list, watermarks, copy, read back.
			if _, err := src.Partitions(ctx, func(string) bool { return true }); err != nil {
				return err
			}
			if _, err := src.ListOffsets(ctx, []catchup.Partition{p}); err != nil {
				return err
			}
			if _, err := src.OffsetsForTime(ctx, []catchup.Partition{p}, time.Unix(0, 0)); err != nil {
				return err
			}
			// takeover of an unreleased lease: the target leader's log end.
			if _, err := dst.LogEnd(ctx, p); err != nil {
				return err
			}
			f, err := src.Fetch(ctx, p, 0, 1<<20)
			if err != nil {
				return err
			}
			if _, err := dst.PartitionCounts(ctx, []string{"orders"}); err != nil {
				return err
			}
			if _, _, err := produceAll(ctx, dst, p, f.Records); err != nil {
				return err
			}
			ends, err := dst.EndOffsets(ctx, []catchup.Partition{p})
			if err != nil {
				return err
			}
			if _, _, err := dst.ReadBack(ctx, p, ends[p]); err != nil {
				return err
			}
			// time figures of the lag it leaves: the source's retention.
			_, err = src.TopicConfigValues(ctx, []string{"orders"})
			return err
		}},
		{"plan", nil, func() error {
			_, err := src.Cluster().TopicConfigs(ctx, []string{"orders"})
			return err
		}},
		{"translate", []string{kafkago.FeatureTranslate}, func() error {
			// the group's offsets on the source, its state and a commit on the target.
			if _, err := src.Cluster().CommittedOffsets(ctx, "billing"); err != nil {
				return err
			}
			if _, err := dst.Cluster().DescribeGroup(ctx, "billing"); err != nil {
				return err
			}
			return dst.Cluster().CommitOffsets(ctx, "billing", group)
		}},
		{"sync_groups", []string{kafkago.FeatureSyncGroups}, func() error {
			// groupsync.Sync through internal/pipeline: the source's groups
			// and their offsets; on the target, the group's state, its
			// copies read (translate.Find: Metadata, ListOffsets, Fetch), its
			// current offsets and a commit.
			if _, err := src.Cluster().ListGroups(ctx); err != nil {
				return err
			}
			if _, err := src.Cluster().CommittedOffsets(ctx, "billing"); err != nil {
				return err
			}
			if _, err := dst.Cluster().DescribeGroup(ctx, "billing"); err != nil {
				return err
			}
			if _, err := dst.Cluster().CommittedOffsets(ctx, "billing"); err != nil {
				return err
			}
			return dst.Cluster().CommitOffsets(ctx, "billing", group)
		}},
		{"run with sync_acls", []string{kafkago.FeatureSyncACLs}, func() error {
			// the source's topic ACLs, the target's, and those it lacks created.
			if _, err := src.TopicACLs(ctx); err != nil {
				return err
			}
			if _, err := dst.TopicACLs(ctx); err != nil {
				return err
			}
			return dst.CreateTopicACLs(ctx, []catchup.ACL{{Topic: "orders", Principal: "User:alice", Host: "*",
				Operation: catchup.ACLRead, Permission: catchup.ACLAllow}})
		}},
	}
	sent := map[kafkago.Role][]protocol.ApiKey{}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		for role, got := range map[kafkago.Role][]protocol.ApiKey{kafkago.RoleSource: takeSrc(), kafkago.RoleTarget: takeDst()} {
			sent[role] = append(sent[role], got...)
			need := neededKeys(role, false, st.features...)
			var missing []protocol.ApiKey
			for _, k := range got {
				if !slices.Contains(need, k) {
					missing = append(missing, k)
				}
			}
			if len(missing) > 0 {
				t.Errorf("%s: %s: requests sent that kafkago.Needs does not list for features %q: %v",
					st.name, role, st.features, keyNames(missing))
			}
		}
	}
	for _, role := range []kafkago.Role{kafkago.RoleSource, kafkago.RoleTarget} {
		got := slices.Compact(slices.Sorted(slices.Values(sent[role])))
		if diff := cmp.Diff(keyNames(neededKeys(role, true)), keyNames(got)); diff != "" {
			t.Errorf("%s: requests, kafkago.Needs (-) vs sent (+):\n%s", role, diff)
		}
	}
}

// TestPermissionsDocFollowsNeeds holds docs/permissions.md's hand-written
// tables to Needs: every request a role sends is named in a row of that
// role in the Kafka ACL table, whose ACLs grant its operation on its
// resource in some row of the role; and every MSK IAM action a role needs
// is in a row of that role in the MSK table.
func TestPermissionsDocFollowsNeeds(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "permissions.md"))
	if err != nil {
		t.Fatal(err)
	}
	// rows[role] holds the role's table rows, as cells, in both tables.
	rows := map[kafkago.Role][][]string{}
	for _, l := range strings.Split(string(doc), "\n") {
		cells := strings.Split(strings.Trim(l, "| "), " | ")
		if len(cells) >= 3 && (cells[0] == string(kafkago.RoleSource) || cells[0] == string(kafkago.RoleTarget)) {
			rows[kafkago.Role(cells[0])] = append(rows[kafkago.Role(cells[0])], cells)
		}
	}
	has := func(role kafkago.Role, match func(cells []string) bool) bool {
		return slices.ContainsFunc(rows[role], match)
	}
	for _, n := range kafkago.Needs() {
		api := protocol.ApiKey(n.API).String()
		op, res, _ := strings.Cut(n.ACL, " ")
		if !has(n.Role, func(c []string) bool { return len(c) == 4 && strings.Contains(c[3], api) }) {
			t.Errorf("docs/permissions.md: no %s row of the Kafka ACL table names %s (%s)", n.Role, api, n.ACL)
		}
		if !has(n.Role, func(c []string) bool {
			return len(c) == 4 && strings.Contains(c[2], op) && strings.Contains(c[2], strings.ToLower(res))
		}) {
			t.Errorf("docs/permissions.md: no %s row of the Kafka ACL table grants %s on the %s (for %s)", n.Role, op, strings.ToLower(res), api)
		}
		if n.IAM != "" && !has(n.Role, func(c []string) bool {
			return len(c) == 3 && strings.Contains(c[1], "`"+strings.TrimPrefix(n.IAM, "kafka-cluster:")+"`")
		}) {
			t.Errorf("docs/permissions.md: no %s row of the MSK table names %s (for %s)", n.Role, n.IAM, api)
		}
	}
}
