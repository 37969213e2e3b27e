package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awslabs/goformation/v7/cloudformation/iam"

	"github.com/kafka-catchup/catchup/internal/awsapi"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/fanout"
	"github.com/kafka-catchup/catchup/internal/lambdaenv"
)

// The account and region the recorded calls are evaluated in: those
// goformation gives AWS::AccountId and AWS::Region in !Sub.
const (
	account   = "123456789012"
	region    = "us-east-1"
	partition = "aws"
)

// The customer-managed KMS keys a test's deployment encrypts with: its
// configuration parameter is a SecureString under configKey, its password
// secrets are under secretsKey (MSK requires a customer key for them).
const (
	configKey  = "arn:aws:kms:us-east-1:123456789012:key/0c0f1a7e-config"
	secretsKey = "arn:aws:kms:us-east-1:123456789012:key/5ec7e75-secrets"
)

// needs are the AWS operations the code states it sends, from every adapter.
func needs() []awsapi.Need { return append(lambdaenv.Needs(), fanout.Needs()...) }

// recorded is what the bootstraps of one test recorded (CATCHUP_AWS_RECORD).
type recorded struct {
	dir     string // where the processes' files are
	procs   []recordedProc
	configs []string // configurations kept in SSM (deployedConfig)
}

type recordedProc struct {
	function string           // the template's logical id: ReplicateFunction or DispatchFunction
	file     string           // what the process recorded, or
	rec      *awsapi.Recorder // what a client in the test recorded
	env      map[string]string
}

var (
	recordingsMu sync.Mutex
	recordings   = map[*testing.T]*recorded{}
)

// recordAWS returns the file the bootstrap fn (replicate or dispatch),
// started by t with env, records its AWS calls in (awsapi.EnvRecord), ""
// for another program. When t ends, after its processes, every call
// recorded is checked against the policies template.yaml gives the
// function's role (checkRecorded).
func recordAWS(t *testing.T, fn string, env map[string]string) string {
	function := map[string]string{"replicate": "ReplicateFunction", "dispatch": "DispatchFunction"}[fn]
	if function == "" {
		return ""
	}
	recordingsMu.Lock()
	defer recordingsMu.Unlock()
	r := recording(t)
	file := filepath.Join(r.dir, fmt.Sprintf("%s-%d.jsonl", fn, len(r.procs)))
	r.procs = append(r.procs, recordedProc{function: function, file: file, env: env})
	return file
}

// recordInProcess returns a Recorder for the SDK clients a test makes
// itself, to do in-process what function does (env as its environment):
// its calls are checked against function's role when t ends.
func recordInProcess(t *testing.T, function string, env map[string]string) *awsapi.Recorder {
	recordingsMu.Lock()
	defer recordingsMu.Unlock()
	r := recording(t)
	rec := awsapi.NewRecorder(nil)
	r.procs = append(r.procs, recordedProc{function: function, rec: rec, env: env})
	return rec
}

// deployedConfig tells the permission check of t the configuration its
// bootstraps read from SSM: the stack's PasswordSecretArns and
// ClusterRoleArns are those it names, as an operator would set them.
func deployedConfig(t *testing.T, yaml string) {
	recordingsMu.Lock()
	defer recordingsMu.Unlock()
	r := recording(t)
	r.configs = append(r.configs, yaml)
}

// recording returns t's recording, registering its check on first use;
// recordingsMu is held.
func recording(t *testing.T) *recorded {
	r := recordings[t]
	if r == nil {
		// The files are kept in t's temporary folder, which must outlive
		// the check: cleanups run last registered first, so the folder's
		// removal is registered before the check (by this call, or by an
		// earlier one).
		r = &recorded{dir: t.TempDir()}
		recordings[t] = r
		t.Cleanup(func() {
			recordingsMu.Lock()
			delete(recordings, t)
			recordingsMu.Unlock()
			checkRecorded(t, r)
		})
	}
	return r
}

// call is one recorded call of a function.
type call struct {
	function string
	awsapi.Call
}

func readCalls(t *testing.T, r *recorded) []call {
	var out []call
	for _, p := range r.procs {
		if p.rec != nil {
			for _, c := range p.rec.Calls() {
				out = append(out, call{p.function, c})
			}
			continue
		}
		f, err := os.Open(p.file)
		if os.IsNotExist(err) {
			continue // no AWS call
		}
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var c awsapi.Call
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				t.Fatalf("%s: %v", p.file, err)
			}
			out = append(out, call{p.function, c})
		}
		f.Close()
	}
	return out
}

// deploymentOf returns the template's parameters, and the physical names
// of its resources, for the stack the processes of r stand for: the table
// and the replicate function they were given, their configuration's SSM
// parameter (a SecureString under configKey), the secrets their
// configurations name (under secretsKey), and the roles they assume.
func deploymentOf(t *testing.T, r *recorded) map[string]any {
	d := map[string]any{"AWS::Region": region, "AWS::AccountId": account, "AWS::Partition": partition}
	var secrets, roles []any
	configs := slices.Clone(r.configs)
	for _, p := range r.procs {
		e := p.env
		if v := e[lambdaenv.EnvTable]; v != "" {
			d["CheckpointTable"] = v
			d["GetAtt:CheckpointTable.Arn"] = awsapi.Table.ARN(partition, region, account, v)
		}
		if v := e[lambdaenv.EnvReplicateFunction]; v != "" {
			d["ReplicateFunction"] = v
			d["GetAtt:ReplicateFunction.Arn"] = awsapi.Function.ARN(partition, region, account, v)
		}
		if v := e[lambdaenv.EnvConfigParameter]; v != "" {
			d["ConfigParameterArn"] = awsapi.Parameter.ARN(partition, region, account, v)
			d["ConfigParameterKmsKeyArns"] = []any{configKey}
		}
		if v := e[lambdaenv.EnvConfig]; v != "" {
			configs = append(configs, v)
		}
	}
	for _, v := range configs {
		f, err := config.ParseWithStore([]byte(v), "env", "dynamodb://table")
		if err != nil {
			t.Fatalf("the configuration of a bootstrap: %v", err)
		}
		for _, pl := range f.Pipelines {
			for _, c := range []config.Cluster{pl.Source, pl.Target} {
				if c.SASL == nil {
					continue
				}
				// A secret read as the cluster's role needs no grant of the stack's.
				if a := c.SASL.PasswordSecretARN; a != "" && c.SASL.AWSRoleARN == "" && !slices.Contains(secrets, any(a)) {
					secrets = append(secrets, a)
				}
				if a := c.SASL.AWSRoleARN; a != "" && !slices.Contains(roles, any(a)) {
					roles = append(roles, a)
				}
			}
		}
	}
	if len(secrets) > 0 {
		d["PasswordSecretArns"] = secrets
		d["PasswordSecretKmsKeyArns"] = []any{secretsKey}
	}
	if len(roles) > 0 {
		d["ClusterRoleArns"] = roles
	}
	return d
}

// request is one IAM request for the simulator (testdata/simulate.mjs).
type request struct {
	ID             int            `json:"id"`
	Principal      string         `json:"principal"`
	Action         string         `json:"action"`
	Resource       string         `json:"resource"`
	Account        string         `json:"account"`
	Context        map[string]any `json:"context,omitempty"`
	Policies       []namedPolicy  `json:"policies"`
	ResourcePolicy map[string]any `json:"resourcePolicy,omitempty"`
	what           string         // the operation, its resource and the code that sent it, for the failure
	role           string         // the function's logical id
}

type namedPolicy struct {
	Name   string `json:"name"`
	Policy any    `json:"policy"`
}

// checkRecorded checks every AWS call the processes of r recorded against
// the policies template.yaml gives the sending function's role, resolved
// with r's deployment (deploymentOf), with the IAM policy simulator: each
// operation must be one an adapter states (awsapi.Need), and its IAM
// action must be allowed on its resource; an operation AWS decrypts for
// the caller (SSM SecureString, Secrets Manager) also needs kms:Decrypt on
// the customer-managed key through that service.
func checkRecorded(t *testing.T, r *recorded) {
	began := time.Now()
	calls := readCalls(t, r)
	if len(calls) == 0 {
		return
	}
	summary := map[string]bool{}
	for _, c := range calls {
		line := fmt.Sprintf("%s: %s %s %v from %s", c.function, c.Service, c.Operation, c.Resources, strings.Join(c.Path, " <- "))
		if c.Role != "" {
			line += " as " + c.Role
		}
		if !summary[line] {
			summary[line] = true
			t.Logf("recorded AWS call: %s", line)
		}
	}
	tpl := openTemplate(t, deploymentOf(t, r))
	fns := tpl.GetAllServerlessFunctionResources()
	var reqs []request
	seen := map[string]bool{}
	for _, c := range calls {
		need, ok := awsapi.Find(needs(), c.Service, c.Operation)
		if ok && c.Role != "" {
			continue // made as a cluster's aws_role_arn: that role's policies decide, in its account
		}
		if !ok {
			t.Errorf("%s sent %s %s (by %s), which no adapter states among the permissions it needs (awsapi.Need)",
				c.function, c.Service, c.Operation, strings.Join(c.Path, " <- "))
			continue
		}
		role := functionRole(t, tpl, fns[c.function])
		roleName := strings.TrimSuffix(strings.TrimPrefix(awsString(fns[c.function].Role), "GetAtt:"), ".Arn")
		principal := "arn:aws:sts::" + account + ":assumed-role/" + roleName + "/" + c.function
		policies := rolePolicies(t, role)
		for _, id := range c.Resources {
			res := need.Resource.ARN(partition, region, account, id)
			what := fmt.Sprintf("%s %s from %s", c.Service, c.Operation, strings.Join(c.Path, " <- "))
			add := func(q request) {
				key := c.function + q.Action + q.Resource + fmt.Sprint(q.Context)
				if seen[key] {
					return
				}
				seen[key] = true
				q.ID, q.Principal, q.Account, q.Policies, q.role = len(reqs), principal, accountOf(q.Resource), policies, c.function
				reqs = append(reqs, q)
			}
			q := request{Action: need.Action, Resource: res, what: what}
			if need.Resource == awsapi.Role {
				// The role's trust policy, in its own account, trusts the function's role.
				q.ResourcePolicy = policy(map[string]any{"Effect": "Allow", "Action": "sts:AssumeRole",
					"Principal": map[string]any{"AWS": "arn:aws:iam::" + account + ":role/" + roleName}})
			}
			add(q)
			if key := decryptKey(need); need.DecryptVia != "" && key != "" {
				add(request{Action: "kms:Decrypt", Resource: key, what: what + " on " + res + ", which " + need.DecryptVia + " decrypts with the role's permissions",
					Context: map[string]any{"kms:ViaService": need.DecryptVia + "." + region + ".amazonaws.com",
						"aws:ViaAWSService": "true", "aws:CalledVia": []string{need.DecryptVia + ".amazonaws.com"}},
					// The default key policy: the account's IAM policies decide.
					ResourcePolicy: policy(map[string]any{"Effect": "Allow", "Action": "kms:*", "Resource": "*",
						"Principal": map[string]any{"AWS": "arn:aws:iam::" + account + ":root"}})})
			}
		}
	}
	results := simulate(t, reqs)
	t.Logf("permission check: %d calls, %d IAM requests simulated in %s", len(calls), len(reqs), time.Since(began).Round(time.Millisecond))
	for i, res := range results {
		q := reqs[i]
		if res.Result != "Allowed" {
			t.Errorf("%s: its role in template.yaml lacks %s on %s (%s) for %s%s", q.role, q.Action, q.Resource, res.Result, q.what, errorsOf(res))
		}
	}
}

// accountOf returns the account of the resource arn, the deployment's for
// one that names none: a role in another account is assumed across
// accounts, which its trust policy and the caller's policies must both allow.
func accountOf(arn string) string {
	if f := strings.Split(arn, ":"); len(f) > 4 && f[4] != "" {
		return f[4]
	}
	return account
}

// decryptKey returns the customer-managed key the deployment encrypts
// need's resources with.
func decryptKey(need awsapi.Need) string {
	switch need.Resource {
	case awsapi.Parameter:
		return configKey
	case awsapi.Secret:
		return secretsKey
	}
	return ""
}

func awsString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func policy(st map[string]any) map[string]any {
	return map[string]any{"Version": "2012-10-17", "Statement": []any{st}}
}

// rolePolicies returns role's inline policies as IAM policy documents, the
// statements of a false condition (AWS::NoValue) left out.
func rolePolicies(t *testing.T, role *iam.Role) []namedPolicy {
	t.Helper()
	var out []namedPolicy
	for _, p := range role.Policies {
		b, err := json.Marshal(p.PolicyDocument)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		sts, _ := doc["Statement"].([]any)
		doc["Statement"] = slices.DeleteFunc(sts, func(s any) bool { return s == nil })
		out = append(out, namedPolicy{Name: p.PolicyName, Policy: doc})
	}
	return out
}

type simResult struct {
	ID     int    `json:"id"`
	Result string `json:"result"`
	Errors any    `json:"errors"`
}

func errorsOf(r simResult) string {
	if r.Errors == nil {
		return ""
	}
	b, _ := json.Marshal(r.Errors)
	return " (simulator: " + string(b) + ")"
}

// simulate evaluates reqs with @cloud-copilot/iam-simulate, installed by
// make deps (npm ci), in one node process.
func simulate(t *testing.T, reqs []request) []simResult {
	t.Helper()
	if len(reqs) == 0 {
		return nil
	}
	in, err := json.Marshal(reqs)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join("testdata", "simulate.mjs"))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the IAM policy simulator (node testdata/simulate.mjs, @cloud-copilot/iam-simulate from make deps): %v\n%s", err, stderr.String())
	}
	var res []simResult
	if err := json.Unmarshal(out, &res); err != nil || len(res) != len(reqs) {
		t.Fatalf("the IAM policy simulator answered %d results for %d requests (%v): %s", len(res), len(reqs), err, out)
	}
	return res
}
