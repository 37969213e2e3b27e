package worker

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// Event is what one replicate invocation is asked to do. The dispatcher
// sends {"pipeline", "partitions"}; an operator or a schedule may send
// {"pipeline"} for every partition, or {"pipeline", "job"} for a backfill.
type Event struct {
	// Pipeline names a pipeline of the configuration; required.
	Pipeline string `json:"pipeline"`
	// Partitions, if set, restricts the invocation to them.
	Partitions []Partition `json:"partitions,omitempty"`
	// Job, if set, makes the invocation a bounded backfill with its own
	// checkpoint namespace ("<pipeline>.job.<name>"): invoke it again with
	// the same job until the summary says done.
	Job *Job `json:"job,omitempty"`
}

// Partition names one source partition.
type Partition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// Job is a backfill of the records whose timestamps fall in [From, To).
type Job struct {
	Name string    `json:"name"`
	From time.Time `json:"from"`        // RFC 3339
	To   time.Time `json:"to,omitzero"` // RFC 3339; absent: up to the end fixed when each invocation starts
}

// DecodeEvent decodes payload strictly: an unknown field, a value of the
// wrong type, data after the object, a missing pipeline, a job without a
// name or start, and a partition named twice are all errors.
func DecodeEvent(payload []byte) (Event, error) {
	var ev Event
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ev); err != nil {
		return Event{}, fmt.Errorf("decode event: %w", err)
	}
	if dec.More() {
		return Event{}, errors.New("decode event: data after the JSON object")
	}
	var errs []error
	if ev.Pipeline == "" {
		errs = append(errs, errors.New(`"pipeline" is required`))
	}
	seen := map[Partition]bool{}
	for _, p := range ev.Partitions {
		switch {
		case p.Topic == "" || p.Partition < 0:
			errs = append(errs, fmt.Errorf("partition %+v: a topic and a partition number from 0 are required", p))
		case seen[p]:
			errs = append(errs, fmt.Errorf("partition %s/%d is named twice", p.Topic, p.Partition))
		}
		seen[p] = true
	}
	if j := ev.Job; j != nil {
		if j.Name == "" || j.From.IsZero() {
			errs = append(errs, errors.New(`a job needs "name" and "from"`))
		}
		if !j.To.IsZero() && !j.To.After(j.From) {
			errs = append(errs, fmt.Errorf("job %s: to %s is not after from %s", j.Name, j.To.Format(time.RFC3339), j.From.Format(time.RFC3339)))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Event{}, fmt.Errorf("invalid event: %w", err)
	}
	if len(ev.Partitions) == 0 {
		ev.Partitions = nil // "partitions": [] means the whole pipeline, as no list does: one spelling
	}
	return ev, nil
}

// partitions returns the event's partitions in the engine's type, nil for all.
func (ev *Event) partitions() []catchup.Partition {
	if len(ev.Partitions) == 0 {
		return nil
	}
	out := make([]catchup.Partition, len(ev.Partitions))
	for i, p := range ev.Partitions {
		out[i] = catchup.Partition{Topic: p.Topic, Partition: p.Partition}
	}
	return out
}
