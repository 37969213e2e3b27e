package pipeline_test

// ACL sync (sync_acls) through the whole stack on in-process kfake
// clusters; test/kafka's brokers run it again with StandardAuthorizer
// (internal/brokers TestSyncACLsStandardAuthorizer).

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/metrics"
	"github.com/kafka-catchup/catchup/internal/metrics/prom"
	"github.com/kafka-catchup/catchup/internal/replicate"
	"github.com/kafka-catchup/catchup/internal/runmetrics"
)

// aclSpec is one ACL as the test writes and reads it with its own client.
type aclSpec struct {
	topic     string
	prefixed  bool
	principal string
	host      string
	op        kmsg.ACLOperation
	perm      kmsg.ACLPermissionType
}

func (a aclSpec) String() string {
	pat := "literal"
	if a.prefixed {
		pat = "prefixed"
	}
	return fmt.Sprintf("%s %s %s %s from %s on %s", pat, a.perm, a.principal, a.op, a.host, a.topic)
}

func adminClient(t *testing.T, c *kfake.Cluster) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DisableClientMetrics())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// createACLs creates acls with the test's own client.
func createACLs(t *testing.T, cl *kgo.Client, acls ...aclSpec) {
	t.Helper()
	req := kmsg.NewPtrCreateACLsRequest()
	for _, a := range acls {
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName, c.ResourcePatternType = kmsg.ACLResourceTypeTopic, a.topic, kmsg.ACLResourcePatternTypeLiteral
		if a.prefixed {
			c.ResourcePatternType = kmsg.ACLResourcePatternTypePrefixed
		}
		c.Principal, c.Host, c.Operation, c.PermissionType = a.principal, a.host, a.op, a.perm
		req.Creations = append(req.Creations, c)
	}
	res, err := req.RequestWith(t.Context(), cl)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res.Results {
		if r.ErrorCode != 0 {
			t.Fatalf("create %s: %v", acls[i], kerr.ErrorForCode(r.ErrorCode))
		}
	}
}

// topicACLs describes the topic ACLs of the cluster with the test's own
// client, sorted.
func topicACLs(t *testing.T, cl *kgo.Client) []string {
	t.Helper()
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeTopic, kmsg.ACLResourcePatternTypeAny
	req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	res, err := req.RequestWith(t.Context(), cl)
	if err != nil || res.ErrorCode != 0 {
		t.Fatalf("describe ACLs: %v, %v", err, kerr.ErrorForCode(res.ErrorCode))
	}
	var out []string
	for _, r := range res.Resources {
		for _, a := range r.ACLs {
			out = append(out, aclSpec{r.ResourceName, r.ResourcePatternType == kmsg.ACLResourcePatternTypePrefixed,
				a.Principal, a.Host, a.Operation, a.PermissionType}.String())
		}
	}
	slices.Sort(out)
	return out
}

// syncACLsConfig is pipeline "dr", which copies topic orders from src to
// dst under the same name, with sync_acls.
func syncACLsConfig(src, dst *kfake.Cluster) string {
	return fmt.Sprintf(`pipelines:
  - name: dr
    source: {name: src, brokers: [%s]}
    target: {name: dst, brokers: [%s]}
    topics: {include: [orders]}
    sync_acls: true
`, src.ListenAddrs()[0], dst.ListenAddrs()[0])
}

// refuseDescribeACLs makes c answer every DescribeAcls with the error code
// while refuse says so, and as usual otherwise.
func refuseDescribeACLs(c *kfake.Cluster, code int16, refuse func() bool) {
	c.ControlKey(int16(kmsg.DescribeACLs), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if !refuse() {
			return nil, nil, false
		}
		res := kreq.ResponseKind().(*kmsg.DescribeACLsResponse)
		res.ErrorCode = code
		return res, nil, true
	})
}

// TestSyncACLs: with sync_acls, the literal ACLs of the copied source
// topic land on its target topic by MirrorMaker 2's rules (ALLOW WRITE
// skipped, ALLOW ALL made READ, DENY copied, host and principal kept, a
// prefixed ACL reported and skipped), those of a topic not copied do not,
// an ACL the target already has is counted as present and not created
// again, and a target ACL the source lacks is kept. A second run creates
// nothing.
func TestSyncACLs(t *testing.T) {
	src, dst := startCluster(t), startCluster(t)
	createTopic(t, src, "orders", 1, nil)
	createTopic(t, src, "other", 1, nil)
	produceValues(t, src, "orders", 0, "a", "b")
	srcAdmin, dstAdmin := adminClient(t, src), adminClient(t, dst)
	const allow, deny = kmsg.ACLPermissionTypeAllow, kmsg.ACLPermissionTypeDeny
	createACLs(t, srcAdmin,
		aclSpec{"orders", false, "User:alice", "*", kmsg.ACLOperationRead, allow},
		aclSpec{"orders", false, "User:producer", "*", kmsg.ACLOperationWrite, allow},
		aclSpec{"orders", false, "User:bob", "*", kmsg.ACLOperationAll, allow},
		aclSpec{"orders", false, "User:mallory", "10.0.0.1", kmsg.ACLOperationRead, deny},
		aclSpec{"orders", false, "User:eve", "*", kmsg.ACLOperationWrite, deny},
		aclSpec{"orders", false, "User:ops", "*", kmsg.ACLOperationDescribeConfigs, allow},
		aclSpec{"ord", true, "User:carol", "*", kmsg.ACLOperationRead, allow},
		aclSpec{"other", false, "User:alice", "*", kmsg.ACLOperationRead, allow},
	)
	createTopic(t, dst, "src.orders", 1, nil)
	createACLs(t, dstAdmin,
		aclSpec{"src.orders", false, "User:alice", "*", kmsg.ACLOperationRead, allow}, // already there
		aclSpec{"src.orders", false, "User:keep", "*", kmsg.ACLOperationRead, allow},  // the target's own
	)
	yaml := fmt.Sprintf(`pipelines:
  - name: dr
    source: {name: src, brokers: [%s]}
    target: {name: dst, brokers: [%s]}
    topics: {include: [orders]}
    target_topic: "{source}.{topic}"
    sync_acls: true
`, src.ListenAddrs()[0], dst.ListenAddrs()[0])
	store := checkpoint.NewMemStore(nil)
	rep := runPipeline(t, openPipeline(t, yaml, "dr", store))

	want := []string{
		"literal ALLOW User:alice READ from * on src.orders",
		"literal ALLOW User:bob READ from * on src.orders",
		"literal ALLOW User:keep READ from * on src.orders",
		"literal ALLOW User:ops DESCRIBE_CONFIGS from * on src.orders",
		"literal DENY User:eve WRITE from * on src.orders",
		"literal DENY User:mallory READ from 10.0.0.1 on src.orders",
	}
	if diff := cmp.Diff(want, topicACLs(t, dstAdmin)); diff != "" {
		t.Errorf("target topic ACLs after the run (-want +got):\n%s", diff)
	}
	if got := values(t, dst, "src.orders", 0); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("src.orders/0 holds %v, want [a b]", got)
	}
	a := rep.ACLs
	if a == nil || a.Error != "" || len(a.Created) != 4 || a.Present != 1 || len(a.Skipped) != 2 {
		t.Fatalf("report's ACL sync: %+v; want 4 created, 1 present, 2 skipped, no error", a)
	}
	var reasons []string
	for _, s := range a.Skipped {
		reasons = append(reasons, s.Principal+": "+s.Reason)
	}
	slices.Sort(reasons)
	if want := []string{"User:carol: " + replicate.SkipPrefixed, "User:producer: " + replicate.SkipAllowWrite}; !slices.Equal(reasons, want) {
		t.Errorf("skipped ACLs %q, want %q", reasons, want)
	}

	// Again, with no interval: everything is present, nothing is created.
	again := strings.Replace(yaml, "sync_acls: true", "sync_acls: true\n    acl_sync_interval: 0s", 1)
	rep = runPipeline(t, openPipeline(t, again, "dr", store))
	if a := rep.ACLs; a == nil || len(a.Created) != 0 || a.Present != 5 || a.Error != "" {
		t.Errorf("second run's ACL sync: %+v; want 0 created, 5 present", a)
	}
	if diff := cmp.Diff(want, topicACLs(t, dstAdmin)); diff != "" {
		t.Errorf("target topic ACLs after the second run (-want +got):\n%s", diff)
	}
}

// TestSyncACLsFailureLeavesTheCopy: a source without an authorizer
// (SECURITY_DISABLED) or that refuses DescribeAcls fails ACL sync alone,
// with an error naming the cluster and the fix; the records are copied.
func TestSyncACLsFailureLeavesTheCopy(t *testing.T) {
	for _, tt := range []struct {
		name string
		code int16
		want []string
	}{
		{"no authorizer", kerr.SecurityDisabled.Code, []string{`cluster "src" has no authorizer`, "sync_acls: false"}},
		{"denied", kerr.ClusterAuthorizationFailed.Code, []string{`cluster "src" refuses DescribeAcls`, "grant it Describe on the cluster",
			"--operation Describe --cluster"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src, dst := startCluster(t), startCluster(t)
			createTopic(t, src, "orders", 1, nil)
			createTopic(t, dst, "orders", 1, nil)
			produceValues(t, src, "orders", 0, "a", "b")
			refuseDescribeACLs(src, tt.code, func() bool { return true })
			yaml := syncACLsConfig(src, dst)
			rep := runPipeline(t, openPipeline(t, yaml, "dr", checkpoint.NewMemStore(nil)))
			if got := values(t, dst, "orders", 0); !slices.Equal(got, []string{"a", "b"}) {
				t.Errorf("orders/0 holds %v, want [a b]: the copy must not wait on ACL sync", got)
			}
			if rep.ACLs == nil {
				t.Fatal("no ACL sync in the report")
			}
			for _, w := range tt.want {
				if !strings.Contains(rep.ACLs.Error, w) {
					t.Errorf("ACL sync error %q does not say %q", rep.ACLs.Error, w)
				}
			}
		})
	}
}

// TestTargetACLRules holds TargetACL to MirrorMaker 2's rules, one entry
// at a time.
func TestTargetACLRules(t *testing.T) {
	acl := func(op, perm string, prefixed bool) catchup.ACL {
		return catchup.ACL{Topic: "orders", Prefixed: prefixed, Principal: "User:a", Host: "*", Operation: op, Permission: perm}
	}
	for _, tt := range []struct {
		in     catchup.ACL
		wantOp string // "" when skipped
		why    string
	}{
		{acl("READ", "ALLOW", false), "READ", ""},
		{acl("WRITE", "ALLOW", false), "", replicate.SkipAllowWrite},
		{acl("ALL", "ALLOW", false), "READ", ""},
		{acl("ALL", "DENY", false), "ALL", ""},
		{acl("WRITE", "DENY", false), "WRITE", ""},
		{acl("DESCRIBE", "ALLOW", false), "DESCRIBE", ""},
		{acl("READ", "ALLOW", true), "", replicate.SkipPrefixed},
	} {
		got, why := replicate.TargetACL(tt.in, "src.orders")
		if why != tt.why || got.Operation != tt.wantOp || (why == "" && (got.Topic != "src.orders" || got.Permission != tt.in.Permission)) {
			t.Errorf("TargetACL(%+v) = %+v, %q; want operation %q on src.orders, reason %q", tt.in, got, why, tt.wantOp, tt.why)
		}
	}
}

// TestACLSyncFailedMetric: the ACLSyncFailed figure of a run
// (runmetrics.Run, the EMF line on Lambda) and catchup_acl_sync_failed
// (the Prometheus exporter) say 1 after a sync the source refused, 0 after
// one that succeeded; a run in which the sync was not due has no figure,
// and the gauge keeps the last sync's value meanwhile.
func TestACLSyncFailedMetric(t *testing.T) {
	src, dst := startCluster(t), startCluster(t)
	createTopic(t, src, "orders", 1, nil)
	createTopic(t, dst, "orders", 1, nil)
	produceValues(t, src, "orders", 0, "a")
	createACLs(t, adminClient(t, src), aclSpec{"orders", false, "User:alice", "*", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow})
	var refuse atomic.Bool
	refuseDescribeACLs(src, kerr.ClusterAuthorizationFailed.Code, refuse.Load)
	yaml := syncACLsConfig(src, dst)
	store := checkpoint.NewMemStore(nil)
	check := syncFigureCheck(t, metrics.ACLSyncFailed, "catchup_acl_sync_failed")
	refuse.Store(true)
	p := openPipeline(t, yaml, "dr", store)
	check("a refused sync", runPipeline(t, p), "1 Count", "1")
	// The same engine within acl_sync_interval (10m): no sync, no figure;
	// the gauge still says the target's ACLs were not synced.
	check("a run with no sync due", runPipeline(t, p), "absent", "1")
	refuse.Store(false)
	check("a sync that succeeded", runPipeline(t, openPipeline(t, yaml, "dr", store)), "0 Count", "0")
}

// syncFigureCheck returns check, which holds a run's sync figure emf
// (runmetrics.Run, the EMF line on Lambda) and the Prometheus gauge prom
// (one exporter observing every run checked) to want ("absent" when there
// is none, else "1 Count" and "1").
func syncFigureCheck(t *testing.T, emf, promName string) (check func(step string, rep *replicate.Report, wantRun, wantGauge string)) {
	exp := prom.New(nil, time.Minute)
	return func(step string, rep *replicate.Report, wantRun, wantGauge string) {
		t.Helper()
		run, gauge := "absent", "absent"
		for _, v := range runmetrics.Run(rep, 0, false) {
			if v.Name == emf {
				run = fmt.Sprintf("%d %s", v.Value, v.Unit)
			}
		}
		if err := exp.Observe(rep); err != nil {
			t.Fatal(err)
		}
		fams, err := exp.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fams {
			if f.GetName() == promName {
				for _, m := range f.GetMetric() {
					gauge = fmt.Sprint(m.GetGauge().GetValue())
				}
			}
		}
		if run != wantRun || gauge != wantGauge {
			t.Errorf("%s: %s %s, %s %s; want %s, %s (ACL sync: %+v, config sync ran %v: %q)", step, emf, run, promName, gauge,
				wantRun, wantGauge, rep.ACLs, rep.ConfigSynced, rep.ConfigSyncError)
		}
	}
}
