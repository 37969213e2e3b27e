package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/kafka-catchup/catchup/internal/config"
)

// mirrorMakerCmd is MirrorMaker's command line, converted: the same flags
// and property files, run as catchup pipelines.
func (a *app) mirrorMakerCmd() *cobra.Command {
	var (
		consumers            []string
		producer             string
		include, whitelist   string
		fl                   config.MMFlags
		numStreams, numProds int
		commitMS             int64
		printConfig          bool
	)
	cmd := &cobra.Command{
		Use:   "mirrormaker --consumer.config FILE [--consumer.config FILE...] --producer.config FILE --whitelist REGEX [flags]",
		Short: "Run a MirrorMaker command line (its flags and property files) as catchup pipelines",
		Long: `mirrormaker accepts the command line of Kafka's MirrorMaker (kafka.tools.MirrorMaker):
one pipeline per --consumer.config, named after its group.id (the checkpoint
namespace), all copying into the cluster of --producer.config. Every property
and flag is explained on stderr: mapped, obsolete, not applicable (and why),
or unknown (with the nearest known key). Settings that can lose records
(acks=0, dropping records when a queue is full or a send fails) are refused
unless --allow-data-loss is given.

With --print-config it prints the equivalent catchup YAML on stdout and runs
nothing; otherwise it copies like catchup run. Passwords found in
sasl.jaas.config are never printed: the YAML names an environment variable.`,
		Example: `  catchup mirrormaker --consumer.config sourceCluster1Consumer.config \
      --consumer.config sourceCluster2Consumer.config --num.streams 2 \
      --producer.config targetClusterProducer.config --whitelist=".*" --print-config > pipelines.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			flags := cmd.Flags()
			switch {
			case flags.Changed("whitelist") && flags.Changed("include"):
				return usageError{errors.New("--whitelist and --include are the same flag: give one")}
			case flags.Changed("include"):
				fl.Whitelist, fl.WhitelistFlag = include, "--include"
			default:
				fl.Whitelist = whitelist
			}
			// Given as strings so that FromMirrorMaker explains a bad value
			// like any other setting.
			if flags.Changed("num.streams") {
				fl.NumStreams = fmt.Sprint(numStreams)
			}
			if flags.Changed("num.producers") {
				fl.NumProducers = fmt.Sprint(numProds)
			}
			if flags.Changed("offset.commit.interval.ms") {
				fl.OffsetCommitIntervalMS = fmt.Sprint(commitMS)
			}
			return a.mirrorMaker(cmd, consumers, producer, fl, printConfig)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&consumers, "consumer.config", nil, "consumer property file of a source cluster (repeatable: one pipeline each)")
	f.StringVar(&producer, "producer.config", "", "producer property file of the target cluster")
	f.StringVar(&whitelist, "whitelist", "", "topics to copy: a regular expression or a comma-separated list")
	f.StringVar(&include, "include", "", "the same as --whitelist")
	f.StringVar(&fl.Blacklist, "blacklist", "", "topics not to copy: a regular expression or a comma-separated list")
	f.IntVar(&numStreams, "num.streams", 0, "becomes parallelism: partitions copied at once per pipeline")
	f.IntVar(&numProds, "num.producers", 0, "becomes parallelism, like --num.streams")
	f.StringVar(&fl.AbortOnSendFailure, "abort.on.send.failure", "", "true (catchup's behaviour) or false (refused: it skips records)")
	f.Int64Var(&commitMS, "offset.commit.interval.ms", 0, "becomes commit_interval")
	f.StringVar(&fl.MessageHandler, "message.handler", "", "not supported: catchup copies records unchanged")
	f.StringVar(&fl.MessageHandlerArgs, "message.handler.args", "", "the arguments of --message.handler")
	f.StringVar(&fl.RebalanceListener, "consumer.rebalance.listener", "", "not applicable: catchup leases partitions")
	f.StringVar(&fl.RebalanceListenerArgs, "rebalance.listener.args", "", "the arguments of --consumer.rebalance.listener")
	f.BoolVar(&fl.NewConsumer, "new.consumer", false, "accepted; catchup always reads from bootstrap.servers")
	f.StringVar(&fl.Store, "store", "file://.catchup", "checkpoint store: file://DIR or dynamodb://TABLE")
	f.BoolVar(&fl.AllowDataLoss, "allow-data-loss", false, "accept settings that can lose records (acks=0) instead of refusing them")
	f.BoolVar(&printConfig, "print-config", false, "print the equivalent catchup YAML on stdout and run nothing")
	f.BoolVar(&a.jsonOut, "json", false, "print the run reports as JSON")
	return cmd
}

// mirrorMaker converts the MirrorMaker command line, prints the notices on
// stderr, and prints the YAML or runs the pipelines.
func (a *app) mirrorMaker(cmd *cobra.Command, consumerPaths []string, producerPath string, fl config.MMFlags, printConfig bool) error {
	read := func(path string) (config.MMFile, error) {
		data, err := os.ReadFile(path)
		if err != nil {
			return config.MMFile{}, usageError{err} // *fs.PathError names the file
		}
		return config.MMFile{Name: path, Data: data}, nil
	}
	var consumers []config.MMFile
	for _, p := range consumerPaths {
		f, err := read(p)
		if err != nil {
			return err
		}
		consumers = append(consumers, f)
	}
	var producer config.MMFile
	if producerPath != "" {
		var err error
		if producer, err = read(producerPath); err != nil {
			return err
		}
	}

	m, err := config.FromMirrorMaker(consumers, producer, fl)
	for _, n := range m.Notices {
		fmt.Fprintln(a.err, n)
	}
	var mmErr *config.MirrorMakerError
	if errors.As(err, &mmErr) {
		return usageError{fmt.Errorf("the MirrorMaker configuration cannot be converted: %d problems, listed above", len(mmErr.Problems))}
	}
	if err != nil {
		return usageError{err}
	}
	if printConfig {
		_, err := a.out.Write(m.YAML)
		return err
	}

	// The property files held the passwords in plain text; hand them to
	// the pipelines through the variables the YAML names, unless set.
	for env, pw := range m.Passwords {
		if _, ok := os.LookupEnv(env); !ok {
			if err := os.Setenv(env, pw.Reveal()); err != nil {
				return fmt.Errorf("set %s: %w", env, err)
			}
		}
	}
	ps, err := a.pipelines(m.File)
	if err != nil {
		return err
	}
	done := true
	for _, p := range ps {
		ok, err := a.runPipeline(cmd.Context(), m.File, p)
		if err != nil {
			return fmt.Errorf("pipeline %s: %w", p.Name, err)
		}
		done = done && ok
	}
	if !done {
		return errNotDone
	}
	return nil
}
