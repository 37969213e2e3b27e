package checkpoint

import (
	"context"
	"fmt"
)

// PutBegin implements Store.
func (s *MemStore) PutBegin(ctx context.Context, pipeline, topic string, b Begin) (Begin, error) {
	if err := ctx.Err(); err != nil {
		return Begin{}, fmt.Errorf("put begin of %s %s: %w", pipeline, topic, err)
	}
	if topic == "" {
		return Begin{}, fmt.Errorf("put begin of %s: empty topic", pipeline)
	}
	if err := b.Validate(); err != nil {
		return Begin{}, fmt.Errorf("put begin of %s %s: %w", pipeline, topic, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.begins == nil {
		s.begins = map[string]map[string]Begin{}
	}
	bs := s.begins[pipeline]
	if bs == nil {
		bs = map[string]Begin{}
		s.begins[pipeline] = bs
	}
	if old, ok := bs[topic]; ok {
		return old.Clone(), nil
	}
	bs[topic] = b.Clone()
	return b.Clone(), nil
}

// LoadBegins implements Store.
func (s *MemStore) LoadBegins(ctx context.Context, pipeline string, topics []string) (map[string]Begin, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load begins of %s: %w", pipeline, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]Begin{}
	for _, t := range topics {
		if b, ok := s.begins[pipeline][t]; ok {
			out[t] = b.Clone()
		}
	}
	return out, nil
}
