package store_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsPointDown keeps the store below everything it records:
// none of its files, tests included, imports a Paddock package but its
// own (pgtest, its tests' PostgreSQL cluster).
func TestImportsPointDown(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files: %v", err)
	}
	for _, name := range files {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/paddock-dev/paddock/") && path != "github.com/paddock-dev/paddock/store" &&
				!strings.HasPrefix(path, "github.com/paddock-dev/paddock/store/") {
				t.Errorf("%s imports %s: the store must not import api, doors, core, kernels, pool or runner", name, path)
			}
		}
	}
}
