package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/kafka-catchup/catchup/internal/mirrormaker"
)

// mirrorMaker2Cmd converts a MirrorMaker 2 configuration and runs it as
// catchup pipelines, one per enabled flow.
func (a *app) mirrorMaker2Cmd() *cobra.Command {
	var (
		fl          mirrormaker.Flags
		printConfig bool
		every       time.Duration
		to          takeOver
	)
	cmd := &cobra.Command{
		Use:   "mirrormaker2 FILE",
		Short: "Run a MirrorMaker 2 configuration (dedicated .properties, Connect JSON or Strimzi YAML) as catchup pipelines",
		Long: `mirrormaker2 reads a MirrorMaker 2 configuration: the .properties file of
connect-mirror-maker.sh, the JSON configuration of a MirrorSourceConnector
on Kafka Connect, or a Strimzi KafkaMirrorMaker2 resource. Each enabled flow
(SOURCE->TARGET) becomes a pipeline named SOURCE-to-TARGET whose clusters are
named after the aliases. Every key is explained on stderr, FILE:LINE first:
mapped, not applicable (and what catchup does instead), or refused (a Java
class catchup cannot run, a setting that loses records) with the fix; exit
status 2 when the configuration cannot run.

With --print-config it prints the equivalent catchup YAML on stdout and runs
nothing; otherwise it copies like catchup run: once, up to the source end
fixed at the start. Give --every DURATION to keep copying until SIGTERM.

--take-over starts each partition one past the last record MirrorMaker 2
copied, read from its Connect offsets topic (mm2-offsets.SOURCE.internal in
dedicated mode, mirrormaker2-cluster-offsets under Strimzi, --offsets-topic
for Connect); stop MirrorMaker 2 first: a heartbeat it writes while the
take-over watches refuses the flow, and a partition it is still writing, or
whose offset does not match the target's last record, is refused by name
(docs/migrating-from-mirrormaker2.md).`,
		Example: `  catchup mirrormaker2 connect-mirror-maker.properties --print-config > pipelines.yaml
  catchup mirrormaker2 connect-mirror-maker.properties --take-over --print-config > pipelines.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if every < 0 {
				return usageError{fmt.Errorf("--every %v: give a positive duration such as 30s", every)}
			}
			if printConfig {
				a.jsonOut = false // stdout holds the YAML, nothing else
			}
			data, err := os.ReadFile(args[0])
			if err != nil {
				return usageError{err} // *fs.PathError names the file
			}
			m, err := mirrormaker.ConvertMM2(mirrormaker.File{Name: args[0], Data: data}, fl)
			if err == nil && to.enabled {
				if err := exportPasswords(m); err != nil {
					return err
				}
				to.file = args[0]
				if err := a.takeOver(cmd.Context(), m, to); err != nil {
					for _, n := range m.Notices {
						fmt.Fprintln(a.err, n)
					}
					return err
				}
			}
			return a.runMigration(cmd, "catchup mirrormaker2", "MirrorMaker 2", m, err, printConfig, every)
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.Store, "store", "file://.catchup", "checkpoint store: file://DIR or dynamodb://TABLE")
	f.BoolVar(&fl.AllowDataLoss, "allow-data-loss", false, "accept settings that can lose records (acks=0) instead of refusing them")
	f.BoolVar(&printConfig, "print-config", false, "print the equivalent catchup YAML on stdout and run nothing")
	f.BoolVar(&a.allowDuplicates, "allow-duplicates", false, "copy a partition the store holds no checkpoint of from its start even though its target already holds records (MirrorMaker 2's copies carry no provenance; --take-over is the way without duplicates; docs/lost-store.md): they may be copied twice")
	a.addJSONFlag(f, "print the run reports as one JSON document (docs/json.md)")
	addOpsFlags(cmd, &a.ops)
	f.DurationVar(&every, "every", 0, "keep copying as MirrorMaker 2 did: run again every DURATION until SIGTERM or SIGINT (exit 0)")
	f.BoolVar(&to.enabled, "take-over", false, "start each partition one past the last record MirrorMaker 2 copied (stop it first)")
	f.StringVar(&to.topic, "offsets-topic", "", "MirrorMaker 2's Connect offsets topic (default: mm2-offsets.SOURCE.internal, or mirrormaker2-cluster-offsets under Strimzi)")
	f.DurationVar(&to.settle, "take-over-settle", 5*time.Second, "how long --take-over watches MirrorMaker 2's offsets, heartbeats and the target's ends for a writer still running (at least two heartbeat intervals)")
	return cmd
}
