package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// awsDouble serves the AWS calls the bootstraps make besides DynamoDB and
// Lambda (lambdaStack serves Invoke): Secrets Manager GetSecretValue and
// SSM GetParameter (the JSON 1.1 protocol, by X-Amz-Target).
type awsDouble struct {
	srv *httptest.Server

	mu      sync.Mutex
	secrets map[string]string // by ARN
	params  map[string]string // by name
	calls   map[string]int    // by X-Amz-Target
}

func newAWSDouble(t *testing.T) *awsDouble {
	a := &awsDouble{secrets: map[string]string{}, params: map[string]string{}, calls: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /{$}", a.json)
	a.srv = httptest.NewServer(mux)
	t.Cleanup(a.srv.Close)
	return a
}

func (a *awsDouble) json(w http.ResponseWriter, r *http.Request) {
	target := r.Header.Get("X-Amz-Target")
	var in struct{ SecretId, Name string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		awsError(w, http.StatusBadRequest, "SerializationException", err.Error())
		return
	}
	a.mu.Lock()
	a.calls[target]++
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

func (a *awsDouble) count(call string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.calls[call]
}
