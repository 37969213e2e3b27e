package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/segmentio/kafka-go"
	"github.com/spf13/cobra"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/kafkago"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/translate"
)

// statusNoCommit marks a partition the group has no committed offset on.
const statusNoCommit translate.Status = "no_commit"

func (a *app) translateCmd() *cobra.Command {
	var group string
	var apply bool
	cmd := &cobra.Command{
		Use:   "translate --pipeline P --group G [--apply]",
		Short: "Translate a consumer group's committed offsets from the source to the target",
		Long: `translate reads the offsets consumer group --group has committed on the source
cluster and prints, for every partition of the pipeline's topics it has
offsets on, the target offset to resume from: that of the first copy of a
source record at or after the committed offset, found through the provenance
headers by binary search over the target partition (about log2 of its length
fetches). If the group consumed everything that was copied, it is the offset
right after the last copy; if it consumed records not copied yet, the same,
and those records are delivered again once they are copied (the lag says how
many offsets).

--apply commits the offsets to the same group on the target, as an
administrator does (generation -1, no member), and only while the group has no
active member there: stop the consumers on the target first.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if group == "" {
				return usageError{errors.New("translate needs --group")}
			}
			f, err := a.load(cmd.Context())
			if err != nil {
				return err
			}
			pc, err := a.onePipeline(f, "translate")
			if err != nil {
				return err
			}
			if !pc.ProvenanceEnabled() {
				return usageError{fmt.Errorf("translate finds copies through the provenance header, which pipeline %s turns off", pc.Name)}
			}
			return a.translate(cmd.Context(), pc, group, apply)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&group, "group", "", "consumer group whose committed offsets to translate")
	fl.BoolVar(&apply, "apply", false, "commit the translated offsets to the group on the target (only while it has no active members)")
	a.addJSONFlag(fl, "print the translations as one JSON document (docs/json.md)")
	return cmd
}

// translation is the outcome of translate for one pipeline and group.
type translation struct {
	Pipeline   string          `json:"pipeline"`
	Group      string          `json:"group"`
	Partitions []translatedRow `json:"partitions"`
	// Unselected are topics the group has offsets on that the pipeline
	// does not copy.
	Unselected []string `json:"unselected_topics,omitempty"`
	Applied    bool     `json:"applied"`
	Committed  int      `json:"committed"` // offsets committed on the target by --apply
}

type translatedRow struct {
	Topic        string `json:"topic"`
	Partition    int32  `json:"partition"`
	Committed    *int64 `json:"committed"` // on the source; null: none
	TargetTopic  string `json:"target_topic"`
	TargetOffset *int64 `json:"target_offset"` // null: nothing to commit
	Status       string `json:"status"`
	SourceOffset *int64 `json:"source_offset,omitempty"` // of the copy at target_offset (exact)
	LastCopied   *int64 `json:"last_copied,omitempty"`   // source offset of the last copy (end, lagging)
	Lag          int64  `json:"lag"`
	Note         string `json:"note,omitempty"`
}

func (a *app) translate(ctx context.Context, pc *config.Pipeline, group string, apply bool) error {
	src, err := pipeline.ConnectReader(pc.Source, pc.Isolation)
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	defer src.Close()
	dst, err := pipeline.ConnectReader(pc.Target, "read_uncommitted")
	if err != nil {
		return fmt.Errorf("target: %w", err)
	}
	defer dst.Close()

	committed, err := src.Cluster().CommittedOffsets(ctx, group)
	if err != nil {
		return err
	}
	tr := &translation{Pipeline: pc.Name, Group: group}
	topics := map[string]bool{}
	for p := range committed {
		if pc.Topics.Match(p.Topic) {
			topics[p.Topic] = true
		} else if !slices.Contains(tr.Unselected, p.Topic) {
			tr.Unselected = append(tr.Unselected, p.Topic)
		}
	}
	slices.Sort(tr.Unselected)
	parts, err := src.Partitions(ctx, func(t string) bool { return topics[t] })
	if err != nil {
		return err
	}
	tr.Partitions = make([]translatedRow, len(parts))
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	sem := make(chan struct{}, 8)
	for i, p := range parts {
		tp := catchup.Partition{Topic: pc.MapTopic(p.Topic), Partition: p.Partition}
		c, ok := committed[p]
		if !ok {
			tr.Partitions[i] = translatedRow{Topic: p.Topic, Partition: p.Partition, TargetTopic: tp.Topic, Status: string(statusNoCommit),
				Note: "no committed offset: a consumer starts by its auto.offset.reset"}
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			pos, err := translate.Find(ctx, dst, p, tp, c, translate.Options{Cluster: pc.Source.Name})
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				return
			}
			tr.Partitions[i] = translatedRowOf(pos)
		})
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	if apply {
		if err := a.applyTranslation(ctx, pc, dst.Cluster(), tr); err != nil {
			return err
		}
	}
	if a.jsonOut {
		a.addJSON(tr)
		return nil
	}
	tr.print(a.out, pc.Target.Name)
	return nil
}

// translatedRowOf turns a position into an output row.
func translatedRowOf(pos translate.Position) translatedRow {
	r := translatedRow{Topic: pos.Source.Topic, Partition: pos.Source.Partition, Committed: int64Ptr(pos.Committed),
		TargetTopic: pos.Target.Topic, Status: string(pos.Status), Lag: pos.Lag}
	if pos.Offset >= 0 {
		r.TargetOffset = int64Ptr(pos.Offset)
	}
	switch pos.Status {
	case translate.StatusExact:
		r.SourceOffset = int64Ptr(pos.SourceOffset)
		if pos.SourceOffset > pos.Committed {
			r.Note = fmt.Sprintf("source offsets %d to %d have no copy (compacted away, transaction markers, or not copied); the next copy is of %d",
				pos.Committed, pos.SourceOffset-1, pos.SourceOffset)
		}
	case translate.StatusEnd:
		r.LastCopied = int64Ptr(pos.LastCopied)
		r.Note = "the group consumed everything copied"
	case translate.StatusLagging:
		r.LastCopied = int64Ptr(pos.LastCopied)
		r.Note = fmt.Sprintf("the copy lags: the group consumed source offsets %d to %d, not copied yet; they are delivered again once copied",
			pos.LastCopied+1, pos.Committed-1)
	case translate.StatusNotCopied:
		r.Note = "no copy of this partition in the target"
	}
	return r
}

func int64Ptr(v int64) *int64 { return &v }

// applyTranslation commits the translated offsets to the group on the
// target, if it has no active members there.
func (a *app) applyTranslation(ctx context.Context, pc *config.Pipeline, target *kafkago.Cluster, tr *translation) error {
	offs := map[catchup.Partition]int64{}
	for _, r := range tr.Partitions {
		if r.TargetOffset != nil {
			offs[catchup.Partition{Topic: r.TargetTopic, Partition: r.Partition}] = *r.TargetOffset
		}
	}
	if len(offs) == 0 {
		tr.Applied = true
		return nil
	}
	g, err := target.DescribeGroup(ctx, tr.Group)
	switch {
	case errors.Is(err, kafka.GroupIdNotFound):
		// A group of the new consumer protocol (KIP-848) on Kafka 4.x,
		// which DescribeGroups does not describe. Its coordinator
		// accepts a commit without a member epoch only while the group
		// is empty, so the commit below is refused if it is not.
	case err != nil:
		return err
	case g.Active():
		var who []string
		for _, m := range g.Members {
			who = append(who, fmt.Sprintf("%s (%s at %s)", m.ID, m.ClientID, m.Host))
		}
		if len(who) == 0 {
			who = append(who, "a rebalance is in progress")
		}
		members := fmt.Sprintf("%d active members", len(g.Members))
		if len(g.Members) == 1 {
			members = "1 active member"
		}
		return fmt.Errorf("group %s has %s on target cluster %q (state %s): %s; stop its consumers there "+
			"and run translate --apply again; nothing was committed", tr.Group, members, pc.Target.Name, g.State, strings.Join(who, ", "))
	}
	if err := target.CommitOffsets(ctx, tr.Group, offs); err != nil {
		return fmt.Errorf("%w (if the group has members on the target, stop them first)", err)
	}
	tr.Applied, tr.Committed = true, len(offs)
	return nil
}

func (tr *translation) print(w io.Writer, target string) {
	fmt.Fprintf(w, "pipeline %s, group %s\n", tr.Pipeline, tr.Group)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tCOMMITTED\tTARGET_TOPIC\tTARGET_OFFSET\tSTATUS\tNOTE")
	for _, r := range tr.Partitions {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", r.Topic, r.Partition, orDash(r.Committed), r.TargetTopic, orDash(r.TargetOffset), r.Status, r.Note)
	}
	tw.Flush()
	if len(tr.Unselected) > 0 {
		fmt.Fprintf(w, "not copied by this pipeline, so not translated: %s\n", strings.Join(tr.Unselected, ", "))
	}
	switch {
	case tr.Applied && tr.Committed > 0:
		fmt.Fprintf(w, "committed %d offsets for group %s on target cluster %s\n", tr.Committed, tr.Group, target)
	case tr.Applied:
		fmt.Fprintln(w, "nothing to commit")
	default:
		fmt.Fprintln(w, "nothing committed: run with --apply to commit the target offsets (with the group's consumers stopped on the target)")
	}
}

func orDash(v *int64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}
