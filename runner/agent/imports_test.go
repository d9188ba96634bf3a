package agent

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The agent is a static binary inside the sandbox: the standard library,
// the wire protocol and its own workspace package only; the workspace
// package imports no more than the wire protocol.
func TestImports(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	ws, err := filepath.Glob("workspace/*.go")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, ws...)
	allowed := map[string]bool{
		"github.com/paddock-dev/paddock/runner/wire": true,
		"golang.org/x/sys/unix":                      true,
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
			ok := allowed[p] || p == "github.com/paddock-dev/paddock/runner/agent/workspace" && filepath.Dir(name) == "."
			if p != "C" && !strings.Contains(first, ".") || ok {
				continue
			}
			t.Errorf("%s imports %s", name, p)
		}
	}
}
