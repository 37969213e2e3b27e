package config

import (
	"fmt"
	"math"
)

// checkTopicCreation checks create_topics, replication_factor and
// config_sync_interval, acl_sync_interval.
func (p *Pipeline) checkTopicCreation(c *checker, path string) {
	at := path + ".replication_factor"
	switch rf := p.ReplicationFactor; {
	case rf == -1:
	case rf < 1 || rf > math.MaxInt16:
		c.addf(at, "%d is not a replication factor: use -1 for the target brokers' default.replication.factor, or 1 to %d", rf, math.MaxInt16)
	case !p.CreateTopics:
		c.addf(at, "%d has no effect without create_topics: true (catchup creates no topics otherwise)", rf)
	}
	if g := p.SyncGroups; g != nil {
		g.groups = Topics{Include: g.Include, Exclude: g.Exclude}
		g.groups.compile(func(field string, i int, err error) {
			c.addf(fmt.Sprintf("%s.sync_groups.%s[%d]", path, field, i), "%v", err)
		})
		if len(g.Include) == 0 {
			c.addf(path+".sync_groups.include", `select at least one consumer group: list regular expressions such as "orders-.*"`)
		}
		if g.Interval < 0 {
			c.addf(path+".sync_groups.interval", "%v is negative; use 0 to sync the groups on every run", g.Interval)
		}
		if !p.ProvenanceEnabled() {
			c.addf(path+".sync_groups", "needs provenance: true: offsets are translated through the provenance headers")
		}
	}
	if p.ACLSyncInterval < 0 {
		c.addf(path+".acl_sync_interval", "%v is negative; use 0 to sync the topic ACLs on every run", p.ACLSyncInterval)
	}
	if p.ConfigSyncInterval < 0 {
		c.addf(path+".config_sync_interval", "%v is negative; use 0 to sync the topic configs on every run", p.ConfigSyncInterval)
	}
}
