package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"golang.org/x/term"
)

// Log formats (--log-format).
const (
	logAuto = "auto" // JSON unless stderr is a terminal
	logText = "text" // logfmt, slog's TextHandler
	logJSON = "json" // one JSON object per line, slog's JSONHandler
)

// JSON styles (--json=STYLE).
const (
	jsonAuto    = "auto"    // pretty on a terminal, one line per document elsewhere
	jsonCompact = "compact" // one line per document
	jsonPretty  = "pretty"  // indented
)

// logLevels are the values of --log-level.
var logLevels = map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}

// checkOutputFlags returns a usage error for a bad --log-format or
// --log-level.
func (a *app) checkOutputFlags() error {
	switch a.logFormat {
	case logAuto, logText, logJSON:
	default:
		return usageError{fmt.Errorf("--log-format %q: give text, json or auto (json unless stderr is a terminal)", a.logFormat)}
	}
	if _, ok := logLevels[a.logLevel]; !ok && a.logLevel != "" {
		return usageError{fmt.Errorf("--log-level %q: give debug, info, warn or error", a.logLevel)}
	}
	return nil
}

// logHandler returns the handler of the CLI's logs on w: JSON or text as
// --log-format says, at --log-level (default: warnings only on a
// terminal without --verbose, where a progress bar shows the rest; info
// elsewhere), without empty attributes.
func (a *app) logHandler(w io.Writer) slog.Handler {
	level, ok := logLevels[a.logLevel]
	if !ok {
		level = slog.LevelInfo
		if a.isTerminal() && !a.verbose {
			level = slog.LevelWarn
		}
	}
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: dropEmpty}
	if a.logFormat == logJSON || a.logFormat != logText && !a.isTerminal() {
		return slog.NewJSONHandler(w, opts)
	}
	return slog.NewTextHandler(w, opts)
}

// dropEmpty leaves out attributes with nothing to say: an empty string,
// a nil error or value, so that a line carries only what happened.
func dropEmpty(_ []string, at slog.Attr) slog.Attr {
	switch v := at.Value; v.Kind() {
	case slog.KindString:
		if v.String() == "" {
			return slog.Attr{}
		}
	case slog.KindAny:
		if v.Any() == nil {
			return slog.Attr{}
		}
	}
	return at
}

// jsonFlag is --json[=STYLE]: it turns the command's JSON document on, in
// a style.
type jsonFlag struct{ a *app }

func (f jsonFlag) String() string {
	if f.a == nil || !f.a.jsonOut {
		return "false"
	}
	return f.a.jsonStyle
}

func (f jsonFlag) Set(v string) error {
	switch strings.ToLower(v) {
	case "true", jsonAuto:
		f.a.jsonOut, f.a.jsonStyle = true, jsonAuto
	case jsonCompact, jsonPretty:
		f.a.jsonOut, f.a.jsonStyle = true, strings.ToLower(v)
	case "false":
		f.a.jsonOut = false
	default:
		return fmt.Errorf("give --json, --json=compact or --json=pretty, not %q", v)
	}
	return nil
}

func (jsonFlag) Type() string { return "bool" } // shown as a switch in the help: --json

// addJSONFlag adds --json[=compact|pretty] to fs with usage.
func (a *app) addJSONFlag(fs *pflag.FlagSet, usage string) {
	fl := fs.VarPF(jsonFlag{a}, "json", "", usage+"; one line per document unless stdout is a terminal, or --json=compact|pretty")
	fl.NoOptDefVal = "true"
}

// printJSON writes v to the standard output as the --json style says:
// indented on a terminal (or with --json=pretty), else on one line, so that
// a log shipper reading the output takes each document as one record.
func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.out)
	if a.jsonStyle == jsonPretty || a.jsonStyle != jsonCompact && a.outIsTerminal() {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(v)
}

// outIsTerminal reports whether the standard output is a terminal.
func (a *app) outIsTerminal() bool {
	f, ok := a.out.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
