package workspace

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestImportsNoHearthPackage enforces the import rule in doc.go: workspace
// sits below daemon and imports no hearth package but its own subpackages
// (its tests may import internal/testenv and internal/apischema).
func TestImportsNoHearthPackage(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if (p == "github.com/hearthd/hearth/internal/testenv" || p == "github.com/hearthd/hearth/internal/apischema") && strings.HasSuffix(e.Name(), "_test.go") {
				continue // tests only: the user's environment kept away; the official API schema
			}
			if strings.HasPrefix(p, "github.com/hearthd/hearth/workspace/") {
				continue // its own subpackages, below it
			}
			if strings.HasPrefix(p, "github.com/hearthd/hearth") {
				t.Errorf("%s imports %s; workspace must import no other hearth package but its subpackages", e.Name(), p)
			}
		}
	}
}
