package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var variable = regexp.MustCompile(`CORNUS_[A-Z0-9_]+`)

// codeVariables returns every CORNUS_* name that a string literal of a
// non-test Go file under root spells, with the files that spell it.
// Comments do not count: a variable is what the code reads or sets.
func codeVariables(t *testing.T, root string) map[string][]string {
	t.Helper()
	found := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "bin", "testdata", "vendor":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, name := range variable.FindAllString(s, -1) {
				if !slices.Contains(found[name], rel) {
					found[name] = append(found[name], rel)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// tableRow is one row of docs/variables.md: | `CORNUS_X` | default | area | meaning |
var tableRow = regexp.MustCompile("(?m)^\\|\\s*`(CORNUS_[A-Z0-9_]+)`\\s*\\|")

// docVariables returns the variables docs/variables.md has a row for,
// failing on a name listed twice.
func docVariables(t *testing.T, page string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, m := range tableRow.FindAllSubmatch(b, -1) {
		name := string(m[1])
		if listed[name] {
			t.Errorf("%s lists %s twice", page, name)
		}
		listed[name] = true
	}
	return listed
}

// docs/variables.md has a row for exactly the CORNUS_* variables the
// code spells in string literals: a new variable without a row, or a row
// for one the code dropped, fails.
func TestVariablesTableMatchesCode(t *testing.T) {
	root := filepath.Join("..", "..")
	inCode := codeVariables(t, root)
	if len(inCode) == 0 {
		t.Fatal("found no CORNUS_* variable in the code: the scan checks nothing")
	}
	page := filepath.Join(root, "docs", "variables.md")
	listed := docVariables(t, page)
	for _, name := range slices.Sorted(maps.Keys(inCode)) {
		if !listed[name] {
			t.Errorf("%s is in the code (%s) but not in %s: add a row (default, area, meaning)", name, strings.Join(inCode[name], ", "), page)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(listed)) {
		if _, ok := inCode[name]; !ok {
			t.Errorf("%s lists %s, which no Go file (outside tests) spells any more: remove its row", page, name)
		}
	}
}
