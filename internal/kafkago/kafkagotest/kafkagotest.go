// Package kafkagotest records the kinds of requests a kfake cluster
// receives, for tests that hold them to kafkago.Needs, makes one refuse
// topic config changes (RefuseAlterConfigs), and issues OAuth tokens for
// the OAUTHBEARER tests (oauth.go). For tests only.
package kafkagotest

import (
	"maps"
	"slices"
	"sync"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Record records the API key of every request c handles from now on,
// except those of the connection itself (ApiVersions, SASL), which no ACL
// checks; it observes only, c answers every request. The func it returns
// takes the keys recorded since its last call, sorted.
func Record(c *kfake.Cluster) func() []protocol.ApiKey {
	var mu sync.Mutex
	seen := map[protocol.ApiKey]bool{}
	c.Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		switch kmsg.Key(req.Key()) {
		case kmsg.ApiVersions, kmsg.SASLHandshake, kmsg.SASLAuthenticate:
		default:
			mu.Lock()
			seen[protocol.ApiKey(req.Key())] = true
			mu.Unlock()
		}
		return nil, nil, false
	})
	return func() []protocol.ApiKey {
		mu.Lock()
		defer mu.Unlock()
		out := slices.Sorted(maps.Keys(seen))
		clear(seen)
		return out
	}
}

// RefuseAlterConfigs makes c answer every IncrementalAlterConfigs with
// code for each resource while refuse says so, and as usual otherwise.
func RefuseAlterConfigs(c *kfake.Cluster, code int16, refuse func() bool) {
	c.ControlKey(int16(kmsg.IncrementalAlterConfigs), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if !refuse() {
			return nil, nil, false
		}
		req := kreq.(*kmsg.IncrementalAlterConfigsRequest)
		res := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
		for _, r := range req.Resources {
			rr := kmsg.NewIncrementalAlterConfigsResponseResource()
			rr.ResourceType, rr.ResourceName, rr.ErrorCode = r.ResourceType, r.ResourceName, code
			res.Resources = append(res.Resources, rr)
		}
		return res, nil, true
	})
}
