package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/awslabs/goformation/v7"
	"github.com/awslabs/goformation/v7/cloudformation"
	"github.com/awslabs/goformation/v7/intrinsics"
	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
	"github.com/kafka-catchup/catchup/internal/lambdaenv"
	"github.com/kafka-catchup/catchup/internal/metrics"
)

var templatePath = filepath.Join("..", "..", "template.yaml")

// templateMu serializes goformation's YAML processing, which registers
// its tags in a package map on every call (a data race between parallel
// tests).
var templateMu sync.Mutex

// openTemplate parses template.yaml strictly with goformation (an unknown
// property is an error). Parameters resolve to set, else to their defaults
// (the two that only reach environment variables as strings), and
// references to resources to "Ref:NAME" or "GetAtt:NAME.ATTR", so that the
// test can see what points where; set may give them physical values too
// (a resource's name by its logical id, an attribute by "GetAtt:NAME.ATTR").
func openTemplate(t *testing.T, set map[string]any) *cloudformation.Template {
	t.Helper()
	data, err := os.ReadFile(templatePath)
	if err != nil {
		t.Fatal(err)
	}
	templateMu.Lock()
	defer templateMu.Unlock()
	tpl, err := goformation.ParseYAMLWithOptions(data, templateOptions(set, true))
	if err != nil {
		t.Fatalf("goformation: %s: %v", templatePath, err)
	}
	return tpl
}

// resolvedTemplate is template.yaml with its intrinsic functions evaluated
// as a deploy with the parameter values set would evaluate them (set may
// also name a resource, to stand for its Ref, or "AWS::StackName"), as
// JSON decoded: for what goformation does not model (ScheduleV2 events) and
// for the environment of a function as Lambda would see it, numbers and all.
func resolvedTemplate(t *testing.T, set map[string]any) map[string]any {
	t.Helper()
	return processTemplate(t, templateOptions(set, false))
}

// processTemplate is template.yaml as JSON decoded, processed with opts.
func processTemplate(t *testing.T, opts *intrinsics.ProcessorOptions) map[string]any {
	t.Helper()
	data, err := os.ReadFile(templatePath)
	if err != nil {
		t.Fatal(err)
	}
	templateMu.Lock()
	js, err := intrinsics.ProcessYAML(data, opts)
	templateMu.Unlock()
	if err != nil {
		t.Fatalf("%s: %v", templatePath, err)
	}
	var out map[string]any
	if err := json.Unmarshal(js, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// templateOptions resolves Ref, Fn::GetAtt, Fn::Sub and Fn::Split for
// openTemplate and resolvedTemplate; typed makes MaxShards and ShardBytes
// strings, which goformation's map of environment variables needs.
func templateOptions(set map[string]any, typed bool) *intrinsics.ProcessorOptions {
	ref := func(_ string, input, tpl any) any {
		v := refValue(set, input, tpl, typed)
		switch n := v.(type) {
		case float64, int:
			if !typed {
				return scalar(n) // CloudFormation resolves a parameter to a string
			}
		}
		return v
	}
	getAtt := func(_ string, input, _ any) any {
		var name string
		switch v := input.(type) {
		case []any:
			if len(v) != 2 {
				return nil
			}
			name = "GetAtt:" + v[0].(string) + "." + v[1].(string)
		case string:
			name = "GetAtt:" + v
		default:
			return nil
		}
		if v, ok := set[name]; ok {
			return v // a physical ARN the test deploys with
		}
		return name
	}
	// goformation's Fn::Split returns a []string, which its Fn::Select does
	// not index: return the []any that a decoded list is.
	split := func(name string, input, tpl any) any {
		var out []any
		for _, s := range intrinsics.FnSplit(name, input, tpl).([]string) {
			out = append(out, s)
		}
		return out
	}
	// goformation's Fn::Sub resolves ${NAME} with its own Ref, blind to set.
	sub := func(name string, input, tpl any) any {
		s, ok := input.(string)
		if !ok {
			return intrinsics.FnSub(name, input, tpl)
		}
		return subVariable.ReplaceAllStringFunc(s, func(m string) string {
			v := m[2 : len(m)-1]
			if strings.Contains(v, ".") {
				return m
			}
			return scalar(ref("Ref", v, tpl))
		})
	}
	return &intrinsics.ProcessorOptions{
		EvaluateConditions:        true,
		IntrinsicHandlerOverrides: map[string]intrinsics.IntrinsicHandler{"Ref": ref, "Fn::GetAtt": getAtt, "Fn::Split": split, "Fn::Sub": sub},
	}
}

// refValue is what Ref resolves name (input) to: set's value, else a
// parameter's default, else a pseudo parameter or a resource as a string
// that names it.
func refValue(set map[string]any, input, tpl any, typed bool) any {
	name, _ := input.(string)
	params, _ := tpl.(map[string]any)["Parameters"].(map[string]any)
	if v, ok := set[name]; ok {
		return v
	}
	if name == "AWS::Partition" {
		return "aws"
	}
	if p, ok := params[name].(map[string]any); ok {
		if typed && (name == "MaxShards" || name == "ShardBytes") {
			return "20" // strings, as Lambda environment variables are
		}
		return p["Default"]
	}
	if name == "AWS::NoValue" {
		return nil
	}
	if strings.HasPrefix(name, "AWS::") {
		return "pseudo:" + name
	}
	return "Ref:" + name
}

var subVariable = regexp.MustCompile(`\$\{[\.:0-9A-Za-z]+\}`)

// scalar formats a template value as the string Lambda or CloudFormation
// would make of it: 20, not 20.000000.
func scalar(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// rawTemplate is template.yaml as JSON with intrinsic functions in long
// form, for what goformation does not model (Globals.Function.LoggingConfig).
func rawTemplate(t *testing.T) map[string]any {
	t.Helper()
	return processTemplate(t, &intrinsics.ProcessorOptions{NoProcess: true})
}

// TestTemplateMatchesTheCode checks that template.yaml deploys what the
// code expects: the two functions with their build targets, handler,
// runtime and architecture, every environment variable the code reads and
// no other, the JSON log format that the log handler needs, no grant on
// every resource and no VPC policy without a VPC, and alarms on metrics
// the code writes. The permissions each function's calls need are checked
// against the calls themselves (checkRecorded).
func TestTemplateMatchesTheCode(t *testing.T) {
	tpl := openTemplate(t, nil)
	makefile, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	fns := tpl.GetAllServerlessFunctionResources()
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range fns {
			if !yield(n) {
				return
			}
		}
	})
	want := []string{"DispatchFunction", "ReplicateFunction"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Fatalf("functions in the template (-want +got):\n%s", diff)
	}
	for _, name := range want {
		f := fns[name]
		if got := aws.ToString(f.Handler); got != "bootstrap" {
			t.Errorf("%s: Handler %q, want bootstrap (the binary make builds)", name, got)
		}
		if got := aws.ToString(f.Runtime); got != "provided.al2023" {
			t.Errorf("%s: Runtime %q, want provided.al2023", name, got)
		}
		if !slices.Equal(f.Architectures, []string{"arm64"}) {
			t.Errorf("%s: Architectures %v, want [arm64] (make builds GOARCH=arm64)", name, f.Architectures)
		}
		if f.AWSCloudFormationMetadata["BuildMethod"] != "makefile" {
			t.Errorf("%s: Metadata.BuildMethod %v, want makefile", name, f.AWSCloudFormationMetadata["BuildMethod"])
		}
		if !regexp.MustCompile(`(?m)^build-` + name + `:`).Match(makefile) {
			t.Errorf("%s: the Makefile has no build-%s target for sam build", name, name)
		}
		var vars []string
		if f.Environment != nil {
			for k := range f.Environment.Variables {
				vars = append(vars, k)
			}
		}
		slices.Sort(vars)
		code := slices.Sorted(slices.Values(lambdaenv.Names[name]))
		if diff := cmp.Diff(code, vars); diff != "" {
			t.Errorf("%s: environment variables, code (-) vs template (+):\n%s", name, diff)
		}
		if f.EventInvokeConfig == nil || f.EventInvokeConfig.DestinationConfig == nil || f.EventInvokeConfig.DestinationConfig.OnFailure == nil ||
			f.EventInvokeConfig.DestinationConfig.OnFailure.Destination == "" {
			t.Errorf("%s: no on-failure destination for asynchronous invocations", name)
		}
	}
	if fns["ReplicateFunction"].ReservedConcurrentExecutions == nil {
		t.Errorf("ReplicateFunction: no reserved concurrency")
	}
	env := fns["DispatchFunction"].Environment.Variables
	if got := env[lambdaenv.EnvReplicateFunction]; got != "Ref:ReplicateFunction" {
		t.Errorf("DispatchFunction: %s = %v, want a Ref to ReplicateFunction", lambdaenv.EnvReplicateFunction, got)
	}
	for _, name := range want {
		if got := fns[name].Environment.Variables[lambdaenv.EnvTable]; got != "Ref:CheckpointTable" {
			t.Errorf("%s: %s = %v, want a Ref to CheckpointTable", name, lambdaenv.EnvTable, got)
		}
	}
	if ev, ok := fns["DispatchFunction"].Events["Schedule"]; !ok || ev.Type != "ScheduleV2" {
		t.Errorf("DispatchFunction: no EventBridge Scheduler (ScheduleV2) event")
	}

	// What each function's calls need is checked against what the
	// bootstraps send (recordAWS, checkRecorded): here only what no call shows.
	for _, name := range want {
		role := functionRole(t, tpl, fns[name])
		statements(t, role) // no grant on every resource
		if slices.ContainsFunc(role.ManagedPolicyArns, func(a string) bool { return strings.Contains(a, "VPCAccess") }) {
			t.Errorf("%s: the VPC-access policy is attached without subnets: %v", name, role.ManagedPolicyArns)
		}
		if role.PermissionsBoundary != nil {
			t.Errorf("%s: a permissions boundary without PermissionsBoundaryArn", name)
		}
	}

	// Alarms watch metrics the code writes, under the dimension it writes.
	alarms := tpl.GetAllCloudWatchAlarmResources()
	if len(alarms) < 5 {
		t.Errorf("%d alarms, want lag, gaps, fenced commits and errors at least", len(alarms))
	}
	for name, a := range alarms {
		if aws.ToString(a.Namespace) != "catchup" {
			continue // AWS/Lambda, AWS/SQS
		}
		if !slices.Contains(metrics.Names, aws.ToString(a.MetricName)) {
			t.Errorf("alarm %s watches %s, which the code does not write", name, aws.ToString(a.MetricName))
		}
		if len(a.Dimensions) != 1 || a.Dimensions[0].Name != metrics.DimService {
			t.Errorf("alarm %s: dimensions %+v, want the %s dimension alone", name, a.Dimensions, metrics.DimService)
		}
	}
	if raw := rawTemplate(t); dig(raw, "Globals", "Function", "LoggingConfig", "LogFormat") != "JSON" {
		t.Errorf("Globals.Function.LoggingConfig.LogFormat is not JSON: lambdacontext.NewLogHandler writes JSON only then")
	}
	dash, err := os.ReadFile(templatePath)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`\["\$\{MetricsNamespace\}", "(\w+)"`).FindAllSubmatch(dash, -1) {
		if !slices.Contains(metrics.Names, string(m[1])) {
			t.Errorf("the dashboard shows %s, which the code does not write", m[1])
		}
	}
}

func dig(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// TestTemplateTableFitsTheStore checks the checkpoint table of the
// template: on-demand, point-in-time recovery, encryption, and a key schema
// that the store accepts: a table created on the DynamoDB test server from
// the template's definition passes dynamostore.CreateTable's check of an
// existing table.
func TestTemplateTableFitsTheStore(t *testing.T) {
	tpl := openTemplate(t, nil)
	tb, err := tpl.GetDynamoDBTableWithName("CheckpointTable")
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(tb.BillingMode) != "PAY_PER_REQUEST" {
		t.Errorf("BillingMode %q, want PAY_PER_REQUEST", aws.ToString(tb.BillingMode))
	}
	if tb.PointInTimeRecoverySpecification == nil || !aws.ToBool(tb.PointInTimeRecoverySpecification.PointInTimeRecoveryEnabled) {
		t.Errorf("point-in-time recovery is off")
	}
	if tb.SSESpecification == nil || !tb.SSESpecification.SSEEnabled {
		t.Errorf("encryption (SSESpecification) is off")
	}
	in := &dynamodb.CreateTableInput{TableName: aws.String(dynamotest.TableName(t)), BillingMode: types.BillingModePayPerRequest}
	for _, d := range tb.AttributeDefinitions {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{
			AttributeName: aws.String(d.AttributeName), AttributeType: types.ScalarAttributeType(d.AttributeType)})
	}
	for _, k := range tb.KeySchema {
		in.KeySchema = append(in.KeySchema, types.KeySchemaElement{AttributeName: aws.String(k.AttributeName), KeyType: types.KeyType(k.KeyType)})
	}
	client := dynamotest.Client(t, dynamotest.Endpoint(t))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := client.CreateTable(ctx, in); err != nil {
		t.Fatalf("create the template's table: %v", err)
	}
	t.Cleanup(func() {
		_, _ = client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: in.TableName})
	})
	if err := dynamostore.CreateTable(ctx, client, *in.TableName); err != nil {
		t.Errorf("the store refuses the template's table: %v", err)
	}
}
