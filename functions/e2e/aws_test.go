package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// awsDouble serves the AWS calls the bootstraps make besides DynamoDB and
// Lambda (lambdaStack serves Invoke): Secrets Manager GetSecretValue and
// SSM GetParameter (the JSON 1.1 protocol, by X-Amz-Target), and STS
// AssumeRole (the query protocol).
type awsDouble struct {
	srv *httptest.Server

	mu      sync.Mutex
	secrets map[string]string   // by ARN
	params  map[string]string   // by name
	calls   map[string]int      // by X-Amz-Target or "AssumeRole"
	signers map[string][]string // access key ids that signed each call, by X-Amz-Target or "AssumeRole"
	roles   []string            // role ARN and external id of each AssumeRole
}

// assumedKey is the access key id of the credentials AssumeRole hands out.
const assumedKey = "ASIACATCHUPASSUMED"

// sts answers STS AssumeRole (the query protocol) with credentials whose
// access key id is assumedKey, so that the test can tell which calls were
// signed with them.
func (a *awsDouble) sts(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.Form.Get("Action") != "AssumeRole" {
		http.Error(w, "want AssumeRole", http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	a.calls["AssumeRole"]++
	a.signers["AssumeRole"] = append(a.signers["AssumeRole"], accessKey(r))
	a.roles = append(a.roles, r.Form.Get("RoleArn")+" "+r.Form.Get("ExternalId"))
	a.mu.Unlock()
	w.Header().Set("Content-Type", "text/xml")
	fmt.Fprintf(w, `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><Credentials>`+
		`<AccessKeyId>%s</AccessKeyId><SecretAccessKey>assumed-secret</SecretAccessKey><SessionToken>assumed-token</SessionToken>`+
		`<Expiration>%s</Expiration></Credentials><AssumedRoleUser><Arn>%s/catchup</Arn><AssumedRoleId>AROACATCHUP:catchup</AssumedRoleId>`+
		`</AssumedRoleUser></AssumeRoleResult><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></AssumeRoleResponse>`,
		assumedKey, time.Now().Add(time.Hour).UTC().Format(time.RFC3339), r.Form.Get("RoleArn"))
}

// accessKey returns the access key id that signed r (SigV4).
func accessKey(r *http.Request) string {
	_, cred, _ := strings.Cut(r.Header.Get("Authorization"), "Credential=")
	key, _, _ := strings.Cut(cred, "/")
	return key
}

func newAWSDouble(t *testing.T) *awsDouble {
	a := &awsDouble{secrets: map[string]string{}, params: map[string]string{}, calls: map[string]int{}, signers: map[string][]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /{$}", a.json)
	a.srv = httptest.NewServer(mux)
	t.Cleanup(a.srv.Close)
	return a
}

func (a *awsDouble) json(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		a.sts(w, r)
		return
	}
	target := r.Header.Get("X-Amz-Target")
	var in struct{ SecretId, Name string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		awsError(w, http.StatusBadRequest, "SerializationException", err.Error())
		return
	}
	a.mu.Lock()
	a.calls[target]++
	a.signers[target] = append(a.signers[target], accessKey(r))
	secret, secretOK := a.secrets[in.SecretId]
	param, paramOK := a.params[in.Name]
	a.mu.Unlock()
	var out any
	switch target {
	case "secretsmanager.GetSecretValue":
		v, ok := secret, secretOK
		if !ok {
			awsError(w, http.StatusBadRequest, "ResourceNotFoundException", "Secrets Manager can't find the specified secret.")
			return
		}
		out = map[string]any{"ARN": in.SecretId, "Name": "kafka", "SecretString": v, "VersionId": "v1"}
	case "AmazonSSM.GetParameter":
		v, ok := param, paramOK
		if !ok {
			awsError(w, http.StatusBadRequest, "ParameterNotFound", "")
			return
		}
		out = map[string]any{"Parameter": map[string]any{"Name": in.Name, "Type": "SecureString", "Value": v, "Version": 1}}
	default:
		awsError(w, http.StatusBadRequest, "UnknownOperationException", target)
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(out)
}

func awsError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-ErrorType", code)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": code, "message": msg})
}

// putSecret and putParameter store what GetSecretValue and GetParameter serve.
func (a *awsDouble) putSecret(arn, value string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.secrets[arn] = value
}

func (a *awsDouble) putParameter(name, value string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.params[name] = value
}

// putConfig keeps the configuration of t's bootstraps in the SSM parameter
// name and tells t's permission check (deployedConfig), whose deployment
// grants the secrets and roles it names, as an operator would set the
// stack's parameters from it.
func (a *awsDouble) putConfig(t *testing.T, name, config string) {
	a.putParameter(name, config)
	deployedConfig(t, config)
}

// signedBy returns the access key ids that signed each of call's requests,
// and the role and external id of each AssumeRole.
func (a *awsDouble) signedBy(call string) (keys, roles []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.signers[call]...), append([]string(nil), a.roles...)
}

func (a *awsDouble) count(call string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.calls[call]
}
