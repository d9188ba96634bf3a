package rootfs

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps rootfs's dependencies pointing down (see doc.go): the
// standard library, templates and the filelock leaf, nothing else.
var allowedImports = map[string]bool{
	"github.com/paddock-dev/paddock/templates":         true,
	"github.com/paddock-dev/paddock/internal/filelock": true,
}

func TestImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(path, "/")
			if strings.Contains(first, ".") && !allowedImports[path] {
				t.Errorf("%s imports %s; rootfs may import only the standard library, templates and internal/filelock", file, path)
			}
		}
	}
}
