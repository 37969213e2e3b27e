package replicate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

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
// checkpoints it read (one store Load). It leases, copies and writes
// nothing: under start: latest, a topic without a begin is shown as the
// run that begins it would (begin.go).
func (e *Engine) Survey(ctx context.Context) (*Survey, error) {
	return e.surveyWith(ctx, false)
}

// SurveyBegun is Survey that, under start: latest, first stores the begin
// of each topic that has a partition without a checkpoint and no begin, as
// a run would: the Lambda dispatcher's survey. Without it a new pipeline's
// partitions would show empty windows (their latest) survey after survey,
// never be handed to a worker, and never be begun.
func (e *Engine) SurveyBegun(ctx context.Context) (*Survey, error) {
	return e.surveyWith(ctx, true)
}

// surveyWith is Survey, storing the begins it needs if write.
func (e *Engine) surveyWith(ctx context.Context, write bool) (*Survey, error) {
	marks, cps, err := e.survey(ctx, nil)
	if err != nil {
		return nil, err
	}
	pol, err := e.policy(ctx, marks, cps, write)
	if err != nil {
		return nil, err
	}
	return &Survey{Windows: plan.Windows(marks, cps, pol), Offsets: marks, Checkpoints: cps}, nil
}

// CheckAnchors sets the Err of every window of sv whose source topic was
// deleted and refilled past its checkpoint, as the first run to copy it
// would find before copying (the anchor check: the last record copied
// against its copy in the target): a plan then shows such a partition as
// blocked, not as a normal window. It reads one source record and up to a
// few target batches per checkpointed partition with a window to copy (an
// idle partition costs nothing), Parallelism at a time,
// and needs Provenance; without it, it does nothing. Partitions it cannot
// read are left as they are.
func (e *Engine) CheckAnchors(ctx context.Context, sv *Survey) {
	if !e.o.Provenance {
		return
	}
	sem := make(chan struct{}, e.o.Parallelism)
	var wg sync.WaitGroup
	for i := range sv.Windows {
		w := &sv.Windows[i]
		cp := sv.Checkpoints[w.Partition]
		// An empty window copies nothing: its check waits for the run that copies.
		if w.Err != nil || w.Len() == 0 || !cp.Exists || cp.TargetEnd <= 0 || cp.Next <= 0 {
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			pc := &partitionCopy{e: e, p: w.Partition, res: &Result{}, next: cp.Next, targetEnd: cp.TargetEnd}
			if err := pc.checkAnchor(ctx, cp.TargetEnd); errors.Is(err, catchup.ErrTopicRecreated) || errors.Is(err, catchup.ErrForeignRecord) {
				w.Err = err
			}
		})
	}
	wg.Wait()
}

// TargetCopied returns, for those of ps whose target partition holds, in
// its last few batches, a copy of them by this pipeline's source cluster,
// the source offset after the last such copy: where a run resumes when the
// store holds no checkpoint of the partition (adopt), and below which a
// reset would copy records a second time. It needs Provenance; without it,
// it returns none (the target cannot say). It costs one Target.EndOffsets
// and, per partition whose target is not empty, up to a few ReadBacks,
// Parallelism at a time. It does not wait for a lagging follower: what the
// high watermark hides is not counted.
func (e *Engine) TargetCopied(ctx context.Context, ps []catchup.Partition) (map[catchup.Partition]int64, error) {
	if !e.o.Provenance || len(ps) == 0 {
		return nil, nil
	}
	tps := make([]catchup.Partition, len(ps))
	for i, p := range ps {
		tps[i] = e.targetPartition(p)
	}
	ends, err := e.o.Target.EndOffsets(ctx, tps)
	if err != nil {
		return nil, fmt.Errorf("target end offsets: %w", err)
	}
	var (
		mu   sync.Mutex
		out  = map[catchup.Partition]int64{}
		errs []error
		wg   sync.WaitGroup
	)
	sem := make(chan struct{}, e.o.Parallelism)
	for _, p := range ps {
		end := ends[e.targetPartition(p)]
		if end <= 0 {
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			pc := &partitionCopy{e: e, p: p, res: &Result{}, stop: math.MaxInt64}
			last, found, err := pc.lastCopy(ctx, 0, end, 0, adoptBatches)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				errs = append(errs, fmt.Errorf("read back %s: %w", e.targetPartition(p), err))
			case found:
				out[p] = last + 1
			}
		})
	}
	wg.Wait()
	return out, errors.Join(errs...)
}
