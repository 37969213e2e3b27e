package config

import (
	"strings"
	"testing"
)

func TestTopicsMatch(t *testing.T) {
	tests := []struct {
		name             string
		include, exclude []string
		topic            string
		want             bool
	}{
		{"included", []string{"orders"}, nil, "orders", true},
		{"anchored at the end", []string{"orders"}, nil, "orders-archive", false},
		{"anchored at the start", []string{"orders"}, nil, "old-orders", false},
		{"alternation is anchored whole", []string{"a|b"}, nil, "ab", false},
		{"prefix pattern", []string{`payments\..*`}, nil, "payments.eu", true},
		{"not included", []string{`payments\..*`}, nil, "orders", false},
		{"second include", []string{"orders", "audit"}, nil, "audit", true},
		{"excluded", []string{".*"}, []string{"test.*"}, "test.orders", false},
		{"exclude wins over exact include", []string{"orders"}, []string{"orders"}, "orders", false},
		{"exclude does not touch others", []string{".*"}, []string{"test.*"}, "orders", true},
		{"internal topics never", []string{".*"}, nil, "__consumer_offsets", false},
		{"internal even if named", []string{"__transaction_state"}, nil, "__transaction_state", false},
		{"single underscore is fine", []string{".*"}, nil, "_schemas", true},
		{"nothing included", nil, nil, "orders", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			topics := Topics{Include: tt.include, Exclude: tt.exclude}
			if err := topics.Compile(); err != nil {
				t.Fatalf("Compile(): %v", err)
			}
			if got := topics.Match(tt.topic); got != tt.want {
				t.Errorf("Topics{Include: %q, Exclude: %q}.Match(%q) = %v, want %v", tt.include, tt.exclude, tt.topic, got, tt.want)
			}
		})
	}
}

func TestTopicsMatchUncompiled(t *testing.T) {
	topics := Topics{Include: []string{".*"}}
	if topics.Match("orders") {
		t.Errorf("Match before Compile = true, want false")
	}
}

// TestTopicsCompileKeepsGood checks that a failed Compile keeps the
// patterns compiled before, rather than selecting a partial set.
func TestTopicsCompileKeepsGood(t *testing.T) {
	topics := Topics{Include: []string{"orders"}}
	if err := topics.Compile(); err != nil {
		t.Fatal(err)
	}
	topics.Include = []string{"audit", "(bad"}
	if err := topics.Compile(); err == nil {
		t.Fatal("Compile((bad) = nil, want an error")
	}
	if !topics.Match("orders") || topics.Match("audit") {
		t.Errorf("after a failed Compile, Match uses %q, want the earlier patterns", topics.Include)
	}
}

func TestCompilePattern(t *testing.T) {
	const unsupported = "Java regex syntax that Go's RE2 engine does not support"
	tests := []struct {
		expr string
		want string // a part of the error; "" for none
	}{
		{"orders", ""},
		{`(?i)orders\..*`, ""},
		{`[(?!]x`, ""},    // in a class, "(?!" is three literal characters
		{`\(?!x`, ""},     // an escaped "(" starts no group
		{`a{2}`, ""},      // a plain repeat
		{`(?P<n>a)+`, ""}, // a named group
		{"", "empty pattern"},
		{"(?!test).*", `uses the negative lookahead "(?!", ` + unsupported + "; rewrite it without lookaround: select with include and drop the unwanted topics with exclude"},
		{"orders(?=-v2)", `the lookahead "(?="`},
		{"(?<=a)b", `the lookbehind "(?<="`},
		{"(?<!test-).*", `the negative lookbehind "(?<!"`},
		{"(?>ab|a)c", `the atomic group "(?>", ` + unsupported + `; write a plain group "(?:" instead`},
		{`(a)\1`, `the backreference "\\1", ` + unsupported},
		{"a*+", `the possessive quantifier "*+"`},
		{"a++", `the possessive quantifier "++"`},
		{"a?+", `the possessive quantifier "?+"`},
		{"a{2}+", `the possessive quantifier "}+"`},
		{"(x", `"(x" is not a valid Go (RE2) regular expression: error parsing regexp: missing closing )`},
	}
	for _, tt := range tests {
		_, err := compilePattern(tt.expr)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("compilePattern(%q) = %v, want no error", tt.expr, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("compilePattern(%q) = %v, want an error containing %q", tt.expr, err, tt.want)
		}
	}
}
