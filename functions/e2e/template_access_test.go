package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/awslabs/goformation/v7/cloudformation"
	"github.com/awslabs/goformation/v7/cloudformation/iam"
	"github.com/awslabs/goformation/v7/cloudformation/serverless"
	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/kafkago"
)

// statement is one IAM policy statement, Action and Resource as lists.
type statement struct {
	Sid       string
	Action    []string
	Resource  []string
	Condition map[string]map[string]string
}

// functionRole returns the IAM role f runs as: the template writes both
// roles out (SAM's generated role would carry the VPC-access policy even
// without a VPC).
func functionRole(t *testing.T, tpl *cloudformation.Template, f *serverless.Function) *iam.Role {
	t.Helper()
	name, ok := strings.CutPrefix(aws.ToString(f.Role), "GetAtt:")
	name, ok2 := strings.CutSuffix(name, ".Arn")
	if !ok || !ok2 {
		t.Fatalf("function role %q, want a GetAtt of a role of the template", aws.ToString(f.Role))
	}
	r, err := tpl.GetIAMRoleWithName(name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// statements returns the statements of role's inline policies, the
// conditional ones whose condition is false left out.
func statements(t *testing.T, role *iam.Role) []statement {
	t.Helper()
	var out []statement
	for _, p := range role.Policies {
		b, err := json.Marshal(p.PolicyDocument)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct{ Statement []json.RawMessage }
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		for _, raw := range doc.Statement {
			var st struct {
				Sid              string
				Action, Resource any
				Condition        map[string]map[string]string
			}
			if string(raw) == "null" {
				continue // !If false: AWS::NoValue
			}
			if err := json.Unmarshal(raw, &st); err != nil {
				t.Fatalf("statement %s: %v", raw, err)
			}
			s := statement{Sid: st.Sid, Action: strList(st.Action), Resource: strList(st.Resource), Condition: st.Condition}
			if slices.Contains(s.Resource, "*") {
				t.Errorf("%s: statement %s allows %v on every resource", aws.ToString(role.RoleName), s.Sid, s.Action)
			}
			out = append(out, s)
		}
	}
	return out
}

func strList(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			s, _ := x.(string)
			out = append(out, s)
		}
		return out
	}
	return nil
}

// TestTemplateAccessGrants checks the template's optional grants against
// the code with every access parameter set: each function gets exactly the
// kafka-cluster: actions kafkago.IAMActions lists for what it sends to
// each MSK cluster (cluster actions on the cluster's ARN, topic actions on
// its topics' ARN, group actions on its groups' ARN), with and without
// MskCreateTopics and MskSyncGroups, kms:Decrypt on exactly the given keys
// and only through Secrets Manager, the VPC-access policy with subnets, the
// boundary and the extra managed policies.
func TestTemplateAccessGrants(t *testing.T) {
	const (
		srcCluster = "arn:aws:kafka:eu-west-1:111122223333:cluster/src/uuid-1"
		srcTopics  = "arn:aws:kafka:eu-west-1:111122223333:topic/src/uuid-1/*"
		srcGroups  = "arn:aws:kafka:eu-west-1:111122223333:group/src/uuid-1/*"
		dstCluster = "arn:aws:kafka:eu-west-1:111122223333:cluster/dst/uuid-2"
		dstTopics  = "arn:aws:kafka:eu-west-1:111122223333:topic/dst/uuid-2/*"
		dstGroups  = "arn:aws:kafka:eu-west-1:111122223333:group/dst/uuid-2/*"
		boundary   = "arn:aws:iam::111122223333:policy/boundary"
	)
	// kind of resource an action is granted on: the cluster, its topics or its groups.
	kind := func(action string) string {
		switch action {
		case "kafka-cluster:Connect", "kafka-cluster:WriteDataIdempotently":
			return "cluster"
		case "kafka-cluster:DescribeGroup", "kafka-cluster:AlterGroup":
			return "group"
		}
		return "topic"
	}
	resources := map[string]struct{ cluster, kind string }{
		srcCluster: {srcCluster, "cluster"}, srcTopics: {srcCluster, "topic"}, srcGroups: {srcCluster, "group"},
		dstCluster: {dstCluster, "cluster"}, dstTopics: {dstCluster, "topic"}, dstGroups: {dstCluster, "group"},
	}
	keys := []any{"arn:aws:kms:eu-west-1:111122223333:key/k1", "arn:aws:kms:eu-west-1:111122223333:key/k2"}
	extra := []any{"arn:aws:iam::111122223333:policy/extra1", "arn:aws:iam::111122223333:policy/extra2"}
	for _, params := range []struct{ createTopics, syncGroups string }{{"false", "false"}, {"true", "false"}, {"false", "true"}, {"true", "true"}} {
		tpl := openTemplate(t, map[string]any{
			"SourceMskClusterArn": srcCluster, "TargetMskClusterArn": dstCluster,
			"MskCreateTopics": params.createTopics, "MskSyncGroups": params.syncGroups,
			"PasswordSecretKmsKeyArns": keys, "PasswordSecretArns": []any{"arn:aws:secretsmanager:eu-west-1:111122223333:secret:AmazonMSK_x"},
			"SubnetIds": []any{"subnet-1"}, "SecurityGroupIds": []any{"sg-1"},
			"PermissionsBoundaryArn": boundary, "ExtraManagedPolicyArns": extra,
		})
		var features []string
		if params.createTopics == "true" {
			features = append(features, kafkago.FeatureCreateTopics)
		}
		// The dispatcher surveys the source (Metadata, ListOffsets, Fetch)
		// and runs group sync, which also reads the target's copies.
		dispatch := map[string][]string{srcCluster: dispatcherActions(kafkago.RoleSource, false)}
		if params.syncGroups == "true" {
			dispatch = map[string][]string{
				srcCluster: dispatcherActions(kafkago.RoleSource, true),
				dstCluster: dispatcherActions(kafkago.RoleTarget, true),
			}
		}
		want := map[string]map[string][]string{ // function -> cluster -> actions
			"ReplicateFunction": {
				srcCluster: kafkago.IAMActions(kafkago.RoleSource, features...),
				dstCluster: kafkago.IAMActions(kafkago.RoleTarget, append(features, kafkago.FeatureIdempotent)...),
			},
			"DispatchFunction": dispatch,
		}
		fns := tpl.GetAllServerlessFunctionResources()
		for name, wantMSK := range want {
			role := functionRole(t, tpl, fns[name])
			got := map[string][]string{}
			var kms []statement
			for _, st := range statements(t, role) {
				for _, a := range st.Action {
					switch {
					case strings.HasPrefix(a, "kafka-cluster:"):
						for _, r := range st.Resource {
							res, ok := resources[r]
							if !ok {
								t.Errorf("%s: %s on %s, which is neither an MSK cluster's ARN nor its topics' or groups'", name, a, r)
							}
							if res.kind != kind(a) {
								t.Errorf("%s: %s on %s: cluster actions go on the cluster's ARN, topic actions on its topics', group actions on its groups'", name, a, r)
							}
							got[res.cluster] = append(got[res.cluster], a)
						}
					case a == "kms:Decrypt":
						kms = append(kms, st)
					}
				}
			}
			for c := range got {
				slices.Sort(got[c])
			}
			if diff := cmp.Diff(wantMSK, got); diff != "" {
				t.Errorf("%s, MskCreateTopics=%s, MskSyncGroups=%s: kafka-cluster actions per cluster, kafkago.IAMActions (-) vs template (+):\n%s",
					name, params.createTopics, params.syncGroups, diff)
			}
			if len(kms) != 1 || !cmp.Equal(kms[0].Resource, []string{keys[0].(string), keys[1].(string)}) ||
				!strings.HasPrefix(kms[0].Condition["StringEquals"]["kms:ViaService"], "secretsmanager.") {
				t.Errorf("%s: kms:Decrypt statements %+v, want one on exactly the two keys, via Secrets Manager", name, kms)
			}
			if !slices.ContainsFunc(role.ManagedPolicyArns, func(a string) bool { return strings.HasSuffix(a, "/AWSLambdaVPCAccessExecutionRole") }) {
				t.Errorf("%s: no VPC-access policy with subnets: %v", name, role.ManagedPolicyArns)
			}
			for _, e := range extra {
				if !slices.Contains(role.ManagedPolicyArns, e.(string)) {
					t.Errorf("%s: extra policy %s not attached: %v", name, e, role.ManagedPolicyArns)
				}
			}
			if aws.ToString(role.PermissionsBoundary) != boundary {
				t.Errorf("%s: permissions boundary %q, want %s", name, aws.ToString(role.PermissionsBoundary), boundary)
			}
		}
	}
}

// dispatcherActions returns the sorted kafka-cluster: actions the dispatch
// function needs on a cluster of role: those of kafkago.DispatchReads and,
// with syncGroups, those of group sync.
func dispatcherActions(role kafkago.Role, syncGroups bool) []string {
	acts := []string{"kafka-cluster:Connect"}
	for _, n := range kafkago.Needs() {
		read := n.Feature == kafkago.FeatureAlways && slices.Contains(kafkago.DispatchReads(), n.API)
		if n.Role == role && n.IAM != "" && (read || syncGroups && n.Feature == kafkago.FeatureSyncGroups) {
			acts = append(acts, n.IAM)
		}
	}
	slices.Sort(acts)
	return slices.Compact(acts)
}
