package main

// Counting what a run asks of Kafka (per API key) and of DynamoDB (per
// operation, through a proxy), and the Lambda invocations it makes.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// countInvoker counts the shards a dispatch would invoke.
type countInvoker struct{ n atomic.Int64 }

func (c *countInvoker) Invoke(context.Context, []byte) error {
	c.n.Add(1)
	return nil
}

// keyCounter counts the requests a kfake cluster receives per API key.
type keyCounter struct {
	mu sync.Mutex
	n  map[int16]int
}

func countKeys(c *kfake.Cluster) *keyCounter {
	k := &keyCounter{n: map[int16]int{}}
	for key := int16(0); key <= kmsg.MaxKey; key++ {
		c.ControlKey(key, func(kmsg.Request) (kmsg.Response, error, bool) {
			c.KeepControl()
			k.mu.Lock()
			k.n[key]++
			k.mu.Unlock()
			return nil, nil, false // observe only
		})
	}
	return k
}

func (k *keyCounter) reset() {
	k.mu.Lock()
	defer k.mu.Unlock()
	clear(k.n)
}

func (k *keyCounter) snapshot() map[string]int {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := map[string]int{}
	for key, n := range k.n {
		out[kmsg.NameForKey(key)] = n
	}
	return out
}

// countingProxy forwards to dynalite and counts requests per operation (the
// X-Amz-Target header names it).
type countingProxy struct {
	url   string
	mu    sync.Mutex
	n     map[string]int
	items int // items returned by reads
}

func newCountingProxy(endpoint string) (*countingProxy, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &countingProxy{url: "http://" + ln.Addr().String(), n: map[string]int{}}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(res *http.Response) error {
		switch op(res.Request) {
		case "Query", "Scan", "GetItem", "BatchGetItem":
		default:
			return nil
		}
		body, err := io.ReadAll(res.Body)
		_ = res.Body.Close()
		res.Body = io.NopCloser(bytes.NewReader(body))
		if err != nil {
			return err
		}
		var read struct {
			Count     int
			Item      map[string]any
			Responses map[string][]any
		}
		if json.Unmarshal(body, &read) == nil {
			n := read.Count
			if read.Item != nil {
				n++
			}
			for _, items := range read.Responses {
				n += len(items)
			}
			p.mu.Lock()
			p.items += n
			p.mu.Unlock()
		}
		return nil
	}
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p.mu.Lock()
			p.n[op(r)]++
			p.mu.Unlock()
			rp.ServeHTTP(w, r)
		}))
	}()
	return p, nil
}

// op is the DynamoDB operation of r (its X-Amz-Target header names it).
func op(r *http.Request) string {
	op := r.Header.Get("X-Amz-Target")
	if i := strings.LastIndexByte(op, '.'); i >= 0 {
		op = op[i+1:]
	}
	return op
}

func (p *countingProxy) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.n)
	p.items = 0
}

func (p *countingProxy) snapshot() (map[string]int, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.n), p.items
}
