package metrics

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestNamesListsEveryMetric: Names, which the template's checks and
// docs/metrics.md's are made against, holds every metric name constant of
// names.go (every string constant but the dimensions and defaults), read
// from the source, so that a metric added without Names fails here.
func TestNamesListsEveryMetric(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "names.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if strings.HasPrefix(name.Name, "Dim") || strings.HasPrefix(name.Name, "Default") {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				v, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				declared = append(declared, v)
			}
		}
	}
	slices.Sort(declared)
	got := slices.Sorted(slices.Values(Names))
	if !slices.Equal(declared, got) {
		t.Errorf("Names = %v\nnames.go declares %v", got, declared)
	}
}
