package agentconn

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// agentconn serves every runtime: it knows the contract and the protocol,
// never how a sandbox is isolated.
func TestImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{
		"github.com/paddock-dev/paddock/runner":      true,
		"github.com/paddock-dev/paddock/runner/wire": true,
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(p, "/")
			if !strings.Contains(first, ".") || allowed[p] {
				continue
			}
			t.Errorf("%s imports %s: agentconn imports only runner and runner/wire", name, p)
		}
	}
}
