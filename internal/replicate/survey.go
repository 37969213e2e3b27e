package replicate

import (
	"context"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/plan"
)

// Survey is a plan together with what it was computed from, for callers
// that schedule work (the Lambda dispatcher): how far each window is from
// the log start, which partitions are leased, how many bytes a record
// averaged so far.
type Survey struct {
	Windows     []plan.Planned                              // as Plan returns them, in source partition order
	Offsets     []catchup.Offsets                           // the source watermarks, in the same order
	Checkpoints map[catchup.Partition]checkpoint.Checkpoint // stored checkpoints with their leases and counters
}

// Survey returns what Plan returns, with the watermarks and the stored
// checkpoints it read (one store Load). It leases and copies nothing.
func (e *Engine) Survey(ctx context.Context) (*Survey, error) {
	marks, cps, err := e.survey(ctx, nil)
	if err != nil {
		return nil, err
	}
	pol, err := e.policy(ctx, marks, cps)
	if err != nil {
		return nil, err
	}
	return &Survey{Windows: plan.Windows(marks, cps, pol), Offsets: marks, Checkpoints: cps}, nil
}
