package config

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error is one problem in a configuration. Parse, Load and Validate report
// every problem at once: the error they return joins one *Error per problem
// (errors.Join), so errors.As finds the first and the joined error's
// Unwrap() []error method lists them all.
type Error struct {
	// File is the file name given to Parse or Load; empty from Validate.
	File string
	// Line and Column are 1-based and locate the key at fault (or its
	// nearest enclosing key when it is missing); 0 when unknown.
	Line, Column int
	// Pipeline labels the pipeline at fault, like "pipelines[0] (orders-dr)";
	// empty for a problem outside any pipeline.
	Pipeline string
	// Field is the path of the setting at fault, relative to the pipeline
	// (or to the file when Pipeline is empty), like "source.brokers[1]";
	// empty for the whole pipeline or file.
	Field string
	// Msg says what is wrong and, where it helps, how to fix it.
	Msg string
}

// Error formats e as "FILE:LINE:COL: PIPELINE: FIELD: MSG", leaving out the
// parts that are empty.
func (e *Error) Error() string {
	var b strings.Builder
	loc := e.File
	if e.Line > 0 {
		if loc != "" {
			loc += ":"
		}
		loc += strconv.Itoa(e.Line)
		if e.Column > 0 {
			loc += ":" + strconv.Itoa(e.Column)
		}
	}
	for _, part := range []string{loc, e.Pipeline, e.Field} {
		if part != "" {
			b.WriteString(part)
			b.WriteString(": ")
		}
	}
	b.WriteString(e.Msg)
	return b.String()
}

// unknownKeyMsg explains that key is not one of valid. It suggests, in
// order: the nearest valid key; the place where key belongs if it is
// misplaced (homes maps each key of the schema to where it belongs); the
// nearest key elsewhere and its place; or else it lists the valid keys.
func unknownKeyMsg(key string, valid []string, homes map[string][]string) string {
	if best, ok := nearest(key, valid); ok {
		return fmt.Sprintf("unknown key %q (did you mean %q?)", key, best)
	}
	if where := homes[key]; len(where) > 0 {
		return fmt.Sprintf("unknown key %q here (it belongs in %s)", key, strings.Join(where, " or "))
	}
	if best, ok := nearest(key, slices.Sorted(maps.Keys(homes))); ok {
		return fmt.Sprintf("unknown key %q (did you mean %q? it belongs in %s)", key, best, strings.Join(homes[best], " or "))
	}
	return fmt.Sprintf("unknown key %q (valid keys: %s)", key, strings.Join(valid, ", "))
}

// nearest returns the candidate closest to key, ignoring case, '_' and '-'
// (so "maxRecords" finds "max_records"), if it is close enough to be the
// likely intent: at most one edit per three characters, and at least one.
func nearest(key string, candidates []string) (string, bool) {
	norm := func(s string) string {
		return strings.NewReplacer("_", "", "-", "", ".", "").Replace(strings.ToLower(s))
	}
	k := norm(key)
	best, bestDist := "", -1
	for _, c := range candidates {
		d := editDistance(k, norm(c))
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	limit := max(1, utf8.RuneCountInString(k)/3)
	return best, bestDist >= 0 && bestDist <= limit
}

// editDistance is the optimal string alignment distance between a and b:
// the number of single-rune insertions, deletions, substitutions and
// transpositions of adjacent runes that turn a into b ("tsl" → "tls" is 1).
func editDistance(a, b string) int {
	s, t := []rune(a), []rune(b)
	// d[i][j] is the distance between s[:i] and t[:j].
	d := make([][]int, len(s)+1)
	for i := range d {
		d[i] = make([]int, len(t)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(s); i++ {
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(s)][len(t)]
}
