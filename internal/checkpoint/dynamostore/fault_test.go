package dynamostore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore/dynamotest"
)

// fault is what the proxy does with one request.
type fault int

const (
	pass        fault = iota // forward it and return the answer
	throttle                 // answer 400 ThrottlingException without forwarding
	provisioned              // answer 400 ProvisionedThroughputExceededException without forwarding
	internal                 // answer 500 InternalServerError without forwarding
	lost                     // forward it, then answer 500: applied, but the client cannot know
	stall                    // answer nothing until the client gives up
	half                     // forward a BatchGetItem for half its keys, answer the rest unprocessed
	numFaults
)

var faultNames = [numFaults]string{"pass", "throttle", "provisioned", "internal", "lost", "stall", "half"}

// faultProxy is an HTTP proxy between the store and the DynamoDB server that
// injects the faults its decide function picks.
type faultProxy struct {
	upstream string
	decide   func(n int64, target string, body []byte) fault
	client   http.Client

	requests atomic.Int64
	counts   [numFaults]atomic.Int64
}

// newFaultProxy starts a proxy to upstream on loopback and returns its URL.
func newFaultProxy(t *testing.T, upstream string, decide func(n int64, target string, body []byte) fault) (*faultProxy, string) {
	t.Helper()
	if strings.HasPrefix(upstream, "https:") {
		t.Skip("the fault proxy speaks plain HTTP; a real endpoint would also reject its re-signed host")
	}
	p := &faultProxy{upstream: strings.TrimSuffix(upstream, "/"), decide: decide}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return p, srv.URL
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := p.requests.Add(1)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	f := p.decide(n, r.Header.Get("X-Amz-Target"), body)
	p.counts[f].Add(1)
	switch f {
	case throttle:
		awsError(w, http.StatusBadRequest, "ThrottlingException", "Rate of requests exceeds the allowed throughput.")
		return
	case provisioned:
		awsError(w, http.StatusBadRequest, "ProvisionedThroughputExceededException",
			"The level of configured provisioned throughput for the table was exceeded.")
		return
	case internal:
		awsError(w, http.StatusInternalServerError, "InternalServerError", "Internal server error")
		return
	case stall:
		<-r.Context().Done()
		return
	}
	var unprocessed map[string]any
	if f == half {
		if body, unprocessed, err = halve(body); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, p.upstream+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	req.ContentLength = int64(len(body))
	resp, err := p.client.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(resp.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if f == lost {
		awsError(w, http.StatusInternalServerError, "InternalServerError", "Internal server error")
		return
	}
	if unprocessed != nil && resp.StatusCode == http.StatusOK {
		if respBody, err = withUnprocessed(respBody, unprocessed); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		resp.Header.Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(respBody)), 10))
		resp.Header.Del("Content-Length")
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(respBody)
}

// halve cuts the keys of each table of a BatchGetItem request body in two,
// and returns the body asking for the first half and the RequestItems of
// the second, which the answer is to leave unprocessed.
func halve(body []byte) ([]byte, map[string]any, error) {
	var in map[string]any
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, nil, err
	}
	items, _ := in["RequestItems"].(map[string]any)
	rest := map[string]any{}
	for table, v := range items {
		ka, _ := v.(map[string]any)
		keys, _ := ka["Keys"].([]any)
		if len(keys) < 2 {
			continue
		}
		other := maps.Clone(ka)
		other["Keys"] = keys[len(keys)/2:]
		ka["Keys"] = keys[:len(keys)/2]
		rest[table] = other
	}
	out, err := json.Marshal(in)
	return out, rest, err
}

// withUnprocessed returns a BatchGetItem answer with unprocessed as its
// UnprocessedKeys.
func withUnprocessed(body []byte, unprocessed map[string]any) ([]byte, error) {
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, err
	}
	out["UnprocessedKeys"] = unprocessed
	return json.Marshal(out)
}

// awsError answers as DynamoDB does (AWS JSON 1.0): the SDK reads the error
// code from __type after the '#', so ThrottlingException and
// ProvisionedThroughputExceededException classify as throttling and a 500 as
// a retryable server error.
func awsError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amzn-Requestid", "catchup-fault-proxy")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"__type":"com.amazonaws.dynamodb.v20120810#%s","message":%q}`, code, msg)
}

func (p *faultProxy) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d requests:", p.requests.Load())
	for f := range numFaults {
		fmt.Fprintf(&b, " %s %d", faultNames[f], p.counts[f].Load())
	}
	return b.String()
}

// fastRetryer is the store's retryer with millisecond backoff, so that a
// test with hundreds of throttled requests takes seconds, not minutes, and
// more attempts: the faults of concurrent runs interleave, so no cap on
// faults in a row can promise one request fewer than 10 failures.
func fastRetryer() dynamostore.Option {
	return dynamostore.WithRetryer(dynamostore.NewRetryer(func(o *retry.StandardOptions) {
		o.MaxAttempts = 40
		o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return time.Millisecond, nil })
	}))
}

// faultStores returns a store that talks through a proxy deciding with
// decide, and a store on the same table that talks to the server directly.
func faultStores(t *testing.T, decide func(n int64, target string, body []byte) fault, opts ...dynamostore.Option) (*dynamostore.Store, *dynamostore.Store, *faultProxy) {
	t.Helper()
	endpoint := dynamotest.Endpoint(t)
	direct := dynamotest.Client(t, endpoint)
	table := dynamotest.Table(t, direct)
	proxy, proxyURL := newFaultProxy(t, endpoint, decide)
	return dynamostore.New(dynamotest.Client(t, proxyURL), table, opts...), dynamostore.New(direct, table), proxy
}

// TestFaults runs runs that commit through a proxy answering about a third
// of the requests with throttling, 500s and lost responses, while rivals try
// to take their partitions: every commit lands exactly once, no checkpoint
// moves backwards, no rival gets a lease, and the request counter saw every
// attempt.
func TestFaults(t *testing.T) {
	const partitions, commits = 4, 75
	var streak atomic.Int64 // faults in a row, capped so that MaxAttempts is never reached
	decide := func(n int64, _ string, _ []byte) fault {
		h := uint64(n) * 0x9E3779B97F4A7C15 // a fixed, well-mixed sequence
		h ^= h >> 29
		var f fault
		switch h % 100 {
		case 0, 1, 2, 3, 4, 5, 6, 7, 8, 9:
			f = throttle
		case 10, 11, 12, 13, 14:
			f = provisioned
		case 15, 16, 17, 18, 19, 20, 21, 22, 23, 24:
			f = internal
		case 25, 26, 27, 28, 29, 30, 31:
			f = lost
		}
		if f == pass || streak.Add(1) > 4 {
			streak.Store(0)
			return pass
		}
		return f
	}
	s, direct, proxy := faultStores(t, decide, fastRetryer())
	ctx := t.Context()

	var wg sync.WaitGroup
	for i := range int32(partitions) {
		p := catchup.Partition{Topic: "orders", Partition: i}
		l, _, err := s.Acquire(ctx, "pipe", p, "run-a", time.Hour)
		if err != nil {
			t.Fatalf("Acquire(%s): %v", p, err)
		}
		wg.Go(func() { // the holder commits
			last := int64(-1)
			for n := range int64(commits) {
				gap := &checkpoint.Gap{From: 10*n + 1, To: 10*n + 2, At: time.Unix(n, 0).UTC()}
				if n%10 != 0 {
					gap = nil
				}
				if err := s.Commit(ctx, l, checkpoint.Commit{Next: 10 * (n + 1), TargetEnd: n, Records: 10, Bytes: 100, Gap: gap}); err != nil {
					t.Errorf("Commit(%s, %d): %v", p, 10*(n+1), err)
					return
				}
				if n%5 == 0 {
					cps, err := direct.Load(ctx, "pipe")
					if err != nil {
						t.Errorf("Load: %v", err)
						return
					}
					for _, cp := range cps {
						if cp.Partition == p {
							if cp.Next < last || cp.Next != 10*(n+1) {
								t.Errorf("%s after commit %d: next %d (was %d), want %d", p, n, cp.Next, last, 10*(n+1))
							}
							last = cp.Next
						}
					}
				}
			}
			if err := s.Release(ctx, l); err != nil {
				t.Errorf("Release(%s): %v", p, err)
			}
		})
		wg.Go(func() { // a rival tries to take the partition while it is held
			for range 10 {
				_, _, err := s.Acquire(ctx, "pipe", p, "rival", time.Hour)
				if !errors.Is(err, checkpoint.ErrLeased) {
					t.Errorf("rival Acquire(%s) = %v, want ErrLeased", p, err)
					return
				}
			}
		})
	}
	wg.Wait()

	cps, err := direct.Load(ctx, "pipe")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if len(cps) != partitions {
		t.Fatalf("Load: %d checkpoints, want %d", len(cps), partitions)
	}
	for _, cp := range cps {
		if cp.Next != 10*commits || cp.TargetEnd != commits-1 || cp.Records != 10*commits || cp.Bytes != 100*commits ||
			cp.Commits != commits || len(cp.Gaps) != (commits+9)/10 || cp.Owner != "" {
			t.Errorf("%s: next %d target end %d records %d bytes %d commits %d gaps %d owner %q; want %d %d %d %d %d %d \"\"",
				cp.Partition, cp.Next, cp.TargetEnd, cp.Records, cp.Bytes, cp.Commits, len(cp.Gaps), cp.Owner,
				10*commits, commits-1, 10*commits, 100*commits, commits, (commits+9)/10)
		}
	}
	t.Logf("proxy: %s; store counted %d", proxy, s.Requests())
	if got, want := s.Requests(), proxy.requests.Load(); got != want {
		t.Errorf("store counted %d requests, the proxy saw %d", got, want)
	}
	for _, f := range []fault{throttle, provisioned, internal, lost} {
		if proxy.counts[f].Load() == 0 {
			t.Errorf("the proxy injected no %s fault: the test proves less than it says", faultNames[f])
		}
	}
}

// TestRetryOfAppliedWrite loses the response of the first attempt of a
// Commit and of a Release after DynamoDB applied them: the SDK retries, and
// the store must report success without applying the commit twice.
func TestRetryOfAppliedWrite(t *testing.T) {
	var lose atomic.Bool
	decide := func(_ int64, target string, body []byte) fault {
		if strings.HasSuffix(target, ".UpdateItem") && bytes.Contains(body, []byte("#last_op")) && lose.CompareAndSwap(true, false) {
			return lost
		}
		return pass
	}
	s, direct, proxy := faultStores(t, decide, fastRetryer())
	ctx := t.Context()
	p := catchup.Partition{Topic: "orders", Partition: 0}
	l, _, err := s.Acquire(ctx, "pipe", p, "run-a", time.Hour)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	lose.Store(true)
	if err := s.Commit(ctx, l, checkpoint.Commit{Next: 10, TargetEnd: 10, Records: 10, Bytes: 100}); err != nil {
		t.Fatalf("Commit whose first response was lost: %v", err)
	}
	lose.Store(true)
	if err := s.Release(ctx, l); err != nil {
		t.Fatalf("Release whose first response was lost: %v", err)
	}
	if got := proxy.counts[lost].Load(); got != 2 {
		t.Fatalf("proxy lost %d responses, want 2", got)
	}
	cps, err := direct.Load(ctx, "pipe")
	if err != nil || len(cps) != 1 {
		t.Fatalf("Load = %v, %v; want one checkpoint", cps, err)
	}
	if cp := cps[0]; cp.Next != 10 || cp.Records != 10 || cp.Bytes != 100 || cp.Commits != 1 || cp.Owner != "" {
		t.Errorf("after a retried commit and release: next %d records %d bytes %d commits %d owner %q; want 10 10 100 1 \"\"",
			cp.Next, cp.Records, cp.Bytes, cp.Commits, cp.Owner)
	}
	// Acquire 1, Commit 3 (lost, retry fails its condition, GetItem), Release 3.
	if got := s.Requests(); got != 7 {
		t.Errorf("store counted %d requests, want 7 (proxy saw %d)", got, proxy.requests.Load())
	}
}

// TestCommitDeadline stalls or fails every write: a Commit under a short
// context deadline returns the context error in time, and the checkpoint is
// the one before.
func TestCommitDeadline(t *testing.T) {
	for _, f := range []fault{stall, internal, throttle} {
		t.Run(faultNames[f], func(t *testing.T) {
			var block atomic.Bool
			decide := func(_ int64, target string, _ []byte) fault {
				if block.Load() && strings.HasSuffix(target, ".UpdateItem") {
					return f
				}
				return pass
			}
			s, direct, _ := faultStores(t, decide) // the production retryer
			p := catchup.Partition{Topic: "orders", Partition: 0}
			l, _, err := s.Acquire(t.Context(), "pipe", p, "run-a", time.Hour)
			if err != nil {
				t.Fatalf("Acquire: %v", err)
			}
			if err := s.Commit(t.Context(), l, checkpoint.Commit{Next: 10, TargetEnd: 10, Records: 10}); err != nil {
				t.Fatalf("Commit: %v", err)
			}
			block.Store(true)

			const deadline = 300 * time.Millisecond
			ctx, cancel := context.WithTimeout(t.Context(), deadline)
			defer cancel()
			start := time.Now()
			commitErr := s.Commit(ctx, l, checkpoint.Commit{Next: 20, TargetEnd: 20, Records: 10})
			elapsed := time.Since(start)
			if !errors.Is(commitErr, context.DeadlineExceeded) {
				t.Errorf("Commit past its deadline = %v, want an error wrapping context.DeadlineExceeded", commitErr)
			}
			if elapsed > deadline+2*time.Second {
				t.Errorf("Commit returned %s after a %s deadline", elapsed, deadline)
			}
			cps, err := direct.Load(t.Context(), "pipe")
			if err != nil || len(cps) != 1 {
				t.Fatalf("Load = %v, %v; want one checkpoint", cps, err)
			}
			if cp := cps[0]; cp.Next != 10 || cp.Records != 10 || cp.Commits != 1 {
				t.Errorf("after a commit past its deadline: next %d records %d commits %d; want the old 10 10 1", cp.Next, cp.Records, cp.Commits)
			}
			t.Logf("%s: %v after %s, %d requests", faultNames[f], commitErr, elapsed.Round(time.Millisecond), s.Requests())
		})
	}
}

// TestAcquireRace starts 50 runs racing for one partition, round after
// round, alternately on a fresh partition and on one whose lease expired:
// exactly one wins each round, and the epoch moves by exactly one.
func TestAcquireRace(t *testing.T) {
	const racers, rounds = 50, 10
	clk := newClock()
	s := newStore(t, dynamostore.WithNow(clk.Now))
	ctx := t.Context()
	p := catchup.Partition{Topic: "orders", Partition: 0}
	for round := range rounds {
		if round%2 == 1 {
			clk.Advance(2 * time.Minute) // the previous winner's lease expires
		} else {
			p.Partition++ // a fresh partition
		}
		var (
			start   = make(chan struct{})
			wg      sync.WaitGroup
			mu      sync.Mutex
			winners []checkpoint.Lease
		)
		for i := range racers {
			wg.Go(func() {
				<-start
				l, _, err := s.Acquire(ctx, "pipe", p, fmt.Sprintf("run-%d-%d", round, i), time.Minute)
				switch {
				case err == nil:
					mu.Lock()
					winners = append(winners, l)
					mu.Unlock()
				case !errors.Is(err, checkpoint.ErrLeased):
					t.Errorf("round %d: Acquire = %v, want nil or ErrLeased", round, err)
				}
			})
		}
		close(start)
		wg.Wait()
		if len(winners) != 1 {
			t.Fatalf("round %d: %d of %d racers won (%v), want exactly one", round, len(winners), racers, winners)
		}
		if want := int64(1 + round%2); winners[0].Epoch != want {
			t.Errorf("round %d: winner's epoch %d, want %d", round, winners[0].Epoch, want)
		}
	}
}

// TestLoadPartitionsUnprocessedKeys checks that LoadPartitions asks again
// for the keys a BatchGetItem leaves unprocessed (throttled, or over the 16
// MB answer limit), until it has them all.
func TestLoadPartitionsUnprocessedKeys(t *testing.T) {
	var halved atomic.Int64
	s, direct, proxy := faultStores(t, func(_ int64, target string, _ []byte) fault {
		if strings.HasSuffix(target, ".BatchGetItem") && halved.Add(1) <= 3 {
			return half
		}
		return pass
	})
	var ps []catchup.Partition
	for n := range int32(200) {
		p := catchup.Partition{Topic: "orders", Partition: n}
		ps = append(ps, p)
		if n%4 != 3 {
			if err := direct.Reset(t.Context(), "pl", p, int64(n)); err != nil {
				t.Fatal(err)
			}
		}
	}
	want, err := direct.Load(t.Context(), "pl")
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.LoadPartitions(t.Context(), "pl", ps)
	if err != nil {
		t.Fatalf("LoadPartitions through %s: %v", proxy, err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("LoadPartitions with unprocessed keys mismatch with Load (-want +got):\n%s", d)
	}
	// 2 chunks of 100 keys; the first answered for 50, then 25, then 13
	// (three halvings), then the last 12: 4 requests, and 1 for the second.
	if n := s.Requests(); n != 5 {
		t.Errorf("LoadPartitions made %d requests (%s), want 5", n, proxy)
	}
	if items, _ := s.Reads(); items != int64(len(want)) {
		t.Errorf("Reads = %d items, want %d", items, len(want))
	}
}
