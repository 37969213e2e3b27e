package config

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Compile compiles Include and Exclude for Match, which selects nothing
// until they compile. Parse and Validate call it; call it yourself on Topics
// built in code. The error joins one error per bad pattern and, for Java
// regex syntax that RE2 lacks (lookaround, possessive quantifiers,
// backreferences, atomic groups), says how to rewrite it.
func (t *Topics) Compile() error {
	var errs []error
	t.compile(func(field string, i int, err error) {
		errs = append(errs, fmt.Errorf("%s[%d]: %w", field, i, err))
	})
	return errors.Join(errs...)
}

// compile compiles the patterns, calling bad for each that does not
// compile, and reports whether all did; only then does it replace the
// compiled patterns.
func (t *Topics) compile(bad func(field string, i int, err error)) bool {
	ok := true
	all := func(field string, exprs []string) []*regexp.Regexp {
		res := make([]*regexp.Regexp, 0, len(exprs))
		for i, expr := range exprs {
			re, err := compilePattern(expr)
			if err != nil {
				bad(field, i, err)
				ok = false
				continue
			}
			res = append(res, re)
		}
		return res
	}
	include, exclude := all("include", t.Include), all("exclude", t.Exclude)
	if ok {
		t.include, t.exclude = include, exclude
	}
	return ok
}

// compilePattern compiles expr anchored at both ends, so that "orders"
// selects the topic orders and not orders-archive.
func compilePattern(expr string) (*regexp.Regexp, error) {
	if expr == "" {
		return nil, errors.New("empty pattern; use \".*\" for every topic")
	}
	if _, err := regexp.Compile(expr); err != nil {
		if construct, advice, ok := javaSyntax(expr); ok {
			return nil, fmt.Errorf("%q uses %s, Java regex syntax that Go's RE2 engine does not support; %s", expr, construct, advice)
		}
		return nil, fmt.Errorf("%q is not a valid Go (RE2) regular expression: %w", expr, err)
	}
	return regexp.Compile("^(?:" + expr + ")$")
}

// javaSyntax finds the first Java-only construct in expr, skipping escaped
// characters and character classes, and says how to do without it.
func javaSyntax(expr string) (construct, advice string, ok bool) {
	const (
		lookaround = "rewrite it without lookaround: select with include and drop the unwanted topics with exclude, which always wins " +
			`(for "(?!test).*" write include ".*" and exclude "test.*")`
		possessive = "drop the extra '+': RE2 never backtracks, so the plain quantifier is already linear-time"
	)
	inClass := false
	for i := 0; i < len(expr); i++ {
		rest := expr[i:]
		switch {
		case rest[0] == '\\':
			if len(rest) > 1 && rest[1] >= '1' && rest[1] <= '9' && !inClass {
				return fmt.Sprintf("the backreference %q", rest[:2]), "RE2 has no backreferences; list the topics with separate patterns instead", true
			}
			i++ // skip the escaped character
		case inClass:
			inClass = rest[0] != ']'
		case rest[0] == '[':
			inClass = true
			if strings.HasPrefix(rest, "[^]") || strings.HasPrefix(rest, "[]") {
				i += strings.Index(rest, "]") // a leading ']' is literal
			}
		case strings.HasPrefix(rest, "(?="):
			return `the lookahead "(?="`, lookaround, true
		case strings.HasPrefix(rest, "(?!"):
			return `the negative lookahead "(?!"`, lookaround, true
		case strings.HasPrefix(rest, "(?<="):
			return `the lookbehind "(?<="`, lookaround, true
		case strings.HasPrefix(rest, "(?<!"):
			return `the negative lookbehind "(?<!"`, lookaround, true
		case strings.HasPrefix(rest, "(?>"):
			return `the atomic group "(?>"`, `write a plain group "(?:" instead: RE2 never backtracks`, true
		case strings.ContainsRune("*+?}", rune(rest[0])) && strings.HasPrefix(rest[1:], "+"):
			return fmt.Sprintf("the possessive quantifier %q", rest[:2]), possessive, true
		}
	}
	return "", "", false
}
