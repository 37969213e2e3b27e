package e2e

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// runtimeAPI serves the Lambda Runtime API's GET /next, which a bootstrap
// calls once it is ready, and notes when the first call came: the instant
// that aws-lambda-rie does not expose, which TestStartupTime measures. It
// hands out no invocation (the other tests run under the emulator).
type runtimeAPI struct {
	srv       *httptest.Server
	function  string
	closing   chan struct{}
	firstNext atomic.Pointer[time.Time]
}

func newRuntimeAPI(t *testing.T, function string) *runtimeAPI {
	r := &runtimeAPI{function: function, closing: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", r.next)
	r.srv = httptest.NewServer(mux)
	t.Cleanup(func() { close(r.closing); r.srv.Close() })
	return r
}

// addr is the value of AWS_LAMBDA_RUNTIME_API.
func (r *runtimeAPI) addr() string { return strings.TrimPrefix(r.srv.URL, "http://") }

func (r *runtimeAPI) next(w http.ResponseWriter, req *http.Request) {
	now := time.Now()
	r.firstNext.CompareAndSwap(nil, &now)
	select {
	case <-req.Context().Done(): // the process went away
	case <-r.closing:
		w.WriteHeader(http.StatusGone)
	}
}
