package crashtest

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"testing"
)

// dynamoFront serves the children's DynamoDB requests and forwards each one
// to the test's DynamoDB API (dynalite) only once it has been received whole,
// and then to its end even if the child is killed meanwhile. That is how
// DynamoDB itself treats a client that dies: a request it received is
// processed. (dynalite instead throws on a request aborted mid-way and its
// process exits, which would end the test at the first unlucky kill.)
func dynamoFront(t *testing.T, endpoint string) string {
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
