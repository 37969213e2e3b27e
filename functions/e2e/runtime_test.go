package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// runtimeAPI serves the Lambda Runtime API (2018-06-01) to any number of
// bootstrap processes: each GET /next takes the oldest queued invocation.
// Unlike aws-lambda-rie it has no limit on concurrent invocations.
type runtimeAPI struct {
	srv       *httptest.Server
	function  string
	queue     chan *invocation
	closing   chan struct{}
	mu        sync.Mutex
	taken     map[string]*invocation // by request id, until answered
	firstNext atomic.Pointer[time.Time]
	initError atomic.Pointer[string]
	seq       atomic.Int64
}

// invocation is one event and, once answered, its outcome.
type invocation struct {
	id       string
	payload  []byte
	deadline time.Time
	done     chan struct{}
	body     []byte // the response, or the error document
	failed   bool   // answered on /error
	answered time.Time
}

func newRuntimeAPI(t *testing.T, function string) *runtimeAPI {
	r := &runtimeAPI{function: function, queue: make(chan *invocation, 1024), closing: make(chan struct{}), taken: map[string]*invocation{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", r.next)
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/response", func(w http.ResponseWriter, req *http.Request) { r.answer(w, req, false) })
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/error", func(w http.ResponseWriter, req *http.Request) { r.answer(w, req, true) })
	mux.HandleFunc("POST /2018-06-01/runtime/init/error", func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		s := string(b)
		r.initError.Store(&s)
		w.WriteHeader(http.StatusAccepted)
	})
	r.srv = httptest.NewServer(mux)
	t.Cleanup(func() { close(r.closing); r.srv.Close() })
	return r
}

// addr is the value of AWS_LAMBDA_RUNTIME_API.
func (r *runtimeAPI) addr() string { return strings.TrimPrefix(r.srv.URL, "http://") }

// invoke queues payload with the given deadline.
func (r *runtimeAPI) invoke(payload []byte, deadline time.Time) *invocation {
	inv := &invocation{id: fmt.Sprintf("req-%d", r.seq.Add(1)), payload: payload, deadline: deadline, done: make(chan struct{})}
	r.queue <- inv
	return inv
}

func (r *runtimeAPI) next(w http.ResponseWriter, req *http.Request) {
	now := time.Now()
	r.firstNext.CompareAndSwap(nil, &now)
	select {
	case inv := <-r.queue:
		r.mu.Lock()
		r.taken[inv.id] = inv
		r.mu.Unlock()
		h := w.Header()
		h.Set("Lambda-Runtime-Aws-Request-Id", inv.id)
		h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(inv.deadline.UnixMilli(), 10))
		h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:"+r.function)
		h.Set("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000")
		h.Set("Content-Type", "application/json")
		_, _ = w.Write(inv.payload)
	case <-req.Context().Done(): // the process went away
	case <-r.closing:
		w.WriteHeader(http.StatusGone)
	}
}

func (r *runtimeAPI) answer(w http.ResponseWriter, req *http.Request, failed bool) {
	r.mu.Lock()
	inv, ok := r.taken[req.PathValue("id")]
	delete(r.taken, req.PathValue("id"))
	r.mu.Unlock()
	if !ok {
		http.Error(w, "unknown request id", http.StatusBadRequest)
		return
	}
	inv.body, _ = io.ReadAll(req.Body)
	inv.failed, inv.answered = failed, time.Now()
	close(inv.done)
	w.WriteHeader(http.StatusAccepted)
}

// wait returns once inv is answered, or fails t when ctx ends first.
func (inv *invocation) wait(ctx context.Context, t *testing.T) *invocation {
	t.Helper()
	select {
	case <-inv.done:
		return inv
	case <-ctx.Done():
		t.Fatalf("invocation %s with %s: no answer: %v", inv.id, inv.payload, ctx.Err())
		return nil
	}
}
