package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"

	"github.com/kafka-catchup/catchup/internal/catchup"
	"github.com/kafka-catchup/catchup/internal/checkpoint"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/kafkago/wire"
)

// docFiles are the documents whose commands, configuration and links are
// checked: the front page and the manual.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	return append([]string{filepath.Join(repoRoot, "README.md")}, files...)
}

// docName is path relative to the repository, for messages.
func docName(path string) string {
	rel, err := filepath.Rel(repoRoot, path)
	if err != nil {
		return path
	}
	return rel
}

// codeLine is a line of a code block of a document.
type codeLine struct {
	file string
	line int    // 1-based
	lang string // the fence's info string; "" for an indented block
	text string
}

var fence = regexp.MustCompile("^\\s*(```+)\\s*([A-Za-z0-9_-]*)")

// codeBlocks returns the code blocks of a Markdown document, fenced (at any
// indentation, as inside list items) or indented by four spaces after a
// blank line, each as its lines.
func codeBlocks(file, doc string) [][]codeLine {
	var blocks [][]codeLine
	var cur []codeLine
	lines := strings.Split(doc, "\n")
	inFence, fenceLang, fenceIndent, inIndented := false, "", 0, false
	for i, l := range lines {
		if m := fence.FindStringSubmatch(l); m != nil {
			if inFence {
				blocks = append(blocks, cur)
				cur, inFence = nil, false
			} else {
				inFence, fenceLang, fenceIndent = true, m[2], len(l)-len(strings.TrimLeft(l, " "))
			}
			continue
		}
		if inFence {
			text := l
			if len(text) >= fenceIndent && strings.TrimSpace(text[:fenceIndent]) == "" {
				text = text[fenceIndent:]
			}
			cur = append(cur, codeLine{file, i + 1, fenceLang, text})
			continue
		}
		indented := strings.HasPrefix(l, "    ") && strings.TrimSpace(l) != ""
		startsBlock := indented && i > 0 && strings.TrimSpace(lines[i-1]) == ""
		switch {
		case indented && (inIndented || startsBlock):
			inIndented = true
			cur = append(cur, codeLine{file, i + 1, "", strings.TrimSpace(l)})
		case inIndented && strings.TrimSpace(l) != "":
			blocks = append(blocks, cur)
			cur, inIndented = nil, false
		}
	}
	if len(cur) > 0 {
		blocks = append(blocks, cur)
	}
	return blocks
}

// shellWords splits a command line as a POSIX shell would for the cases the
// docs hold (single and double quotes, no expansion). Written here because
// the module graph has no shell-words parser and the docs need only this.
func shellWords(s string) []string {
	var words []string
	var w strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case unicode.IsSpace(r):
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// commandSegments returns the simple commands of a shell line: comments
// dropped, split at &&, ||, ; and |.
func commandSegments(line string) []string {
	if i := strings.Index(line, " #"); i >= 0 {
		line = line[:i]
	}
	if strings.HasPrefix(strings.TrimSpace(line), "#") {
		return nil
	}
	return regexp.MustCompile(`&&|\|\||;|\|`).Split(line, -1)
}

// envAssignment is a VAR=value word before a command.
var envAssignment = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`)

// placeholder is a documented stand-in for a value: N, OFFSET, TIME, R.
var placeholder = regexp.MustCompile(`^[A-Z][A-Z_|]*$`)

// checkCatchupLine parses args (after "catchup") with the real command tree:
// the command must exist and every flag must be one it takes, with a value
// of its type (an upper-case placeholder stands for any value). Nothing runs.
func checkCatchupLine(args []string) error {
	a := &app{in: strings.NewReader(""), out: io.Discard, err: io.Discard}
	root := a.root()
	// [--flag VALUE] marks an optional flag: parse it as given.
	for i, w := range args {
		args[i] = strings.TrimSuffix(strings.TrimPrefix(w, "["), "]")
	}
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if cmd == root {
		if pos := slices.IndexFunc(rest, func(w string) bool { return !strings.HasPrefix(w, "-") }); pos >= 0 {
			return fmt.Errorf("unknown command %q", rest[pos])
		}
	}
	if cmd.DisableFlagParsing { // catchup mirrormaker parses its own legacy flags
		norm, _, err := normalizeMMArgs(rest)
		if err != nil {
			return err
		}
		rest = norm
		cmd.InheritedFlags()
		return placeheld(cmd, rest, cmd.Flags().Parse)
	}
	return placeheld(cmd, rest, cmd.ParseFlags)
}

// placeheld replaces the placeholder value of a flag that is not a string
// (--partition N) by the flag's default, then parses args with parse.
func placeheld(cmd *cobra.Command, args []string, parse func([]string) error) error {
	args = slices.Clone(args)
	for i := 0; i+1 < len(args); i++ {
		name, ok := strings.CutPrefix(args[i], "--")
		if !ok || strings.Contains(name, "=") || !placeholder.MatchString(args[i+1]) {
			continue
		}
		if f := cmd.Flag(name); f != nil && f.Value.Type() != "string" && f.Value.Type() != "stringArray" {
			args[i+1] = f.DefValue
		}
	}
	return parse(args)
}

// makeTargets returns the targets the Makefile defines.
func makeTargets(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]bool{}
	rule := regexp.MustCompile(`(?m)^([A-Za-z0-9_./ -]+):([^=]|$)`)
	for _, m := range rule.FindAllStringSubmatch(string(data), -1) {
		for _, name := range strings.Fields(m[1]) {
			targets[name] = true
		}
	}
	return targets
}

// clusterKeys are the keys of a cluster block: a YAML fragment made of them
// is checked as a source cluster.
var clusterKeys = []string{"name", "brokers", "client_id", "tls", "sasl"}

// configDocument turns a YAML block of the docs into a configuration file
// the loader can read: a whole file as it is, a list of pipelines under
// "pipelines:", a cluster fragment as the source of a minimal pipeline,
// and any other fragment as keys of a minimal pipeline.
func configDocument(block string) (string, error) {
	var top any
	if err := yaml.Unmarshal([]byte(block), &top); err != nil {
		return "", fmt.Errorf("invalid YAML: %w", err)
	}
	indent := func(s, by string) string {
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		for i := range lines {
			lines[i] = by + lines[i]
		}
		return strings.Join(lines, "\n") + "\n"
	}
	switch v := top.(type) {
	case []any:
		return "pipelines:\n" + indent(block, "  "), nil
	case map[string]any:
		if _, ok := v["pipelines"]; ok {
			return block, nil
		}
		keys := slices.Collect(func(yield func(string) bool) {
			for k := range v {
				if !yield(k) {
					return
				}
			}
		})
		fill := map[string]string{
			"name":   "name: doc",
			"source": `source: {brokers: ["127.0.0.1:9092"]}`,
			"target": `target: {brokers: ["127.0.0.1:9093"]}`,
			"topics": `topics: {include: [".*"]}`,
		}
		if !slices.ContainsFunc(keys, func(k string) bool { return !slices.Contains(clusterKeys, k) }) {
			if _, ok := v["brokers"]; !ok {
				block = `brokers: ["127.0.0.1:9092"]` + "\n" + block
			}
			block = "source:\n" + indent(block, "  ") + `target: {brokers: ["127.0.0.1:9093"]}` + "\n"
			delete(fill, "source")
			delete(fill, "target")
		}
		var b strings.Builder
		for _, k := range []string{"name", "source", "target", "topics"} {
			if _, given := v[k]; !given && fill[k] != "" {
				b.WriteString(fill[k] + "\n")
			}
		}
		b.WriteString(block)
		body := indent(b.String(), "    ")
		return "pipelines:\n  - " + strings.TrimPrefix(body, "    "), nil
	}
	return "", fmt.Errorf("a YAML block of %T, not a configuration", top)
}

// dedent removes the indentation every non-blank line shares.
func dedent(lines []codeLine) string {
	common := -1
	for _, l := range lines {
		if strings.TrimSpace(l.text) == "" {
			continue
		}
		n := len(l.text) - len(strings.TrimLeft(l.text, " "))
		if common < 0 || n < common {
			common = n
		}
	}
	var b strings.Builder
	for _, l := range lines {
		if len(l.text) >= common && common > 0 {
			b.WriteString(l.text[common:])
		} else {
			b.WriteString(l.text)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestDocsCommandsAndConfiguration: every `catchup ...` command line in a
// code block of the README and docs/ parses with the real command tree (its
// command exists, its flags are the command's), every `make TARGET` names a
// target of the Makefile, every YAML block goes through the real
// configuration loader, and no command installs the module with go install
// (it is not on the Go module proxy). A flag, key or target renamed in the code and not
// in the docs fails here, naming the document and line.
func TestDocsCommandsAndConfiguration(t *testing.T) {
	targets := makeTargets(t)
	var nCatchup, nMake, nConfig int
	for _, path := range docFiles(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name := docName(path)
		for _, block := range codeBlocks(name, string(data)) {
			if block[0].lang == "yaml" {
				doc, err := configDocument(dedent(block))
				if err == nil {
					_, err = config.Parse([]byte(doc), fmt.Sprintf("%s:%d", name, block[0].line-1))
				}
				if err != nil {
					t.Errorf("%s:%d: the configuration block does not load: %v", name, block[0].line-1, err)
				}
				nConfig++
				continue
			}
			if block[0].lang != "" && block[0].lang != "sh" && block[0].lang != "console" {
				continue
			}
			for i := 0; i < len(block); i++ {
				l := block[i]
				text := strings.TrimPrefix(l.text, "$ ")
				for strings.HasSuffix(text, `\`) && i+1 < len(block) {
					i++
					text = strings.TrimSuffix(text, `\`) + " " + block[i].text
				}
				for _, seg := range commandSegments(text) {
					words := shellWords(seg)
					for len(words) > 0 && (envAssignment.MatchString(words[0]) || words[0] == "sudo") {
						words = words[1:]
					}
					if len(words) == 0 {
						continue
					}
					switch words[0] {
					case "catchup", "bin/catchup", "./catchup":
						nCatchup++
						if err := checkCatchupLine(words[1:]); err != nil {
							t.Errorf("%s:%d: %s: %v", name, l.line, strings.TrimSpace(seg), err)
						}
					case "go":
						// The module is not on the Go module proxy: go install
						// of it fails for users, so no doc may offer it.
						if len(words) > 2 && words[1] == "install" && strings.HasPrefix(words[2], "github.com/kafka-catchup/catchup") {
							t.Errorf("%s:%d: %s: the module is not published to the Go module proxy; say how to install instead (docs/install.md)", name, l.line, strings.TrimSpace(seg))
						}
					case "make":
						nMake++
						for _, w := range words[1:] {
							if !strings.HasPrefix(w, "-") && !strings.Contains(w, "=") && !targets[w] {
								t.Errorf("%s:%d: %s: the Makefile has no target %q", name, l.line, strings.TrimSpace(seg), w)
							}
						}
					}
				}
			}
		}
	}
	t.Logf("checked %d catchup command lines, %d make commands and %d configuration blocks in README.md and docs/", nCatchup, nMake, nConfig)
	if nCatchup < 20 || nConfig < 5 || nMake < 5 {
		t.Errorf("found %d catchup command lines, %d make commands, %d configuration blocks: the extraction lost the docs' code blocks", nCatchup, nMake, nConfig)
	}
}

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*#*\s*$`)
)

// anchors returns the heading anchors of a Markdown document as GitHub makes
// them: lower case, punctuation dropped, spaces as hyphens, a -N suffix for
// repeats.
func anchors(doc string) map[string]bool {
	doc = stripFences(doc)
	seen := map[string]int{}
	out := map[string]bool{}
	for _, m := range mdHeading.FindAllStringSubmatch(doc, -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// stripFences blanks the fenced code blocks of doc, keeping its lines.
func stripFences(doc string) string {
	lines := strings.Split(doc, "\n")
	in := false
	for i, l := range lines {
		if fence.MatchString(l) {
			in = !in
			lines[i] = ""
		} else if in {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// TestDocsLinks: every relative link of the README and docs/ names a file
// that exists, and its #anchor a heading of that file.
func TestDocsLinks(t *testing.T) {
	n := 0
	for _, path := range docFiles(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		doc := stripFences(string(data))
		for i, line := range strings.Split(doc, "\n") {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				link := m[1]
				if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
					continue
				}
				n++
				file, anchor, _ := strings.Cut(link, "#")
				target := path
				if file != "" {
					target = filepath.Join(filepath.Dir(path), file)
				}
				info, err := os.Stat(target)
				if err != nil {
					t.Errorf("%s:%d: link %s: %s does not exist", docName(path), i+1, link, docName(target))
					continue
				}
				if anchor == "" || info.IsDir() || !strings.HasSuffix(target, ".md") {
					continue
				}
				tdoc, err := os.ReadFile(target)
				if err != nil {
					t.Fatal(err)
				}
				if !anchors(string(tdoc))[anchor] {
					t.Errorf("%s:%d: link %s: %s has no heading #%s", docName(path), i+1, link, docName(target), anchor)
				}
			}
		}
	}
	t.Logf("checked %d relative links in README.md and docs/", n)
	if n < 30 {
		t.Errorf("found %d relative links; the extraction lost them", n)
	}
}

// TestReadmeFrontDoor: the README stays a front page a newcomer reads in
// minutes (at most 15 KB; the manual is docs/), and keeps the two commands
// that show and prove the product.
func TestReadmeFrontDoor(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 15*1024 {
		t.Errorf("README.md is %d bytes, over 15 KB (%d): move the detail into docs/ and link it", len(data), 15*1024)
	}
	for _, want := range []string{"make demo", "make test"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("README.md does not say %q", want)
		}
	}
}

// readmeAndReport reads README.md and the benchmark report it quotes.
func readmeAndReport(t *testing.T) (readme, report []byte) {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	report, err = os.ReadFile(filepath.Join(repoRoot, "docs", "benchmarks.md"))
	if err != nil {
		t.Fatal(err)
	}
	return readme, report
}

// TestReadmeFiguresFromReport: every number of the README's figures table
// is one docs/benchmarks.md holds, so that the front page quotes the
// generated report rather than typing figures by hand.
func TestReadmeFiguresFromReport(t *testing.T) {
	readme, report := readmeAndReport(t)
	_, table, ok := strings.Cut(string(readme), "<!-- figures: ")
	table, _, ok2 := strings.Cut(table, "<!-- end of figures -->")
	if !ok || !ok2 {
		t.Fatal("README.md has no figures table between <!-- figures: ... --> and <!-- end of figures -->")
	}
	_, table, _ = strings.Cut(table, "-->") // the marker's own text
	cells := regexp.MustCompile(`\|\s*([0-9][0-9,.]*)\s*`)
	n := 0
	for _, m := range cells.FindAllStringSubmatch(table, -1) {
		n++
		if !regexp.MustCompile(`\|\s*` + regexp.QuoteMeta(m[1]) + `\s*\|`).Match(report) {
			t.Errorf("README.md's figure %s is in no cell of docs/benchmarks.md: quote the report (make bench regenerates it)", m[1])
		}
	}
	// Each row after the header and the rule holds three figures at least:
	// records/s, MB per CPU-second and peak RSS.
	rows := strings.Count(strings.TrimSpace(table), "\n") - 1
	if rows < 1 || n < 3*rows {
		t.Errorf("README.md's figures table has %d figures in %d rows; want the table's cells, 3 a row at least", n, rows)
	}
}

// TestReadmeRatiosFromReport: the ratios, the peak RSS and the request
// counts the README's sentence after the figures table quotes are ones
// docs/benchmarks.md states.
func TestReadmeRatiosFromReport(t *testing.T) {
	readme, report := readmeAndReport(t)
	_, para, ok := strings.Cut(string(readme), "<!-- end of figures -->")
	para, _, ok2 := strings.Cut(para, "The full\nreport")
	if !ok || !ok2 || !strings.Contains(para, "franz-go copier") {
		t.Fatal("README.md has no sentence of ratios between <!-- end of figures --> and \"The full report\"")
	}
	figures := regexp.MustCompile(`\b\d+\.\d+\b|\b\d+ MiB\b`).FindAllString(para, -1)
	// the request counts: "1,462 produce requests a GB from catchup, 617
	// from the franz-go copier"
	for _, m := range regexp.MustCompile(`\b(\d{1,3}(?:,\d{3})*)\s+(?:produce requests|from the)\b`).FindAllStringSubmatch(para, -1) {
		figures = append(figures, m[1])
	}
	if len(figures) < 5 {
		t.Fatalf("README.md's sentence of ratios quotes %d figures %v; want its ratios and peak RSS", len(figures), figures)
	}
	for _, f := range figures {
		if !regexp.MustCompile(`(^|[^0-9.,])` + regexp.QuoteMeta(f) + `($|[^0-9.,]|[.,]($|[^0-9]))`).Match(report) {
			t.Errorf("README.md's figure %s is nowhere in docs/benchmarks.md: quote the report (make bench regenerates it)", f)
		}
	}
}

// TestManPagesAndCompletions: catchup docs (what make release packs) writes
// a man page for every command users see, from the command tree, and the
// bash, zsh and fish completions.
func TestManPagesAndCompletions(t *testing.T) {
	dir := t.TempDir()
	mustCLI(t, exitOK, "", "docs", "--dir", dir)
	a := &app{in: strings.NewReader(""), out: io.Discard, err: io.Discard}
	var want []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || (!c.IsAvailableCommand() && c.HasParent()) {
			return
		}
		want = append(want, strings.ReplaceAll(c.CommandPath(), " ", "-")+".1")
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(a.root())
	for _, page := range want {
		data, err := os.ReadFile(filepath.Join(dir, "man", "man1", page))
		if err != nil || !strings.Contains(string(data), ".TH \"CATCHUP\" \"1\"") {
			t.Errorf("man page %s: %v; want a section 1 page", page, err)
		}
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		if data, err := os.ReadFile(filepath.Join(dir, "completions", "catchup."+shell)); err != nil || !strings.Contains(string(data), "catchup") {
			t.Errorf("%s completion: %v", shell, err)
		}
	}
	if len(want) < 12 {
		t.Errorf("%d man pages expected from the command tree: %v; want one per command", len(want), want)
	}
}

// TestDocsGapBound: the docs that say how many gaps a checkpoint keeps
// say checkpoint.MaxGaps.
func TestDocsGapBound(t *testing.T) {
	for doc, phrase := range map[string]string{
		"guarantees.md": "the last %d per partition",
		"json.md":       "as the checkpoint keeps them: the last %d",
	} {
		text, err := os.ReadFile(filepath.Join("..", "..", "docs", doc))
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf(phrase, checkpoint.MaxGaps); !strings.Contains(string(text), want) {
			t.Errorf("docs/%s does not say %q (checkpoint.MaxGaps)", doc, want)
		}
	}
}

// TestDocsHeaderBytes: the README's size of the provenance header is what
// the encoder adds to a record, to a byte (the lengths' varints grow by one
// where a header value or a record passes 63 bytes): about that many bytes,
// plus the source cluster's and topic's names and the partition's and
// offset's digits.
func TestDocsHeaderBytes(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	phrase := "adds one header to every copied record: about N bytes, plus the source cluster's and topic's names and the partition's and offset's digits"
	m := regexp.MustCompile(strings.ReplaceAll(strings.Replace(regexp.QuoteMeta(phrase), "N", `(\d+)`, 1), " ", `\s+`)).FindSubmatch(readme)
	if m == nil {
		t.Fatalf("README.md does not say how large the header is: %q", phrase)
	}
	for _, pv := range []catchup.Provenance{
		{Cluster: "onprem", Partition: catchup.Partition{Topic: "orders", Partition: 3}, Offset: 1842},
		{Cluster: "eu-central-prod", Partition: catchup.Partition{Topic: "payments.settled.v2", Partition: 117}, Offset: 98_765_432_101},
		{Cluster: "datacenter-frankfurt-2", Partition: catchup.Partition{Topic: "com.example.payments.settled.v2", Partition: 1}, Offset: 7},
	} {
		size := func(stamp *catchup.Provenance) int {
			r := wire.ProduceRequest{Acks: -1, TimeoutMillis: 1000, Batches: []wire.ProduceBatch{{Partition: pv.Partition, Stamp: stamp,
				Records: []catchup.Record{{Offset: pv.Offset, Value: make([]byte, 100), Timestamp: time.UnixMilli(1)}}}}}
			f, err := wire.EncodeRequest(&r, 3, 1, "c")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Release()
			return len(f.Bytes())
		}
		added := size(&pv) - size(nil)
		names := len(pv.Cluster) + len(pv.Topic) + catchup.DecimalLen(int64(pv.Partition.Partition)) + catchup.DecimalLen(pv.Offset)
		if want, _ := strconv.Atoi(string(m[1])); added-names < want-1 || added-names > want+1 {
			t.Errorf("the header of %+v adds %d bytes to a record, %d beside its names and digits; README.md says about %d", pv, added, added-names, want)
		}
	}
}
