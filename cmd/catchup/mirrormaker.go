package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kafka-catchup/catchup/internal/mirrormaker"
)

// mirrorMakerCmd is MirrorMaker's command line, converted: the same flags
// and property files, run as catchup pipelines.
func (a *app) mirrorMakerCmd() *cobra.Command {
	var (
		consumers            []string
		producer             string
		include, whitelist   string
		fl                   mirrormaker.Flags
		numStreams, numProds int
		commitMS             int64
		printConfig          bool
		every                time.Duration
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
nothing; otherwise it copies like catchup run: once, up to the source end
fixed at the start, then it exits (MirrorMaker never ended). Give --every
DURATION to keep copying until SIGTERM, as MirrorMaker did. Passwords found in
sasl.jaas.config are never printed: the YAML names an environment variable.`,
		Example: `  catchup mirrormaker --consumer.config sourceCluster1Consumer.config \
      --consumer.config sourceCluster2Consumer.config --num.streams 2 \
      --producer.config targetClusterProducer.config --whitelist=".*" --print-config > pipelines.yaml`,
		// Parsed here, after normalising what a web page's typography did
		// to the dashes and quotes of a copied command line.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			args, notes, err := normalizeMMArgs(args)
			for _, n := range notes {
				fmt.Fprintf(a.err, "catchup mirrormaker: %s\n", n)
			}
			if err != nil {
				return usageError{err}
			}
			cmd.InheritedFlags() // merges the root's persistent flags into cmd.Flags()
			if err := cmd.Flags().Parse(args); err != nil {
				return usageError{fmt.Errorf("%w; see catchup mirrormaker --help", err)}
			}
			flags := cmd.Flags()
			if help, _ := flags.GetBool("help"); help {
				return cmd.Help()
			}
			if rest := flags.Args(); len(rest) > 0 {
				return usageError{fmt.Errorf("unexpected argument %q: mirrormaker takes only flags "+
					"(--consumer.config FILE, --producer.config FILE, --whitelist REGEX, ...); see catchup mirrormaker --help", rest[0])}
			}
			switch {
			case flags.Changed("whitelist") && flags.Changed("include"):
				return usageError{errors.New("--whitelist and --include are the same flag: give one")}
			case flags.Changed("include"):
				fl.Whitelist, fl.WhitelistFlag = include, "--include"
			default:
				fl.Whitelist = whitelist
			}
			// Given as strings so that mirrormaker.Convert explains a bad value
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
			if every < 0 {
				return usageError{fmt.Errorf("--every %v: give a positive duration such as 30s", every)}
			}
			return a.mirrorMaker(cmd, consumers, producer, fl, printConfig, every)
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
	f.BoolVar(&a.allowDuplicates, "allow-duplicates", false, "copy a partition the store holds no checkpoint of from the start even though its target already holds records (MirrorMaker's copies carry no provenance; docs/lost-store.md): they may be copied twice")
	f.BoolVar(&fl.CreateTopics, "create-topics", false, "create missing target topics (create_topics: true) with the source's partition count; off by default")
	f.BoolVar(&printConfig, "print-config", false, "print the equivalent catchup YAML on stdout and run nothing")
	a.addJSONFlag(f, "print the run reports as one JSON document (docs/json.md)")
	addOpsFlags(cmd, &a.ops)
	f.DurationVar(&every, "every", 0, "keep copying as MirrorMaker did: run again every DURATION until SIGTERM or SIGINT (exit 0); without it, one run up to the end fixed at its start")
	return cmd
}

// mirrorMaker converts the MirrorMaker command line, prints the notices on
// stderr, and prints the YAML or runs the pipelines.
func (a *app) mirrorMaker(cmd *cobra.Command, consumerPaths []string, producerPath string, fl mirrormaker.Flags, printConfig bool, every time.Duration) error {
	if printConfig {
		a.jsonOut = false // stdout holds the YAML, nothing else
	}
	read := func(path string) (mirrormaker.File, error) {
		data, err := os.ReadFile(path)
		if err != nil {
			return mirrormaker.File{}, usageError{err} // *fs.PathError names the file
		}
		return mirrormaker.File{Name: path, Data: data}, nil
	}
	var consumers []mirrormaker.File
	for _, p := range consumerPaths {
		f, err := read(p)
		if err != nil {
			return err
		}
		consumers = append(consumers, f)
	}
	var producer mirrormaker.File
	if producerPath != "" {
		var err error
		if producer, err = read(producerPath); err != nil {
			return err
		}
	}

	m, err := mirrormaker.Convert(consumers, producer, fl)
	return a.runMigration(cmd, "catchup mirrormaker", "MirrorMaker", m, err, printConfig, every)
}

// runMigration prints the notices of a converted MirrorMaker configuration
// on stderr, then prints its YAML (printConfig) or runs its pipelines.
func (a *app) runMigration(cmd *cobra.Command, prog, what string, m *mirrormaker.Migration, err error, printConfig bool, every time.Duration) error {
	for _, n := range m.Notices {
		fmt.Fprintln(a.err, n)
	}
	var mmErr *mirrormaker.Error
	if errors.As(err, &mmErr) {
		if printConfig && m.YAML != nil {
			if _, werr := a.out.Write(m.YAML); werr != nil {
				return werr
			}
		}
		return usageError{fmt.Errorf("the %s configuration cannot be converted: %d problems, listed above", what, len(mmErr.Problems))}
	}
	if err != nil {
		return usageError{err}
	}
	if printConfig {
		_, err := a.out.Write(m.YAML)
		return err
	}

	if err := exportPasswords(m); err != nil {
		return err
	}
	ps, err := a.pipelines(m.File)
	if err != nil {
		return err
	}
	if err := a.ops.start(cmd.Context(), every, a.logger()); err != nil {
		return err
	}
	if every > 0 {
		return a.runEvery(cmd.Context(), cmd.Name(), m.File, ps, every)
	}
	fmt.Fprintf(a.err, "%s: copying once, up to the source end fixed now, then exiting; "+
		"%s ran until stopped: give --every 10s (any duration) to keep copying until SIGTERM\n", prog, what)
	return a.runOnce(cmd.Context(), m.File, ps)
}

// exportPasswords hands the passwords the MirrorMaker files held in plain
// text to the pipelines through the variables the YAML names, unless set.
func exportPasswords(m *mirrormaker.Migration) error {
	for env, pw := range m.Passwords {
		if _, ok := os.LookupEnv(env); !ok {
			if err := os.Setenv(env, pw.Reveal()); err != nil {
				return fmt.Errorf("set %s: %w", env, err)
			}
		}
	}
	return nil
}

// Typographic characters that word processors and web pages put in place of
// the ASCII ones of a command line.
const (
	mmDashes = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212" // hyphen, non-breaking hyphen, figure dash, en dash, em dash, bar, minus
	mmQuotes = "\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f\u00ab\u00bb"
)

// normalizeMMArgs undoes what copying a MirrorMaker command line from a web
// page does to it: it drops a leading "kafka-run-class.sh
// kafka.tools.MirrorMaker" (or kafka-mirror-maker.sh), reads a typographic
// dash that starts an argument as "--", and removes typographic quotes
// around a value (which the shell, unlike ASCII quotes, leaves in place).
// Each change is described in a note. A typographic character left
// anywhere else is refused, with the fix.
func normalizeMMArgs(args []string) (out, notes []string, err error) {
	launcher := func(arg string) bool {
		return strings.TrimSuffix(filepath.Base(arg), ".sh") == "kafka-run-class"
	}
	var kept []string
	for i := 0; i < len(args); i++ {
		switch {
		case launcher(args[i]) && i+1 < len(args) && args[i+1] == "kafka.tools.MirrorMaker":
			notes = append(notes, fmt.Sprintf("ignored %q %q: catchup mirrormaker stands for them", args[i], args[i+1]))
			i++
		case strings.TrimSuffix(filepath.Base(args[i]), ".sh") == "kafka-mirror-maker":
			notes = append(notes, fmt.Sprintf("ignored %q: catchup mirrormaker stands for it", args[i]))
		default:
			kept = append(kept, args[i])
		}
	}
	args = kept
	for _, arg := range args {
		fixed := arg
		if trimmed := strings.TrimLeft(fixed, mmDashes+"-"); trimmed != fixed && strings.ContainsAny(fixed[:len(fixed)-len(trimmed)], mmDashes) {
			fixed = "--" + trimmed
		}
		name, value, hasValue := strings.Cut(fixed, "=")
		if !strings.HasPrefix(fixed, "-") {
			name, value, hasValue = "", fixed, true
		}
		if hasValue {
			if v := strings.Trim(value, mmQuotes); v != value {
				value = v
			}
			if name != "" {
				fixed = name + "=" + value
			} else {
				fixed = value
			}
		}
		if strings.ContainsAny(fixed, mmDashes+mmQuotes) {
			return nil, notes, fmt.Errorf("argument %q holds typographic dashes or quotes, as a web page or word processor writes them: "+
				"retype them as ASCII - and \" (for example --whitelist='.*')", arg)
		}
		if fixed != arg {
			notes = append(notes, fmt.Sprintf("read %q as %q: typographic dashes and quotes, as pasted from a web page, replaced by ASCII ones", arg, fixed))
		}
		out = append(out, fixed)
	}
	return out, notes, nil
}
