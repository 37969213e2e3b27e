package dynamotest

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
)

// Front serves the DynamoDB requests of child processes that a test kills
// with SIGKILL, and forwards each one to endpoint only once it has been
// received whole, and then to its end even if the child is killed
// meanwhile. That is how DynamoDB itself treats a client that dies: a
// request it received is processed. (dynalite instead throws on a request
// aborted mid-way and its process exits, which would end the test at the
// first unlucky kill.) It returns the front's URL; it closes when t ends.
func Front(t testing.TB, endpoint string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return // the child died before it sent the whole request
		}
		// Not cancelled with the child's connection: the request completes.
		ctx := context.WithoutCancel(r.Context())
		out, err := http.NewRequestWithContext(ctx, r.Method, endpoint+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		out.Header = r.Header.Clone()
		out.Host = r.Host
		res, err := client.Do(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		for k, v := range res.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(res.StatusCode)
		_, _ = io.Copy(w, res.Body)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close(); client.CloseIdleConnections() })
	return "http://" + l.Addr().String()
}

// ChildEnv returns the environment of a catchup child process whose store
// is the DynamoDB API of t (Endpoint): this process's environment plus the
// endpoint and, unless set, the dummy credentials and region that Client
// uses. The test's own dynalite is put behind a Front, so that the test may
// SIGKILL the child at any moment.
func ChildEnv(t testing.TB) []string {
	t.Helper()
	endpoint := Endpoint(t)
	if os.Getenv(EnvEndpoint) == "" {
		endpoint = Front(t, endpoint)
	}
	env := append(os.Environ(), EnvEndpoint+"="+endpoint, "AWS_EC2_METADATA_DISABLED=true")
	if os.Getenv("AWS_ACCESS_KEY_ID") == "" || os.Getenv("AWS_SECRET_ACCESS_KEY") == "" {
		env = append(env, "AWS_ACCESS_KEY_ID=catchup-test", "AWS_SECRET_ACCESS_KEY=catchup-test", "AWS_SESSION_TOKEN=",
			"AWS_PROFILE=", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")
	}
	if os.Getenv("AWS_REGION") == "" {
		env = append(env, "AWS_REGION=us-east-1")
	}
	return env
}
