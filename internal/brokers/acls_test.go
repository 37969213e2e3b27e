package brokers_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// brokerACL is one ACL as the test creates and reads it with its own
// franz-go admin client (PLAINTEXT: User:ANONYMOUS, a super user).
type brokerACL struct {
	resource  kmsg.ACLResourceType
	name      string
	pattern   kmsg.ACLResourcePatternType
	principal string
	op        kmsg.ACLOperation
	perm      kmsg.ACLPermissionType
}

func (a brokerACL) String() string {
	return fmt.Sprintf("%s %s %s %s %s %s", a.resource, a.pattern, a.name, a.perm, a.principal, a.op)
}

func topicACL(name string, pattern kmsg.ACLResourcePatternType, principal string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) brokerACL {
	return brokerACL{kmsg.ACLResourceTypeTopic, name, pattern, principal, op, perm}
}

// addACLs creates acls on the cluster of cl (host *).
func addACLs(ctx context.Context, t *testing.T, cl *kgo.Client, acls ...brokerACL) {
	t.Helper()
	req := kmsg.NewPtrCreateACLsRequest()
	for _, a := range acls {
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName, c.ResourcePatternType = a.resource, a.name, a.pattern
		c.Principal, c.Host, c.Operation, c.PermissionType = a.principal, "*", a.op, a.perm
		req.Creations = append(req.Creations, c)
	}
	res, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("create ACLs: %v", err)
	}
	for i, r := range res.Results {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			t.Fatalf("create ACL %s: %v", acls[i], err)
		}
	}
}

// dropACLs deletes every ACL on each named resource (any pattern).
func dropACLs(ctx context.Context, cl *kgo.Client, resources map[string]kmsg.ACLResourceType) error {
	req := kmsg.NewPtrDeleteACLsRequest()
	for name, rt := range resources {
		f := kmsg.NewDeleteACLsRequestFilter()
		f.ResourceType, f.ResourceName, f.ResourcePatternType = rt, kmsg.StringPtr(name), kmsg.ACLResourcePatternTypeAny
		f.Operation, f.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		req.Filters = append(req.Filters, f)
	}
	_, err := req.RequestWith(ctx, cl)
	return err
}

// aclsOn returns the ACLs on resource name (any pattern), sorted.
func aclsOn(ctx context.Context, t *testing.T, cl *kgo.Client, rt kmsg.ACLResourceType, name string) []string {
	t.Helper()
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType, req.ResourceName, req.ResourcePatternType = rt, kmsg.StringPtr(name), kmsg.ACLResourcePatternTypeAny
	req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	res, err := req.RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(res.ErrorCode)
	}
	if err != nil {
		t.Fatalf("describe ACLs of %s: %v", name, err)
	}
	var out []string
	for _, r := range res.Resources {
		for _, a := range r.ACLs {
			out = append(out, brokerACL{r.ResourceType, r.ResourceName, r.ResourcePatternType, a.Principal, a.Operation, a.PermissionType}.String())
		}
	}
	slices.Sort(out)
	return out
}

// awaitACLs waits until the ACLs on name are want: a broker applies the
// ACLs the controller committed a moment later, and its authorizer with it.
func awaitACLs(ctx context.Context, t *testing.T, cl *kgo.Client, rt kmsg.ACLResourceType, name string, want []string) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := aclsOn(ctx, t, cl, rt, name)
		if slices.Equal(got, want) || time.Now().After(deadline) {
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSyncACLsStandardAuthorizer runs sync_acls between the two clusters
// of test/kafka, whose brokers run Kafka's StandardAuthorizer, with catchup
// logged in over SASL_SSL as User:catchup, not a super user, holding the
// grants docs/permissions.md names. The source topic carries ACLs of every
// kind; the test counts what lands on the target topic with its own
// DescribeAcls. First the source denies catchup DescribeAcls: the records
// are copied all the same and the report's error names the cluster and the
// grant. With the grant back: the literal ACLs land renamed (ALLOW ALL as
// READ, DENY kept, other operations kept), ALLOW WRITE and the prefixed
// ACL do not, and the operator's own target ACL stays. A third run
// creates nothing.
func TestSyncACLsStandardAuthorizer(t *testing.T) {
	e := needSASL(t)
	ctx := testContext(t, 2*time.Minute)
	srcAdmin, dstAdmin := newClient(t, e.source.brokers), newClient(t, e.target.brokers)
	catchupUser := "User:" + e.source.user
	topic := uniqueTopic("acls")
	s := spec{store: t.TempDir(), name: "acls", source: saslSSL("it-source", e.source), target: saslSSL("it-target", e.target),
		topic: topic, extra: "    target_topic: \"{source}.{topic}\"\n    sync_acls: true\n"}
	target := "it-source." + topic
	createTopic(ctx, t, e.source.brokers, topic, 1)
	createTopic(ctx, t, e.target.brokers, target, 1)
	const records = 50
	seed(ctx, t, e.source.brokers, makeRecords(topic, 1, records, 64), 16<<10)
	t.Cleanup(func() {
		ctx := context.Background()
		if err := dropACLs(ctx, srcAdmin, map[string]kmsg.ACLResourceType{topic: kmsg.ACLResourceTypeTopic,
			"kafka-cluster": kmsg.ACLResourceTypeCluster}); err != nil {
			t.Errorf("drop the source ACLs: %v", err)
		}
		if err := dropACLs(ctx, dstAdmin, map[string]kmsg.ACLResourceType{target: kmsg.ACLResourceTypeTopic}); err != nil {
			t.Errorf("drop the target ACLs: %v", err)
		}
	})

	const (
		lit, pre    = kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLResourcePatternTypePrefixed
		allow, deny = kmsg.ACLPermissionTypeAllow, kmsg.ACLPermissionTypeDeny
	)
	srcACLs := []brokerACL{
		topicACL(topic, lit, "User:alice", kmsg.ACLOperationRead, allow),
		topicACL(topic, lit, "User:producer", kmsg.ACLOperationWrite, allow),
		topicACL(topic, lit, "User:bob", kmsg.ACLOperationAll, allow),
		topicACL(topic, lit, "User:mallory", kmsg.ACLOperationRead, deny),
		topicACL(topic, lit, "User:eve", kmsg.ACLOperationAll, deny),
		topicACL(topic, pre, "User:carol", kmsg.ACLOperationRead, allow),
		// catchup's own grants on the source topic, which now has ACLs.
		topicACL(topic, lit, catchupUser, kmsg.ACLOperationRead, allow),
		topicACL(topic, lit, catchupUser, kmsg.ACLOperationDescribe, allow),
		topicACL(topic, lit, catchupUser, kmsg.ACLOperationDescribeConfigs, allow),
		// and the denial of DescribeAcls for the first run.
		{kmsg.ACLResourceTypeCluster, "kafka-cluster", lit, catchupUser, kmsg.ACLOperationDescribe, deny},
	}
	addACLs(ctx, t, srcAdmin, srcACLs...)
	// The operator's grant on the target: the target topic will have ACLs.
	operator := topicACL(target, pre, catchupUser, kmsg.ACLOperationAll, allow)
	addACLs(ctx, t, dstAdmin, operator)
	awaitACLs(ctx, t, srcAdmin, kmsg.ACLResourceTypeCluster, "kafka-cluster", []string{srcACLs[len(srcACLs)-1].String()})
	awaitACLs(ctx, t, dstAdmin, kmsg.ACLResourceTypeTopic, target, []string{operator.String()})

	run := func(what string) *replicate.Report {
		t.Helper()
		pl := open(ctx, t, s, pipeline.Options{})
		start := time.Now()
		rep, err := pl.Engine.Run(ctx)
		pl.Close()
		requireDone(t, what, rep, err)
		t.Logf("%s: %v; ACL sync %+v", what, time.Since(start).Round(time.Millisecond), rep.ACLs)
		if rep.ACLs == nil {
			t.Fatalf("%s: no ACL sync in the report", what)
		}
		return rep
	}

	// Denied: the copy is whole, the error says what to grant where.
	rep := run("DescribeAcls denied")
	if got := len(readAll(ctx, t, e.target.brokers, target, 1)[0]); got != records {
		t.Errorf("target holds %d records after the denied ACL sync, want %d", got, records)
	}
	for _, want := range []string{`cluster "it-source" refuses DescribeAcls to ` + catchupUser, "grant it Describe on the cluster",
		"--allow-principal " + catchupUser + " --operation Describe --cluster"} {
		if !strings.Contains(rep.ACLs.Error, want) {
			t.Errorf("ACL sync error %q does not say %q", rep.ACLs.Error, want)
		}
	}
	if got := aclsOn(ctx, t, dstAdmin, kmsg.ACLResourceTypeTopic, target); !slices.Equal(got, []string{operator.String()}) {
		t.Errorf("target ACLs after the denied sync: %q, want only the operator's", got)
	}

	// Granted.
	if err := dropACLs(ctx, srcAdmin, map[string]kmsg.ACLResourceType{"kafka-cluster": kmsg.ACLResourceTypeCluster}); err != nil {
		t.Fatal(err)
	}
	awaitACLs(ctx, t, srcAdmin, kmsg.ACLResourceTypeCluster, "kafka-cluster", nil)
	want := []string{operator.String()}
	for _, a := range []brokerACL{
		topicACL(target, lit, "User:alice", kmsg.ACLOperationRead, allow),
		topicACL(target, lit, "User:bob", kmsg.ACLOperationRead, allow), // ALLOW ALL → READ
		topicACL(target, lit, "User:mallory", kmsg.ACLOperationRead, deny),
		topicACL(target, lit, "User:eve", kmsg.ACLOperationAll, deny), // DENY ALL kept
		topicACL(target, lit, catchupUser, kmsg.ACLOperationRead, allow),
		topicACL(target, lit, catchupUser, kmsg.ACLOperationDescribe, allow),
		topicACL(target, lit, catchupUser, kmsg.ACLOperationDescribeConfigs, allow),
	} {
		want = append(want, a.String())
	}
	slices.Sort(want)
	rep = run("granted")
	if diff := cmp.Diff(want, awaitACLs(ctx, t, dstAdmin, kmsg.ACLResourceTypeTopic, target, want)); diff != "" {
		t.Errorf("target topic ACLs, by the test's DescribeAcls (-want +got):\n%s", diff)
	}
	if a := rep.ACLs; a.Error != "" || len(a.Created) != 7 || a.Present != 0 || len(a.Skipped) != 2 {
		t.Errorf("report: %d created, %d present, %d skipped, error %q; want 7, 0, 2 (ALLOW WRITE, prefixed), none",
			len(a.Created), a.Present, len(a.Skipped), a.Error)
	}

	// Again: all present, nothing created, nothing removed.
	rep = run("again")
	if a := rep.ACLs; a.Error != "" || len(a.Created) != 0 || a.Present != 7 {
		t.Errorf("third run: %d created, %d present, error %q; want 0, 7, none", len(a.Created), a.Present, a.Error)
	}
	if diff := cmp.Diff(want, aclsOn(ctx, t, dstAdmin, kmsg.ACLResourceTypeTopic, target)); diff != "" {
		t.Errorf("target topic ACLs after the third run (-want +got):\n%s", diff)
	}
}
