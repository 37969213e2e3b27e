package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// repoRoot is the repository, from this package's directory.
const repoRoot = "../.."

// goFiles returns the non-test Go files of dir (relative to repoRoot), by
// base name.
func goFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(repoRoot, dir))
	if err != nil {
		t.Fatalf("read %s: %v", dir, err)
	}
	var files []string
	for _, e := range entries {
		if n := e.Name(); !e.IsDir() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			files = append(files, n)
		}
	}
	return files
}

// docFileMapLine is a line of a doc.go file map: a tab, a file name, two
// spaces or more, what it holds.
var docFileMapLine = regexp.MustCompile(`(?m)^//\t([a-z0-9_]+\.go) {2,}\S`)

// TestFileMaps: the file maps of the packages' doc.go and of
// docs/ARCHITECTURE.md name files that exist, and every Go file of a package
// they map is named, so that a file added, split or renamed fails here
// until the map says where it went.
func TestFileMaps(t *testing.T) {
	for _, dir := range []string{"internal/kafkago", "internal/kafkago/wire", "internal/replicate"} {
		doc, err := os.ReadFile(filepath.Join(repoRoot, dir, "doc.go"))
		if err != nil {
			t.Fatal(err)
		}
		var named []string
		for _, m := range docFileMapLine.FindAllStringSubmatch(string(doc), -1) {
			named = append(named, m[1])
		}
		checkMap(t, dir+"/doc.go", dir, named, goFiles(t, dir))
	}

	arch, err := os.ReadFile(filepath.Join(repoRoot, "docs/ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	byDir := map[string][]string{}
	for _, path := range architectureFileMap(t, string(arch)) {
		matches, err := filepath.Glob(filepath.Join(repoRoot, path))
		if err != nil || len(matches) == 0 {
			t.Errorf("docs/ARCHITECTURE.md's file map names %s, which does not exist", path)
			continue
		}
		for _, m := range matches {
			rel, _ := filepath.Rel(repoRoot, m)
			byDir[filepath.Dir(rel)] = append(byDir[filepath.Dir(rel)], filepath.Base(rel))
		}
	}
	if len(byDir) < 20 {
		t.Fatalf("docs/ARCHITECTURE.md's file map covers %d packages; want the table of the product's packages", len(byDir))
	}
	for dir, named := range byDir {
		// A package's doc.go is its overview, which the map need not repeat.
		files := slices.DeleteFunc(goFiles(t, dir), func(f string) bool { return f == "doc.go" && !slices.Contains(named, f) })
		checkMap(t, "docs/ARCHITECTURE.md", dir, named, files)
	}
}

// checkMap reports the files map names in dir that are not there and the
// files there that it does not name.
func checkMap(t *testing.T, mapName, dir string, named, files []string) {
	t.Helper()
	for _, n := range named {
		if !slices.Contains(files, n) {
			t.Errorf("%s names %s/%s, which does not exist: update the map", mapName, dir, n)
		}
	}
	for _, f := range files {
		if !slices.Contains(named, f) {
			t.Errorf("%s does not name %s/%s: add a line saying what it holds", mapName, dir, f)
		}
	}
}

// architectureFileMap returns the paths (globs allowed) in the first column
// of the "## File map" table of docs/ARCHITECTURE.md.
func architectureFileMap(t *testing.T, doc string) []string {
	t.Helper()
	_, section, ok := strings.Cut(doc, "\n## File map\n")
	if !ok {
		t.Fatal(`docs/ARCHITECTURE.md has no "## File map" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	path := regexp.MustCompile("`([A-Za-z0-9_./*-]+\\.go)`")
	var paths []string
	for line := range strings.SplitSeq(section, "\n") {
		first, _, ok := strings.Cut(strings.TrimPrefix(line, "| "), " | ")
		if !strings.HasPrefix(line, "| ") || !ok {
			continue
		}
		for _, m := range path.FindAllStringSubmatch(first, -1) {
			paths = append(paths, m[1])
		}
	}
	return paths
}
