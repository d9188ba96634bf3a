package runner_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/paddock-dev/paddock/"

// shared are the subpackages of runner that every layer may know: the
// protocol, the sandbox's layout and the fake runtime for tests. Every
// other subpackage is a concrete runtime or a piece of one.
var shared = map[string]bool{"runner/wire": true, "runner/ocispec": true, "runner/runnertest": true}

// Nothing above runner knows which runtime runs its sandboxes: a concrete
// runtime (runner/runsc, and any later one) and the pieces runtimes share
// (runner/agentconn) are imported only by runner's own packages, by cmd,
// which chooses the runtime, and by the benchmarks, whose raw baselines
// drive runsc directly. Test files are bound too.
func TestOnlyCmdChoosesARuntime(t *testing.T) {
	files := 0
	fset := token.NewFileSet()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != ".." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
				name == "testdata" || name == "vendor" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		rel, err := filepath.Rel("..", filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		for _, spec := range f.Imports {
			imp, _ := strconv.Unquote(spec.Path.Value)
			pkg, ok := strings.CutPrefix(imp, module)
			if !ok || !strings.HasPrefix(pkg, "runner/") || shared[pkg] {
				continue
			}
			if !under(rel, "runner") && !under(rel, "cmd") && !under(rel, "benchmarks") {
				t.Errorf("%s imports %s: only runner, cmd and benchmarks may", path, imp)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking the module: %v", err)
	}
	if files < 100 {
		t.Fatalf("checked %d Go files; the walk is looking in the wrong place", files)
	}
}

// under reports whether path is dir or inside it.
func under(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+"/")
}
