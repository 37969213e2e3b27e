package replicate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/plan"
)

// Options configure an Engine. Every value is explicit: the engine fills in
// no default (internal/config holds them, and internal/pipeline passes them
// on), so that a zero means the same here as in the configuration file. New
// refuses a value out of range, naming the option.
type Options struct {
	Pipeline string // checkpoint namespace; required
	Cluster  string // source cluster name written in provenance headers; required with Provenance
	Owner    string // lease owner id of this run; required

	Source Source
	Target Target
	Store  checkpoint.Store

	// Match selects topics; Partitions, if set, restricts the run to them.
	Match      func(topic string) bool
	Partitions []catchup.Partition

	Policy plan.Policy
	// StartTime is the time a Timestamp start policy starts at.
	StartTime time.Time
	// StopTime, if set, ends every window before the first record at or
	// after it (a bounded backfill); it is resolved to offsets once per run.
	StopTime time.Time

	// TargetTopic maps a source topic to its target topic; default identity.
	// Partition numbers are kept.
	TargetTopic func(topic string) string
	// LoopCluster, if set, is the target cluster's name: records whose
	// provenance names it as a source were copied from the target and are
	// not copied back (active-active).
	LoopCluster string
	// CreateTopics creates missing target topics before copying, with the
	// source topic's partition count and the configs copiedConfig lists
	// that are set explicitly on it, and adds partitions to a target topic
	// whose source topic has more. It needs a Source that implements
	// TopicDescriber and a Target that implements TopicCreator and
	// PartitionAdder. Without it, a target topic missing or short fails the
	// partitions of that topic alone.
	CreateTopics bool
	// ReplicationFactor of the topics CreateTopics creates; 0 or -1: the
	// target broker's default.
	ReplicationFactor int
	// ConfigSyncInterval is, with CreateTopics, the least time between two
	// syncs of the copied topic configs of existing target topics by one
	// Engine (a process running --every, a warm Lambda); 0: every run. A
	// Target that implements TopicConfigSyncer is needed, else nothing is
	// synced.
	ConfigSyncInterval time.Duration
	// SyncACLs gives each copied target topic the topic ACLs of its source
	// topic, by MirrorMaker 2's rules (TargetACL), before copying; it never
	// removes a target ACL. It needs a Source that implements
	// TopicACLLister and a Target that implements TopicACLCreator. A
	// failure is reported (Report.ACLs) and logged, and the copy goes on.
	SyncACLs bool
	// ACLSyncInterval is, with SyncACLs, the least time between two ACL
	// syncs by one Engine; 0: every run.
	ACLSyncInterval time.Duration

	Provenance     bool          // add the provenance header and reconcile with the target
	CommitInterval time.Duration // longest time between commits of a partition while copying; positive
	Parallelism    int           // partitions copied at once; at least 1
	FetchBytes     int32         // bytes asked for by one fetch; at least 1
	LeaseTTL       time.Duration // how long a lease lasts without renewal; positive
	MaxBytes       int64         // stop a window after about this many bytes; 0: no limit
	MaxDuration    time.Duration // stop a window after this long; 0: no limit
	BatchRecords   int           // most records handed to one Target.Produce call; at least 1
	Retries        int           // retries of a fetch or produce that wrote nothing; 0: none
	RetryBackoff   time.Duration // first backoff, doubled up to 5s; positive
	// AllowDuplicates lets a partition the store holds no checkpoint of be
	// copied from its start policy although its target partition already
	// holds records that do not say how far it was copied (another
	// writer's, or copies made without provenance): they may be written a
	// second time. Without it such a partition fails closed with
	// catchup.ErrTargetAhead (see adopt). Copies of this pipeline's source
	// found in the target are adopted either way.
	AllowDuplicates bool
	// Margin is how long before the context deadline copying stops, to leave
	// time for the final commits (capped to a tenth of the time left); 0:
	// none, copying goes on up to the deadline.
	Margin time.Duration
	// TakeoverSettle is, when a run takes over a lease its holder never
	// released (a process killed, a worker restarted), how long the target
	// partition's end offset must hold still before reconciliation reads
	// it: a produce request the holder sent just before it died may still
	// be on its way to the broker, and reconciling before it lands would
	// copy its records a second time. 0: no wait (only for tests and for
	// targets nothing else can delay). Only with Provenance, and at most
	// TakeoverSettleMax in all.
	TakeoverSettle time.Duration
	// ReplicationWait bounds how long a run waits, before it reconciles
	// with the target (after a takeover of an unreleased lease, at the end
	// of a run in doubt, after a produce of unknown outcome), for the
	// target partition's high watermark to reach its leader's log end
	// (Target.LogEnd): reconciliation reads only what is visible below the
	// high watermark, and records a leader appended above it while its
	// followers lag would be copied a second time. When it runs out the
	// partition ends StatusInDoubt: its lease is kept, nothing is re-sent
	// and the checkpoint does not move. The configuration's default, 60s,
	// is above the broker's default replica.lag.time.max.ms (30s), after
	// which a lagging follower leaves the in-sync replicas and the high
	// watermark moves on without it; 0: no wait (the high watermark is
	// trusted, as on a target with replication factor 1). A partition
	// without a checkpoint is taken for never written to only when its
	// leader's log end is 0 too, not its high watermark alone (with or
	// without Provenance); otherwise the wait is only with Provenance.
	ReplicationWait time.Duration

	Log *slog.Logger
	Now func() time.Time
	// OnPlan, if set, is called by Run once, before copying, with the window
	// of every selected partition as planned from the checkpoints it read
	// (a progress display's total), so that callers need no second Plan.
	OnPlan func([]plan.Planned)
	// OnProgress, if set, is called after each acknowledged produce with the
	// records and bytes it added. It must be fast and safe for concurrent use.
	OnProgress func(records, bytes int64)
}

// Engine copies the windows of one pipeline.
type Engine struct {
	o Options
	// loopPrefix is catchup.CopiedPrefix(o.LoopCluster), "" without loop
	// prevention.
	loopPrefix string

	mu             sync.Mutex
	lastConfigSync time.Time // start of the last config sync
	lastACLSync    time.Time // start of the last ACL sync
}

// New returns an Engine for o. It refuses values out of range (see
// Options), naming each.
func New(o Options) (*Engine, error) {
	var errs []error
	if o.Pipeline == "" || o.Owner == "" {
		errs = append(errs, errors.New("replicate: Options.Pipeline and Options.Owner are required"))
	}
	if o.Provenance && o.Cluster == "" {
		errs = append(errs, errors.New("replicate: Options.Cluster is required with Provenance"))
	}
	if o.Source == nil || o.Target == nil || o.Store == nil {
		errs = append(errs, errors.New("replicate: Options.Source, Target and Store are required"))
	}
	for _, r := range []struct {
		name string
		bad  bool
		want string
		v    any
	}{
		{"CommitInterval", o.CommitInterval <= 0, "a positive duration", o.CommitInterval},
		{"Parallelism", o.Parallelism < 1, "at least 1", o.Parallelism},
		{"FetchBytes", o.FetchBytes < 1, "at least 1", o.FetchBytes},
		{"LeaseTTL", o.LeaseTTL <= 0, "a positive duration", o.LeaseTTL},
		{"BatchRecords", o.BatchRecords < 1, "at least 1", o.BatchRecords},
		{"Retries", o.Retries < 0, "0 (none) or more", o.Retries},
		{"RetryBackoff", o.RetryBackoff <= 0, "a positive duration", o.RetryBackoff},
		{"Margin", o.Margin < 0, "0 (none) or more", o.Margin},
		{"TakeoverSettle", o.TakeoverSettle < 0, "0 (no wait) or more", o.TakeoverSettle},
		{"ReplicationWait", o.ReplicationWait < 0, "0 (no wait) or more", o.ReplicationWait},
		{"ACLSyncInterval", o.ACLSyncInterval < 0, "0 (every run) or more", o.ACLSyncInterval},
	} {
		if r.bad {
			errs = append(errs, fmt.Errorf("replicate: Options.%s %v: want %s", r.name, r.v, r.want))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if o.Match == nil {
		o.Match = func(string) bool { return true }
	}
	if o.TargetTopic == nil {
		o.TargetTopic = func(t string) string { return t }
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	e := &Engine{o: o}
	if o.LoopCluster != "" {
		e.loopPrefix = catchup.CopiedPrefix(o.LoopCluster)
	}
	return e, nil
}

// survey lists the selected partitions, their watermarks and checkpoints.
// With alongside set, it calls it with the partitions while it reads the
// watermarks and the checkpoints, and returns its error if it has none of
// its own: a round trip to the target saved on every run.
func (e *Engine) survey(ctx context.Context, alongside func([]catchup.Partition) error) ([]catchup.Offsets, map[catchup.Partition]checkpoint.Checkpoint, error) {
	parts := e.o.Partitions
	if parts == nil {
		var err error
		if parts, err = e.o.Source.Partitions(ctx, e.o.Match); err != nil {
			return nil, nil, fmt.Errorf("list source partitions: %w", err)
		}
	}
	if alongside != nil {
		done := make(chan error, 1)
		go func() { done <- alongside(parts) }()
		marks, cps, err := e.watermarks(ctx, parts)
		if aerr := <-done; err == nil && aerr != nil {
			return nil, nil, aerr
		}
		return marks, cps, err
	}
	return e.watermarks(ctx, parts)
}

// watermarks reads the watermarks of parts and the stored checkpoints: of
// parts alone when the options name them (a worker's shard), so that its
// cost does not grow with the pipeline.
func (e *Engine) watermarks(ctx context.Context, parts []catchup.Partition) ([]catchup.Offsets, map[catchup.Partition]checkpoint.Checkpoint, error) {
	marks, err := e.o.Source.ListOffsets(ctx, parts)
	if err != nil {
		return nil, nil, fmt.Errorf("list source offsets: %w", err)
	}
	var stored []checkpoint.Checkpoint
	if e.o.Partitions != nil {
		stored, err = e.o.Store.LoadPartitions(ctx, e.o.Pipeline, parts)
	} else {
		stored, err = e.o.Store.Load(ctx, e.o.Pipeline)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("load checkpoints of pipeline %s: %w", e.o.Pipeline, err)
	}
	cps := make(map[catchup.Partition]checkpoint.Checkpoint, len(stored))
	for _, c := range stored {
		cps[c.Partition] = c
	}
	return marks, cps, nil
}

// policy resolves the times of the options into offsets: StartTime for the
// partitions that have no checkpoint yet, StopTime for all of them; and,
// under start: latest, the start of the partitions that have no checkpoint
// from their topic's begin (latestStarts), which a run (write) stores for
// a topic that has none, and a survey only previews.
func (e *Engine) policy(ctx context.Context, marks []catchup.Offsets, cps map[catchup.Partition]checkpoint.Checkpoint, write bool) (plan.Policy, error) {
	pol := e.o.Policy
	if pol.Start == plan.Latest {
		starts, err := e.latestStarts(ctx, marks, cps, pol, write)
		if err != nil {
			return pol, err
		}
		pol.StartOffsets = merge(pol.StartOffsets, starts)
	}
	if pol.Start == plan.Timestamp {
		var fresh []catchup.Partition
		for _, m := range marks {
			if _, ok := pol.StartOffsets[m.Partition]; !ok && !cps[m.Partition].Exists {
				fresh = append(fresh, m.Partition)
			}
		}
		if len(fresh) > 0 {
			offs, err := e.o.Source.OffsetsForTime(ctx, fresh, e.o.StartTime)
			if err != nil {
				return pol, fmt.Errorf("resolve start time %s: %w", e.o.StartTime.Format(time.RFC3339), err)
			}
			pol.StartOffsets = merge(pol.StartOffsets, offs)
		}
	}
	if !e.o.StopTime.IsZero() && len(marks) > 0 {
		offs, err := e.o.Source.OffsetsForTime(ctx, partitionsOf(marks), e.o.StopTime)
		if err != nil {
			return pol, fmt.Errorf("resolve stop time %s: %w", e.o.StopTime.Format(time.RFC3339), err)
		}
		pol.StopOffsets = merge(pol.StopOffsets, offs)
	}
	return pol, nil
}

// partitionsOf returns the partitions of marks.
func partitionsOf(marks []catchup.Offsets) []catchup.Partition {
	parts := make([]catchup.Partition, len(marks))
	for i, m := range marks {
		parts[i] = m.Partition
	}
	return parts
}

// merge returns a new map with the entries of a, then b.
func merge(a, b map[catchup.Partition]int64) map[catchup.Partition]int64 {
	out := make(map[catchup.Partition]int64, len(a)+len(b))
	for p, o := range a {
		out[p] = o
	}
	for p, o := range b {
		out[p] = o
	}
	return out
}

// Run copies the window of every selected partition, Parallelism at a time,
// until each reaches the end fixed at the start of the run, the context is
// cancelled, or its deadline minus Margin arrives. Partitions leased by
// another run are skipped. The error is for the run as a whole (a partition
// missing on the target, the source unreachable); each partition's own
// outcome is in the report.
func (e *Engine) Run(ctx context.Context) (*Report, error) {
	start := e.o.Now()
	requests0 := storeRequests(e.o.Store) // the store may serve runs before this one
	// The target is checked while the source and the store are read, unless
	// topics may be created: then only once the store answered (a store not
	// yet created must not leave target topics behind).
	var tc targetCheck // read after survey returns, which waits for checkTarget
	alongside := func(parts []catchup.Partition) (err error) {
		tc, err = e.checkTarget(ctx, parts)
		return err
	}
	if e.o.CreateTopics {
		alongside = nil
	}
	marks, cps, err := e.survey(ctx, alongside)
	if err != nil {
		return nil, err
	}
	if alongside == nil {
		if tc, err = e.checkTarget(ctx, partitionsOf(marks)); err != nil {
			return nil, err
		}
	}
	gone := e.gone(marks, cps)
	if len(marks) == 0 && len(gone) == 0 {
		return nil, fmt.Errorf("%w: check topics.include and topics.exclude against the source's topics", ErrNoTopic)
	}
	pol, err := e.policy(ctx, marks, cps, true)
	if err != nil {
		return nil, err
	}
	if e.o.OnPlan != nil {
		e.o.OnPlan(plan.Windows(marks, cps, pol))
	}
	ends, logEnds := e.targetEnds(ctx, marks, pol, cps, tc.bad)
	copyCtx, cancel := e.copyContext(ctx)
	defer cancel()
	// The partitions without a checkpoint over a target that holds records
	// settle together (presettle) while the others copy.
	adopters := e.adopters(marks, pol, cps, tc.bad, ends)
	var settled map[catchup.Partition]bool
	settling := make(chan struct{})
	go func() {
		defer close(settling)
		settled = e.presettle(copyCtx, adopters)
	}()
	defer func() { <-settling }()

	rep := &Report{Pipeline: e.o.Pipeline, Partitions: make([]Result, len(marks)), ConfigChanges: tc.configChanges,
		ConfigSynced: tc.configSynced, ConfigSyncError: tc.configError, ACLs: tc.acls}
	rs, _ := e.o.Target.(resentCounter)
	var resent0 int64
	if rs != nil {
		resent0 = rs.Resent()
	}
	// Parallelism workers take the partitions in turn, rather than a
	// goroutine per partition waiting for a slot: at 10,000 partitions the
	// waiting goroutines cost more memory than the copies.
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(e.o.Parallelism, max(len(marks), 1)) {
		wg.Go(func() {
			for i := range work {
				m := marks[i]
				if err := tc.bad[m.Topic]; err != nil {
					rep.Partitions[i] = untouched(m, pol, cps[m.Partition], StatusFailed, err)
					continue
				}
				if r, ok := idle(m, pol, cps[m.Partition]); ok {
					rep.Partitions[i] = r
					continue
				}
				if copyCtx.Err() != nil {
					rep.Partitions[i] = untouched(m, pol, cps[m.Partition], StatusNotStarted, nil)
					continue
				}
				tp := e.targetPartition(m.Partition)
				sv := surveyed{end: -1, logEnd: -1}
				if adopters[tp] {
					<-settling
					if copyCtx.Err() != nil {
						rep.Partitions[i] = untouched(m, pol, cps[m.Partition], StatusNotStarted, nil)
						continue
					}
					sv.settled = settled[tp]
				}
				if end, ok := ends[tp]; ok {
					sv.end = end
				}
				if le, ok := logEnds[tp]; ok {
					sv.logEnd = le
				}
				rep.Partitions[i] = e.copyPartition(ctx, copyCtx, m, pol, cps[m.Partition], sv)
			}
		})
	}
	for i := range marks {
		work <- i
	}
	close(work)
	wg.Wait()
	for _, r := range gone {
		e.o.Log.Error("source topic gone", "pipeline", e.o.Pipeline, "topic", r.Topic, "partition", r.Partition.Partition,
			"next", r.Next, "error", r.Err)
	}
	rep.Partitions = append(rep.Partitions, gone...)
	e.timeFigures(ctx, rep)
	rep.Duration = e.o.Now().Sub(start)
	for _, r := range rep.Partitions {
		rep.ReplicationWaits += r.ReplicationWaits
		rep.ReplicationWaited += r.ReplicationWaited
	}
	if rs != nil {
		rep.Resent = rs.Resent() - resent0
	}
	rep.StoreRequests = storeRequests(e.o.Store) - requests0
	return rep, nil
}

// storeRequests returns the requests s has made in its lifetime, where it
// counts them (dynamostore), else 0.
func storeRequests(s checkpoint.Store) int64 {
	if c, ok := s.(interface{ Requests() int64 }); ok {
		return c.Requests()
	}
	return 0
}

// ErrNoTopic is returned (wrapped) by Run when the pipeline's topic
// selection matches no topic of the source and the store holds no
// checkpoint of a matching topic: a run that would copy nothing, for ever.
var ErrNoTopic = errors.New("the include pattern matches no topic of the source")

// copyContext returns the context copying runs under: cancelled with ctx, and
// Margin before ctx's deadline so that the final commits still fit.
func (e *Engine) copyContext(ctx context.Context) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	margin := min(e.o.Margin, time.Until(dl)/10)
	return context.WithDeadline(ctx, dl.Add(-margin))
}

// progress reports records and bytes to OnProgress, if set.
func (e *Engine) progress(records, bytes int64) {
	if e.o.OnProgress != nil {
		e.o.OnProgress(records, bytes)
	}
}
