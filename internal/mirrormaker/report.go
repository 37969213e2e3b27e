package mirrormaker

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/kafka-catchup/catchup/internal/config"
)

// NoticeKind classifies a Notice.
type NoticeKind string

// Notice kinds. Unknown, refused and invalid ones stop the conversion.
const (
	NoticeMapped        NoticeKind = "mapped"         // converted into the YAML
	NoticeObsolete      NoticeKind = "obsolete"       // a setting of a Kafka client that no longer exists
	NoticeNotApplicable NoticeKind = "not applicable" // catchup works another way; the notice says how
	NoticeAction        NoticeKind = "action"         // converted, but the user must do something first
	NoticeWarning       NoticeKind = "warning"        // converted, but catchup behaves differently
	NoticeUnknown       NoticeKind = "unknown"        // not a key catchup knows: a typo?
	NoticeRefused       NoticeKind = "refused"        // a setting catchup will not honour (data loss, Java code)
	NoticeInvalid       NoticeKind = "invalid"        // a value that is wrong, or a setting that is missing
)

// Blocking reports whether a notice of kind k stops the conversion.
func (k NoticeKind) Blocking() bool {
	return k == NoticeUnknown || k == NoticeRefused || k == NoticeInvalid
}

// Notice is what Convert says about one property, flag or
// conversion result.
type Notice struct {
	// File is the property file; empty for a command-line flag.
	File string
	// Line is the 1-based line of Key in File; 0 when the key is absent or
	// is a flag.
	Line int
	// Key is the property (like "bootstrap.servers") or the flag (like
	// "--num.streams"); empty for a notice about the whole conversion.
	Key  string
	Kind NoticeKind
	// Msg explains the outcome. It never holds a password.
	Msg string
}

// String formats n as "FILE:LINE: KEY: KIND: MSG", leaving out the parts
// that are empty.
func (n Notice) String() string {
	var b strings.Builder
	loc := n.File
	if n.Line > 0 {
		loc += ":" + strconv.Itoa(n.Line)
	}
	for _, part := range []string{loc, n.Key, string(n.Kind)} {
		if part != "" {
			b.WriteString(part)
			b.WriteString(": ")
		}
	}
	b.WriteString(n.Msg)
	return b.String()
}

// Error is returned by Convert when a notice is blocking.
type Error struct {
	Problems []Notice // the blocking notices, also in Migration.Notices
}

func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, n := range e.Problems {
		lines[i] = n.String()
	}
	return fmt.Sprintf("the MirrorMaker configuration cannot be converted (%d problems):\n%s", len(e.Problems), strings.Join(lines, "\n"))
}

// addParseProblem turns a problem that Parse found in the converted YAML
// into a notice on the property or flag it came from, unless a notice
// already explains it.
func (c *converter) addParseProblem(e *config.Error, origins []map[string]keyOrigin, covered []map[string]bool) {
	i := -1
	if _, err := fmt.Sscanf(e.Pipeline, "pipelines[%d]", &i); err != nil || i < 0 || i >= len(origins) {
		n := Notice{Kind: NoticeInvalid, Msg: e.Msg}
		if e.Field == "store" {
			n.Key = "--store"
		} else if e.Field != "" {
			n.Msg = e.Field + ": " + e.Msg
		}
		c.add(n)
		return
	}
	for path := e.Field; path != ""; path = config.ParentPath(path) {
		if covered[i][path] {
			return
		}
	}
	for path := e.Field; path != ""; path = config.ParentPath(path) {
		if o, ok := origins[i][path]; ok {
			c.add(Notice{File: o.file, Line: o.line, Key: o.key, Kind: NoticeInvalid, Msg: e.Field + ": " + e.Msg})
			return
		}
	}
	c.add(Notice{Kind: NoticeInvalid, Msg: e.Pipeline + ": " + e.Field + ": " + e.Msg})
}

// joinedErrors returns the *Errors joined in err.
func joinedErrors(err error) []*config.Error {
	if err == nil {
		return nil
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	out := make([]*config.Error, 0, len(errs))
	for _, e := range errs {
		var ce *config.Error
		if errors.As(e, &ce) {
			out = append(out, ce)
		} else {
			out = append(out, &config.Error{Msg: e.Error()})
		}
	}
	return out
}

// problemComments places each blocking notice beside the YAML setting it
// came from, as a line comment at its path in the document
// ("$.pipelines[0].source.brokers"); rest holds the notices that no setting
// of the YAML came from (an unknown key, a missing flag).
func problemComments(problems []Notice, origins []map[string]keyOrigin) (comments yaml.CommentMap, rest []Notice) {
	comments = yaml.CommentMap{}
	for _, n := range problems {
		var paths []string
		for i, o := range origins {
			for _, path := range slices.Sorted(maps.Keys(o)) {
				if o[path].key == n.Key && o[path].file == n.File {
					paths = append(paths, fmt.Sprintf("$.pipelines[%d].%s", i, path))
				}
			}
		}
		if len(paths) == 0 {
			rest = append(rest, n)
			continue
		}
		for _, p := range paths {
			comments[p] = []*yaml.Comment{yaml.LineComment(" PROBLEM: " + n.Key + ": " + string(n.Kind) + ": " + n.Msg)}
		}
	}
	return comments, rest
}
