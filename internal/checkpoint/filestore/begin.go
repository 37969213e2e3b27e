package filestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/kafka-catchup/catchup/internal/checkpoint"
)

// fileBegin is a checkpoint.Begin as the snapshot's "begins" and a journal
// line's "begin" spell it.
type fileBegin struct {
	Topic   string    `json:"topic"`
	At      time.Time `json:"at"`
	Offsets []int64   `json:"offsets"` // by partition; -2: from the log start
}

// journalLine is one line of the journal: a checkpoint's whole state, or a
// begin ({"begin": {...}}, nothing else), written once per topic by
// PutBegin.
type journalLine struct {
	fileCheckpoint
	Begin *fileBegin `json:"begin,omitempty"`
}

// beginEntry returns the journal line of the begin b of topic.
func beginEntry(topic string, b checkpoint.Begin) ([]byte, error) {
	line, err := json.Marshal(struct {
		Begin fileBegin `json:"begin"`
	}{fileBegin{Topic: topic, At: utc(b.At), Offsets: b.Offsets}})
	if err != nil {
		return nil, err
	}
	return append(line, '\n'), nil
}

// replayBegin applies jl, a journal line holding a begin, to begins. A topic
// keeps the begin it has: a begin is written once, and a line replayed over
// the snapshot that already holds it changes nothing.
func replayBegin(jl journalLine, begins map[string]checkpoint.Begin) error {
	if jl.Topic != "" {
		return errors.New("holds both a checkpoint and a begin")
	}
	b, err := fromFileBegin(*jl.Begin)
	if err != nil {
		return err
	}
	if _, ok := begins[jl.Begin.Topic]; !ok {
		begins[jl.Begin.Topic] = b
	}
	return nil
}

// toFileBegins returns begins as the snapshot spells them, sorted by topic;
// nil if there are none.
func toFileBegins(begins map[string]checkpoint.Begin) []fileBegin {
	var out []fileBegin
	for _, t := range slices.Sorted(maps.Keys(begins)) {
		out = append(out, fileBegin{Topic: t, At: utc(begins[t].At), Offsets: begins[t].Offsets})
	}
	return out
}

// fromFileBegins returns the begins of a snapshot by topic, or an error
// naming the first bad one.
func fromFileBegins(fbs []fileBegin) (map[string]checkpoint.Begin, error) {
	out := make(map[string]checkpoint.Begin, len(fbs))
	for i, fb := range fbs {
		b, err := fromFileBegin(fb)
		if err != nil {
			return nil, fmt.Errorf("begin %d: %w", i, err)
		}
		if _, dup := out[fb.Topic]; dup {
			return nil, fmt.Errorf("begin %d: topic %s appears twice", i, fb.Topic)
		}
		out[fb.Topic] = b
	}
	return out, nil
}

// fromFileBegin returns the begin fb spells, or an error if it has no topic
// or a bad offset.
func fromFileBegin(fb fileBegin) (checkpoint.Begin, error) {
	if fb.Topic == "" {
		return checkpoint.Begin{}, errors.New("begin has no topic")
	}
	b := checkpoint.Begin{At: fb.At, Offsets: fb.Offsets}
	if err := b.Validate(); err != nil {
		return checkpoint.Begin{}, fmt.Errorf("begin of %s: %w", fb.Topic, err)
	}
	return b, nil
}

// PutBegin implements checkpoint.Store: one journal line, on disk when it
// returns the begin stored.
func (s *Store) PutBegin(ctx context.Context, pipeline, topic string, b checkpoint.Begin) (checkpoint.Begin, error) {
	fail := func(err error) (checkpoint.Begin, error) {
		return checkpoint.Begin{}, fmt.Errorf("put begin of %s %s: %w", pipeline, topic, err)
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	if topic == "" {
		return fail(errors.New("empty topic"))
	}
	if err := b.Validate(); err != nil {
		return fail(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pl, err := s.open(pipeline)
	if err != nil {
		return fail(err)
	}
	if old, ok := pl.begins[topic]; ok {
		return old.Clone(), nil
	}
	b = b.Clone()
	b.At = utc(b.At.Truncate(time.Millisecond))
	line, err := beginEntry(topic, b)
	if err != nil {
		return fail(err)
	}
	pl.begins[topic] = b // before persistLine: a compaction it triggers writes it too
	if err := s.persistLine(pl, line); err != nil {
		delete(pl.begins, topic)
		return fail(err)
	}
	return b.Clone(), nil
}

// LoadBegins implements checkpoint.Store, from memory after the first read
// of the pipeline's file.
func (s *Store) LoadBegins(ctx context.Context, pipeline string, topics []string) (map[string]checkpoint.Begin, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load begins of %s: %w", pipeline, err)
	}
	if len(topics) == 0 {
		return map[string]checkpoint.Begin{}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pl, err := s.open(pipeline)
	if err != nil {
		return nil, fmt.Errorf("load begins of %s: %w", pipeline, err)
	}
	return selectBegins(pl.begins, topics), nil
}

// selectBegins returns copies of the begins of topics that have one.
func selectBegins(begins map[string]checkpoint.Begin, topics []string) map[string]checkpoint.Begin {
	out := make(map[string]checkpoint.Begin, min(len(topics), len(begins)))
	for _, t := range topics {
		if b, ok := begins[t]; ok {
			out[t] = b.Clone()
		}
	}
	return out
}

// PutBegin implements checkpoint.Store: it fails with ErrReadOnly.
func (s *ReadOnly) PutBegin(_ context.Context, pipeline, topic string, _ checkpoint.Begin) (checkpoint.Begin, error) {
	return checkpoint.Begin{}, fmt.Errorf("put begin of %s %s: %w", pipeline, topic, ErrReadOnly)
}

// LoadBegins implements checkpoint.Store: the begins in the pipeline's
// files as they are now.
func (s *ReadOnly) LoadBegins(ctx context.Context, pipeline string, topics []string) (map[string]checkpoint.Begin, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load begins of %s: %w", pipeline, err)
	}
	if len(topics) == 0 {
		return map[string]checkpoint.Begin{}, nil
	}
	if err := checkName(pipeline); err != nil {
		return nil, fmt.Errorf("load begins of %s: %w", pipeline, err)
	}
	_, begins, err := s.read(pipeline)
	if err != nil {
		return nil, fmt.Errorf("load begins of %s: %w", pipeline, err)
	}
	return selectBegins(begins, topics), nil
}
