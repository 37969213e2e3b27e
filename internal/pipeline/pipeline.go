// Package pipeline assembles a runnable pipeline from its configuration: it
// dials the source and target clusters, opens the checkpoint store and builds
// the copy engine. The CLI, the Lambda functions and the end-to-end tests all
// start here, so that they run the same wiring.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/kafka-catchup/catchup/internal/awsapi"
	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore"
	"github.com/kafka-catchup/catchup/internal/checkpoint/filestore"
	cfg "github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/kafkago"
	"github.com/kafka-catchup/catchup/internal/plan"
	"github.com/kafka-catchup/catchup/internal/replicate"
)

// Options are what the configuration file does not say.
type Options struct {
	// Owner is the lease owner id of this run; default host-pid-time.
	Owner string
	// Store, if set, is used instead of the store the file names (and is
	// not closed by Close).
	Store checkpoint.Store
	// ReadOnly opens the store the file names for reading only: a file
	// store is then read without taking the pipeline's lock, so that
	// status and plan work while a run holds it (filestore.ReadOnly).
	ReadOnly bool
	// Clusters, if set, are used instead of dialing the clusters (and are
	// not closed by Close): a Lambda execution environment keeps its
	// connections (Connect) from one invocation to the next.
	Clusters *Clusters
	// Partitions, if set, restricts the run to them.
	Partitions []catchup.Partition
	Log        *slog.Logger
	Now        func() time.Time
	OnProgress func(records, bytes int64)
	OnPlan     func([]plan.Planned) // see replicate.Options.OnPlan
	// Margin is how long before the context's deadline copying stops
	// (replicate.Options.Margin); 0: none. The CLI's runs have no deadline;
	// the replicate Lambda function passes CATCHUP_DEADLINE_MARGIN.
	Margin time.Duration
	// Job, if set, makes the run a bounded backfill with its own checkpoint
	// namespace, "<pipeline>.job.<name>", so that it never moves the
	// pipeline's own checkpoints.
	Job *Job
	// AllowDuplicates is replicate.Options.AllowDuplicates: a partition
	// without a checkpoint whose target holds records it cannot account
	// for is copied from its start policy instead of failing closed.
	AllowDuplicates bool
}

// Job is a bounded backfill: the records whose timestamps fall in [From, To).
type Job struct {
	Name     string
	From, To time.Time // To zero: up to the end fixed at the start of each run
}

// Namespace returns the checkpoint namespace of a job of pipeline.
func (j *Job) Namespace(pipeline string) string { return pipeline + ".job." + j.Name }

// Pipeline is one configured pipeline, connected.
type Pipeline struct {
	Config *cfg.Pipeline
	Engine *replicate.Engine
	Source *kafkago.Source
	Target *kafkago.Target
	Store  checkpoint.Store

	ownStore, ownClusters bool
	job                   *Job
	log                   *slog.Logger // Options.Log; nil: none
}

// Open connects pipeline p of file f.
func Open(ctx context.Context, f *cfg.File, p *cfg.Pipeline, o Options) (*Pipeline, error) {
	start, err := p.StartPolicy()
	if err != nil {
		return nil, fmt.Errorf("pipeline %s: start: %w", p.Name, err)
	}
	pl := &Pipeline{Config: p, Store: o.Store, job: o.Job, log: o.Log}
	if pl.Store == nil {
		if pl.Store, err = openStore(ctx, f, o.ReadOnly); err != nil {
			return nil, err
		}
		pl.ownStore = true
	}
	cl := o.Clusters
	if cl == nil {
		if cl, err = Connect(p); err != nil {
			pl.Close()
			return nil, err
		}
		pl.ownClusters = true
	}
	pl.Source, pl.Target = cl.Source, cl.Target
	if o.Owner == "" {
		o.Owner = DefaultOwner()
	}
	eo := EngineSettings(p)
	pol := eo.Policy
	switch start.Kind {
	case cfg.StartLatest:
		pol.Start = plan.Latest
	case cfg.StartTimestamp:
		pol.Start = plan.Timestamp
	}
	if len(p.StartOffsets) > 0 {
		pol.StartOffsets = map[catchup.Partition]int64{}
		for topic, parts := range p.StartOffsets {
			for part, off := range parts {
				pol.StartOffsets[catchup.Partition{Topic: topic, Partition: part}] = off
			}
		}
	}
	namespace, startTime, stopTime := p.Name, start.Time, time.Time{}
	if o.Job != nil {
		if o.Job.Name == "" || o.Job.From.IsZero() {
			pl.Close()
			return nil, fmt.Errorf("pipeline %s: a job needs a name and a start time", p.Name)
		}
		namespace, startTime, stopTime = o.Job.Namespace(p.Name), o.Job.From, o.Job.To
		pol.Start, pol.StartOffsets = plan.Timestamp, nil
	}
	eo.Pipeline, eo.Owner = namespace, o.Owner
	eo.Source, eo.Target, eo.Store = pl.Source, pl.Target, pl.Store
	eo.Partitions, eo.Policy, eo.StartTime, eo.StopTime = o.Partitions, pol, startTime, stopTime
	eo.Margin, eo.Log, eo.Now, eo.OnProgress, eo.OnPlan = o.Margin, o.Log, o.Now, o.OnProgress, o.OnPlan
	eo.AllowDuplicates = o.AllowDuplicates
	pl.Engine, err = replicate.New(eo)
	if err != nil {
		pl.Close()
		return nil, err
	}
	return pl, nil
}

// EngineSettings returns the engine options that pipeline p's
// configuration sets, as they are (p's defaults filled in by config.Parse
// or File.SetDefaults; a zero is passed on, and means to the engine what
// it means in the file): what it copies (topics, target topic names,
// provenance, loop prevention, window limits, topic creation) and how
// (fetch size, parallelism, batch limits, retries, commit interval,
// leases). Open adds the clusters, the store, the start policy and the
// callbacks; bench/cmd/profile runs the same engine under the CPU profiler.
func EngineSettings(p *cfg.Pipeline) replicate.Options {
	loop := ""
	if p.LoopPreventionEnabled() {
		loop = p.Target.Name
	}
	return replicate.Options{
		Cluster:            p.Source.Name,
		Match:              p.Topics.Match,
		TargetTopic:        p.MapTopic,
		Policy:             plan.Policy{Pipeline: p.Name, ReadCommitted: p.Isolation == "read_committed", SkipGaps: p.OnGap == "skip", MaxRecords: p.Window.MaxRecords},
		LoopCluster:        loop,
		Provenance:         p.ProvenanceEnabled(),
		CommitInterval:     p.CommitInterval,
		Parallelism:        p.Parallelism,
		FetchBytes:         p.FetchBytes,
		LeaseTTL:           p.LeaseDuration,
		TakeoverSettle:     p.TakeoverSettle,
		ReplicationWait:    p.ReplicationWait,
		MaxBytes:           p.Window.MaxBytes,
		MaxDuration:        p.Window.MaxDuration,
		BatchRecords:       p.Producer.BatchRecords,
		Retries:            p.Producer.Retries,
		RetryBackoff:       p.Producer.RetryBackoff,
		CreateTopics:       p.CreateTopics,
		ReplicationFactor:  p.ReplicationFactor,
		ConfigSyncInterval: p.ConfigSyncInterval,
		SyncACLs:           p.SyncACLs,
		ACLSyncInterval:    p.ACLSyncInterval,
	}
}

// Close closes the connections and the store that Open opened.
func (p *Pipeline) Close() error {
	if p.ownClusters && p.Source != nil {
		p.Source.Close()
	}
	if p.ownClusters && p.Target != nil {
		p.Target.Close()
	}
	if p.ownStore && p.Store != nil {
		if err := p.Store.Close(); err != nil {
			// Callers defer Close and drop its error: said here, once
			// (a file store's journal not folded still holds every change).
			if p.log != nil {
				p.log.Error("checkpoint store not closed cleanly", "pipeline", p.Config.Name, "error", err)
			}
			return err
		}
	}
	return nil
}

// OpenStore opens the checkpoint store f names, for reading and writing;
// the caller closes it. The Lambda functions open theirs once per execution
// environment and pass it to every run (Options.Store).
func OpenStore(ctx context.Context, f *cfg.File) (checkpoint.Store, error) {
	return openStore(ctx, f, false)
}

// Checkpoints returns the checkpoints of pipeline in the store f names,
// read as status reads them (a file store without its lock, nothing
// written); none when the store does not exist yet: a file store's
// directory or a DynamoDB table not created.
func Checkpoints(ctx context.Context, f *cfg.File, pipeline string) ([]checkpoint.Checkpoint, error) {
	s, err := openStore(ctx, f, true)
	if err != nil {
		return nil, err
	}
	defer func() { _ = s.Close() }() // read only: nothing to lose
	cps, err := s.Load(ctx, pipeline)
	if rnf := (*types.ResourceNotFoundException)(nil); errors.As(err, &rnf) {
		return nil, nil
	}
	return cps, err
}

// openStore opens the checkpoint store f names: a file store for file://,
// DynamoDB (region, credentials and endpoint from the standard AWS
// configuration, including AWS_ENDPOINT_URL_DYNAMODB) for dynamodb://;
// for reading only with readOnly (see Options.ReadOnly).
func openStore(ctx context.Context, f *cfg.File, readOnly bool) (checkpoint.Store, error) {
	loc, err := f.StoreLocation()
	if err != nil {
		return nil, err
	}
	switch loc.Scheme {
	case "file":
		if readOnly {
			s, err := filestore.OpenReadOnly(loc.Path)
			if err != nil {
				return nil, fmt.Errorf("open store %s: %w", f.Store, err)
			}
			return s, nil
		}
		s, err := filestore.Open(loc.Path, nil)
		if err != nil {
			return nil, fmt.Errorf("open store %s: %w", f.Store, err)
		}
		return s, nil
	case "dynamodb":
		client, err := DynamoDB(ctx)
		if err != nil {
			return nil, err
		}
		return dynamostore.New(client, loc.Path), nil
	}
	return nil, fmt.Errorf("store %s: unknown scheme %q", f.Store, loc.Scheme)
}

// DynamoDB returns a DynamoDB client from the standard AWS configuration.
func DynamoDB(ctx context.Context) (*dynamodb.Client, error) {
	awsCfg, err := awsapi.Config(ctx)
	if err != nil {
		return nil, err
	}
	return dynamodb.NewFromConfig(awsCfg), nil
}

// DefaultOwner names this process as a lease owner: host, pid and start time.
func DefaultOwner() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown-host"
	}
	return host + "-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixMilli(), 36)
}
