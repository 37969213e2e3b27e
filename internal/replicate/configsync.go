package replicate

import (
	"context"
	"fmt"
	"maps"
	"slices"
)

// TopicConfigSyncer is a Target that reads and changes the configs set on
// its topics; with Options.CreateTopics the engine keeps the copied configs
// of existing target topics in sync with their source topics. kafkago.Target
// implements it.
type TopicConfigSyncer interface {
	// ExplicitConfigs returns, for each of topics that exists, the configs
	// set on the topic itself (not those inherited from broker defaults).
	ExplicitConfigs(ctx context.Context, topics []string) (map[string]map[string]string, error)
	// AlterConfigs sets on each topic of changes the configs given
	// (IncrementalAlterConfigs, operation SET), leaving every other config
	// of the topic as it is.
	AlterConfigs(ctx context.Context, changes map[string]map[string]string) error
}

// ConfigChange is one topic config changed on the target by config sync.
type ConfigChange struct {
	Topic  string `json:"topic"` // the target topic
	Config string `json:"config"`
	From   string `json:"from"` // "" when the config was not set on the topic
	To     string `json:"to"`
}

// syncConfigs brings the copied configs of the target topics of from (target
// topic → source topic) to what creation would give them now: the source
// topic's explicit configs that copiedConfig lists, adjusted as targetConfigs
// does. A config set on the target and not on the source is left alone, and
// nothing is ever removed. It runs at most once per ConfigSyncInterval per
// Engine after one that succeeded (a failed one is tried again on the next
// run), and returns the changes made and whether it ran.
func (e *Engine) syncConfigs(ctx context.Context, from map[string]string) (changes []ConfigChange, ran bool, err error) {
	syncer, ok := e.o.Target.(TopicConfigSyncer)
	describer, ok2 := e.o.Source.(TopicDescriber)
	if !ok || !ok2 || len(from) == 0 {
		return nil, false, nil
	}
	now := e.o.Now()
	e.mu.Lock()
	due := e.lastConfigSync.IsZero() || now.Sub(e.lastConfigSync) >= e.o.ConfigSyncInterval
	e.mu.Unlock()
	if !due {
		return nil, false, nil
	}
	changes, err = e.syncConfigsNow(ctx, syncer, describer, from)
	if err == nil {
		e.mu.Lock()
		e.lastConfigSync = now
		e.mu.Unlock()
	}
	return changes, true, err
}

// syncConfigsNow is syncConfigs without the interval.
func (e *Engine) syncConfigsNow(ctx context.Context, syncer TopicConfigSyncer, describer TopicDescriber, from map[string]string) ([]ConfigChange, error) {
	targets := slices.Sorted(maps.Keys(from))
	sources := make([]string, 0, len(targets))
	for _, t := range targets {
		sources = append(sources, from[t])
	}
	src, err := describer.DescribeTopics(ctx, sources)
	if err != nil {
		return nil, fmt.Errorf("describe source topics: %w", err)
	}
	have, err := syncer.ExplicitConfigs(ctx, targets)
	if err != nil {
		return nil, fmt.Errorf("describe target topic configs: %w", err)
	}
	var changes []ConfigChange
	alter := map[string]map[string]string{}
	for _, t := range targets {
		s, ok := src[from[t]]
		cur, ok2 := have[t]
		if !ok || !ok2 {
			continue // gone meanwhile; the next run sees it
		}
		want := e.targetConfigs(s.Configs)
		for _, k := range slices.Sorted(maps.Keys(want)) {
			if v, set := cur[k]; set && v == want[k] {
				continue
			}
			if alter[t] == nil {
				alter[t] = map[string]string{}
			}
			alter[t][k] = want[k]
			changes = append(changes, ConfigChange{Topic: t, Config: k, From: cur[k], To: want[k]})
		}
	}
	if len(alter) == 0 {
		return nil, nil
	}
	if err := syncer.AlterConfigs(ctx, alter); err != nil {
		return nil, fmt.Errorf("alter target topic configs: %w", err)
	}
	for _, c := range changes {
		e.o.Log.InfoContext(ctx, "topic config changed", "pipeline", e.o.Pipeline, "topic", c.Topic,
			"source_topic", from[c.Topic], "config", c.Config, "from", c.From, "to", c.To)
	}
	return changes, nil
}
