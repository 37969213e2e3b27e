package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/pipeline"
)

func (a *app) resetCmd() *cobra.Command {
	var topic, to string
	var partition int32
	var yes bool
	cmd := &cobra.Command{
		Use:   "reset --pipeline P --topic T --to earliest|latest|OFFSET|TIMESTAMP",
		Short: "Move checkpoints deliberately, after a gap or a recreated topic",
		Long: `reset moves the checkpoints of a topic's partitions (or of one partition with
--partition) to the source's earliest offset, its latest offset, an offset, or
the first record at or after an RFC 3339 timestamp. It refuses a topic the
pipeline does not copy, partitions leased by a live run, and, with provenance, a position below the copies the
target already holds (they would be copied twice) unless --allow-duplicates.
It asks for confirmation unless --yes is given.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if a.pipeline == "" || topic == "" || to == "" {
				return usageError{errors.New("reset needs --pipeline, --topic and --to")}
			}
			// Before anything connects: bad flags are bad usage.
			target, err := parseResetTo(to)
			if err != nil {
				return err
			}
			one := cmd.Flags().Changed("partition")
			if one && partition < 0 {
				return usageError{fmt.Errorf("--partition %d: a partition number is 0 or more", partition)}
			}
			f, err := a.load(cmd.Context())
			if err != nil {
				return err
			}
			pc, err := f.Pipeline(a.pipeline)
			if err != nil {
				return usageError{err}
			}
			if !pc.Topics.Match(topic) {
				// A checkpoint no run of the pipeline reads, and status does
				// not show: most likely a mistyped or mixed-up topic.
				sel := fmt.Sprintf("include %q", pc.Topics.Include)
				if len(pc.Topics.Exclude) > 0 {
					sel += fmt.Sprintf(", exclude %q", pc.Topics.Exclude)
				}
				return usageError{fmt.Errorf("--topic %s: pipeline %s does not copy this topic (its topics: %s); "+
					"add it to the pipeline's topics first, or name the pipeline that copies it", topic, pc.Name, sel)}
			}
			p, err := pipeline.Open(ctx, f, pc, pipeline.Options{Log: a.logger()})
			if err != nil {
				return err
			}
			defer p.Close()
			parts, err := p.Source.Partitions(ctx, func(t string) bool { return t == topic })
			if err != nil {
				return err
			}
			if len(parts) == 0 {
				return usageError{fmt.Errorf("--topic %s: the source cluster %s has no such topic", topic, pc.Source.Name)}
			}
			if one {
				all := len(parts)
				parts = slicesFilter(parts, func(q catchup.Partition) bool { return q.Partition == partition })
				if len(parts) == 0 {
					return usageError{fmt.Errorf("--partition %d: topic %s has partitions 0 to %d on the source", partition, topic, all-1)}
				}
			}
			targets, err := resetOffsets(cmd, p, parts, target)
			if err != nil {
				return err
			}
			if err := a.refuseDuplicates(ctx, p, parts, targets); err != nil {
				return err
			}
			// With --json the listing and the question go to stderr; the
			// document on stdout says what was reset.
			say := a.out
			if a.jsonOut {
				say = a.err
			}
			fmt.Fprintf(say, "reset pipeline %s:\n", pc.Name)
			for _, q := range parts {
				fmt.Fprintf(say, "  %s -> %d\n", q, targets[q])
			}
			fmt.Fprintln(say, "note: a reset forgets where the target ended, so records of these partitions already in the\n"+
				"target are copied again from the new position (after a recreated source topic, that is what you want)")
			if !yes {
				fmt.Fprint(say, "apply? [y/N] ")
				line, _ := bufio.NewReader(a.in).ReadString('\n')
				if ans := strings.ToLower(strings.TrimSpace(line)); ans != "y" && ans != "yes" {
					return usageError{errors.New("reset not confirmed; nothing changed (pass --yes to skip the question)")}
				}
			}
			doc := resetJSON{Pipeline: pc.Name, Topic: topic, To: to, Partitions: []resetPartitionJSON{}}
			for _, q := range parts {
				if err := p.Store.Reset(ctx, pc.Name, q, targets[q]); err != nil {
					if a.jsonOut {
						a.addJSON(doc) // the partitions reset before the error
					}
					return fmt.Errorf("reset %s: %w", q, err)
				}
				doc.Partitions = append(doc.Partitions, resetPartitionJSON{Topic: q.Topic, Partition: q.Partition, Next: targets[q]})
			}
			if a.jsonOut {
				a.addJSON(doc)
				return nil
			}
			fmt.Fprintf(a.out, "reset %d partitions\n", len(parts))
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&topic, "topic", "", "source topic")
	fl.Int32Var(&partition, "partition", 0, "only this partition")
	fl.StringVar(&to, "to", "", "earliest, latest, an offset, or an RFC 3339 timestamp")
	fl.BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	fl.BoolVar(&a.allowDuplicates, "allow-duplicates", false, "reset below the copies the target already holds: the records between are copied twice")
	a.addJSONFlag(fl, "print what was reset as one JSON document (docs/json.md); the listing and question go to stderr")
	return cmd
}

// resetTo is reset's --to: earliest or latest (end), else an offset or a
// time (at, as verify's --from and --to).
type resetTo struct {
	end string // "earliest" or "latest", or empty
	at  rangeBound
}

// parseResetTo reads --to.
func parseResetTo(to string) (resetTo, error) {
	if to == "earliest" || to == "latest" {
		return resetTo{end: to}, nil
	}
	if b, err := parseBound("--to", to); err == nil && b.set {
		return resetTo{at: b}, nil
	}
	return resetTo{}, usageError{fmt.Errorf("--to %q: use earliest, latest, an offset (0 or more), or an RFC 3339 timestamp", to)}
}

// resetOffsets resolves to for each partition.
func resetOffsets(cmd *cobra.Command, p *pipeline.Pipeline, parts []catchup.Partition, to resetTo) (map[catchup.Partition]int64, error) {
	ctx := cmd.Context()
	if to.end == "" {
		return bound(ctx, p, parts, to.at)
	}
	marks, err := p.Source.ListOffsets(ctx, parts)
	if err != nil {
		return nil, err
	}
	out := map[catchup.Partition]int64{}
	for _, m := range marks {
		out[m.Partition] = m.LogStart
		if to.end == "latest" {
			out[m.Partition] = m.HighWatermark
		}
	}
	return out, nil
}

// refuseDuplicates returns a usage error naming every partition of parts
// whose reset position in targets is below the source offset after the last
// copy its target partition holds (replicate.Engine.TargetCopied), unless
// --allow-duplicates: the next run would copy the records in between a
// second time.
func (a *app) refuseDuplicates(ctx context.Context, p *pipeline.Pipeline, parts []catchup.Partition, targets map[catchup.Partition]int64) error {
	if a.allowDuplicates {
		return nil
	}
	copied, err := p.Engine.TargetCopied(ctx, parts)
	if err != nil {
		return fmt.Errorf("read the target back: %w", err)
	}
	var errs []error
	for _, q := range parts {
		if end, ok := copied[q]; ok && targets[q] < end {
			errs = append(errs, fmt.Errorf("%s: the target already holds copies up to source offset %d; a reset to %d would copy "+
				"%d records twice. Reset to %d or above (--partition %d --to %d), or pass --allow-duplicates to copy them again",
				q, end-1, targets[q], end-targets[q], end, q.Partition, end))
		}
	}
	if len(errs) > 0 {
		return usageError{fmt.Errorf("reset refused; nothing changed:\n%w", errors.Join(errs...))}
	}
	return nil
}

func slicesFilter[T any](s []T, keep func(T) bool) []T {
	var out []T
	for _, v := range s {
		if keep(v) {
			out = append(out, v)
		}
	}
	return out
}

// resetJSON is the pipeline entry of catchup reset --json.
type resetJSON struct {
	Pipeline   string               `json:"pipeline"`
	Topic      string               `json:"topic"`
	To         string               `json:"to"` // --to as given
	Partitions []resetPartitionJSON `json:"partitions"`
}

// resetPartitionJSON is one partition reset.
type resetPartitionJSON struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Next      int64  `json:"next"` // the checkpoint's next offset now
}
