package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// troublePlaceholder is a word docs/troubleshooting.md writes in place of
// what varies in a message: a file, a line, a pipeline's index or name, a key.
var troublePlaceholder = regexp.MustCompile(`\b(?:FILE|LINE|COL|NAME|KEY|N)\b|\.\.\.`)

// troublePattern turns a message form of docs/troubleshooting.md into a
// regular expression that the real message must match.
func troublePattern(form string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	last := 0
	for _, m := range troublePlaceholder.FindAllStringIndex(form, -1) {
		b.WriteString(regexp.QuoteMeta(form[last:m[0]]))
		switch form[m[0]:m[1]] {
		case "FILE":
			b.WriteString(`\S+?`)
		case "LINE", "COL", "N":
			b.WriteString(`\d+`)
		case "NAME":
			b.WriteString(`[^)]+`)
		case "KEY":
			b.WriteString(`[a-z_][a-z0-9_.]*`)
		default: // ...
			b.WriteString(`.+`)
		}
		last = m[1]
	}
	b.WriteString(regexp.QuoteMeta(form[last:]))
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// TestTroubleshootingConfigErrors: the forms docs/troubleshooting.md gives
// for a configuration error are the ones the CLI prints. Each bad file is
// loaded by the real command; every message must match a documented form,
// and every documented form must be met by one of them.
func TestTroubleshootingConfigErrors(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "docs", "troubleshooting.md"))
	if err != nil {
		t.Fatal(err)
	}
	var forms []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "| `FILE:") {
			cell := strings.SplitN(line, "|", 3)[1]
			for i, part := range strings.Split(cell, "`") {
				if i%2 == 1 {
					forms = append(forms, part)
				}
			}
		}
	}
	if len(forms) == 0 {
		t.Fatal("docs/troubleshooting.md has no row starting with `FILE:` for configuration errors")
	}
	const head = "pipelines:\n  - name: orders\n    target: {brokers: [\"127.0.0.1:8\"]}\n    topics: {include: [orders]}\n"
	bad := map[string]string{
		"a bad value":           head + "    source: {brokers: [\"127.0.0.1:9\"]}\n    window: {max_records: -5}\n",
		"an unknown key":        head + "    source: {brokers: [\"127.0.0.1:9\"]}\n    windw: {max_records: 5}\n",
		"an unset password_env": head + "    source:\n      brokers: [\"127.0.0.1:9\"]\n      sasl: {mechanism: PLAIN, username: u, password_env: CATCHUP_TEST_NEVER_SET}\n",
	}
	met := make([]bool, len(forms))
	dir := t.TempDir()
	for name, yaml := range bad {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".yaml")
		if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		_, stderr := mustCLI(t, 2, "", "plan", "-c", path)
		for _, msg := range strings.Split(strings.TrimSpace(stderr), "\n") {
			msg = strings.TrimSpace(strings.TrimPrefix(msg, "catchup: "))
			matched := false
			for i, f := range forms {
				if troublePattern(f).MatchString(msg) {
					met[i], matched = true, true
				}
			}
			if !matched {
				t.Errorf("%s: catchup printed\n  %s\nwhich matches none of docs/troubleshooting.md's forms %q", name, msg, forms)
			}
		}
	}
	for i, f := range forms {
		if !met[i] {
			t.Errorf("docs/troubleshooting.md gives the form %q, which no configuration error printed", f)
		}
	}
}
