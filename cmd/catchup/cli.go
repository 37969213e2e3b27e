package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/pipeline"
	"github.com/kafka-catchup/catchup/internal/version"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// usageError marks an error in the command line or the configuration.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// errNotDone is returned by commands whose work is not finished, after they
// printed why.
var errNotDone = errors.New("not done")

// app holds what every command shares.
type app struct {
	in       io.Reader
	out, err io.Writer

	configPath string
	pipeline   string
	owner      string
	// allowDuplicates is --allow-duplicates of run and reset.
	allowDuplicates bool
	verbose         bool
	jsonOut         bool   // the command's --json: print one jsonDoc at the end
	jsonStyle       string // --json=STYLE: jsonAuto, jsonCompact or jsonPretty
	logFormat       string // --log-format
	logLevel        string // --log-level
	ops             ops    // run's and mirrormaker's metrics and health
	shard           shard  // run's --shards and --shard-index

	jsonPipelines []any // the entries of the --json document, one per pipeline
	// jsonStreamed: continuous mode printed a document per run already;
	// the end prints one more only for an error.
	jsonStreamed bool

	// term is the error stream when it is a terminal, nil otherwise (made
	// by isTerminal); forceTerminal makes tests take err for one.
	term          *terminal
	forceTerminal bool
}

// run executes the command line args and returns the exit code.
func run(ctx context.Context, args []string, in io.Reader, out, errOut io.Writer) int {
	a := &app{in: in, out: out, err: errOut}
	root := a.root()
	root.SetArgs(args)
	root.SetIn(in)
	root.SetOut(out)
	root.SetErr(errOut)
	cmd, err := root.ExecuteContextC(ctx)
	if a.jsonOut && cmd != nil && (!a.jsonStreamed || err != nil) {
		if perr := a.printJSON(a.jsonDocument(cmd.Name(), err)); perr != nil && err == nil {
			err = fmt.Errorf("print JSON: %w", perr)
		}
	}
	var ue usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errNotDone):
		return exitFailure
	case errors.As(err, &ue) || isCobraUsage(err):
		fmt.Fprintf(errOut, "catchup: %v\n", err)
		return exitUsage
	default:
		fmt.Fprintf(errOut, "catchup: %v\n", err)
		return exitFailure
	}
}

// isCobraUsage recognises cobra's own flag and argument errors.
func isCobraUsage(err error) bool {
	var fe interface{ Flag() string }
	return errors.As(err, &fe) || errors.Is(err, errUnknownCommand)
}

var errUnknownCommand = errors.New("unknown command")

func (a *app) root() *cobra.Command {
	root := &cobra.Command{
		Use:   "catchup",
		Short: "Copy bounded windows of Kafka topics between clusters, exactly resumable",
		Long: `catchup copies records from a source Kafka cluster to a target cluster in
bounded windows: each run fixes, per partition, an offset range [from, to),
copies it with acks and retries, and commits a checkpoint so that the next
run resumes exactly where the last acknowledged write ended.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				hint := "see catchup --help"
				if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
					hint = fmt.Sprintf("did you mean %q?", s[0])
				}
				return fmt.Errorf("%w %q for catchup; %s", errUnknownCommand, args[0], hint)
			}
			return nil
		},
		RunE:    func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		Version: version.Get().String(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SuggestionsMinimumDistance = 2 // cobra's default, which SuggestionsFor does not fill in
	pf := root.PersistentFlags()
	pf.StringVarP(&a.configPath, "config", "c", "pipelines.yaml", "pipeline configuration file")
	pf.StringVarP(&a.pipeline, "pipeline", "p", "", "pipeline name (default: every pipeline, or the only one)")
	pf.StringVar(&a.owner, "owner", os.Getenv("CATCHUP_OWNER"),
		"lease owner id (env CATCHUP_OWNER; default host-pid-time); a restarted run with the same id takes its own leases back at once. Two live processes must never share one")
	pf.BoolVarP(&a.verbose, "verbose", "v", false, "log every window and retry")
	pf.StringVar(&a.logFormat, "log-format", logAuto, "logs on stderr: text (logfmt), json (one object per line) or auto: json unless stderr is a terminal")
	pf.StringVar(&a.logLevel, "log-level", "", "debug, info, warn or error (default: warn on a terminal, where a progress bar shows the rest, unless --verbose; info elsewhere)")
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return a.checkOutputFlags() }
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(a.runCmd(), a.planCmd(), a.backfillCmd(), a.translateCmd(), a.statusCmd(), a.resetCmd(), a.verifyCmd(), a.initStoreCmd(), a.demoCmd(), a.mirrorMakerCmd(), a.mirrorMaker2Cmd(), a.versionCmd(), a.docsCmd())
	for _, c := range root.Commands() {
		usageArgs(c)
	}
	return root
}

// usageArgs makes the argument errors of c (cobra.NoArgs: `catchup status
// extra`) usage errors, which exit 2 as docs/commands.md's table says.
func usageArgs(c *cobra.Command) {
	if args := c.Args; args != nil {
		c.Args = func(cmd *cobra.Command, a []string) error {
			if err := args(cmd, a); err != nil {
				return usageError{err}
			}
			return nil
		}
	}
}

// load reads the configuration, its errors being usage errors, and fetches
// the passwords it keeps in AWS Secrets Manager.
func (a *app) load(ctx context.Context) (*config.File, error) {
	f, err := config.Load(a.configPath)
	if err != nil {
		return nil, usageError{err}
	}
	if err := pipeline.ResolveSecrets(ctx, f); err != nil {
		return nil, err
	}
	// An unset password_env is a usage error (exit 2) before anything is
	// copied, not a failed connection later.
	if err := f.CheckPasswords(); err != nil {
		return nil, usageError{err}
	}
	return f, nil
}

// pipelines returns the pipelines selected by --pipeline: the one named, or
// all of them.
func (a *app) pipelines(f *config.File) ([]*config.Pipeline, error) {
	if a.pipeline != "" {
		p, err := f.Pipeline(a.pipeline)
		if err != nil {
			return nil, usageError{err}
		}
		return []*config.Pipeline{p}, nil
	}
	ps := make([]*config.Pipeline, len(f.Pipelines))
	for i := range f.Pipelines {
		ps[i] = &f.Pipelines[i]
	}
	return ps, nil
}

// logger logs to the error stream (above the progress bar on a terminal),
// as --log-format and --log-level say.
func (a *app) logger() *slog.Logger {
	w := a.err
	if a.isTerminal() {
		w = a.term // log lines go above the progress bar
	}
	return slog.New(a.logHandler(w))
}

// isTerminal reports whether the error stream is a terminal.
func (a *app) isTerminal() bool {
	if a.term != nil {
		return true
	}
	f, ok := a.err.(*os.File)
	if !a.forceTerminal && (!ok || !term.IsTerminal(int(f.Fd()))) {
		return false
	}
	a.term = &terminal{w: a.err}
	return true
}
