package api_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/paddock-dev/paddock"

// importRule forbids packages under dir (a module-relative path) from
// importing anything under the listed prefixes and, when stdlibOnly,
// anything outside the standard library but dir itself. When only is
// set, dir's non-test files import nothing outside the standard library
// but dir itself and exactly the packages listed.
type importRule struct {
	dir        string
	forbidden  []string
	stdlibOnly bool
	only       []string
}

// TestImportsPointDown enforces the layering of docs/architecture.md
// on every Go file of the module: cmd → api, doors → core → kernels →
// pool → runner, templates, tests included (a door names pool's and
// kernels' types through the core's aliases, and only its tests import
// those two; kernels imports pool and runner); the core knows no
// HTTP; only the doors (api, doors/*) and cmd import gin, and not api's
// job store (api/jobs), which imports only the standard library;
// a concrete runtime, runner/agentconn and rootfs are wired only by cmd
// and benchmarks; the runnertest fake serves tests only; egress imports
// nothing of Paddock.
func TestImportsPointDown(t *testing.T) {
	rules := []importRule{
		{dir: "runner", forbidden: []string{module + "/pool", module + "/kernels", module + "/core", module + "/api", module + "/doors", module + "/cmd"}},
		{dir: "templates", forbidden: []string{module + "/pool", module + "/kernels", module + "/core", module + "/api", module + "/doors", module + "/cmd"}},
		{dir: "pool", forbidden: []string{module + "/kernels", module + "/core", module + "/api", module + "/doors", module + "/cmd", module + "/runner/runsc", module + "/rootfs"}},
		{dir: "kernels", forbidden: []string{module + "/core", module + "/api", module + "/doors", module + "/cmd", module + "/runner/runsc", module + "/rootfs"}},
		// The core knows no protocol: no HTTP, no door.
		{dir: "core", forbidden: []string{"net/http", module + "/api", module + "/doors", module + "/cmd", module + "/runner/runsc", module + "/rootfs"}},
		{dir: "api", forbidden: []string{module + "/cmd", module + "/doors", module + "/runner/runsc", module + "/rootfs"}},
		{dir: "doors", forbidden: []string{module + "/cmd", module + "/api", module + "/runner/runsc", module + "/rootfs"}},
		// The job store knows no HTTP and nothing of Paddock: the standard library only.
		{dir: "api/jobs", stdlibOnly: true, forbidden: []string{"net/http"}},
		// The edge every door shares knows the core's errors, no door and no framework.
		{dir: "internal/edge", only: []string{module + "/core"}},
		// The range checks every door shares: the standard library only.
		{dir: "policy", stdlibOnly: true, forbidden: []string{"net/http"}},
		// The E2B door translates its protocol onto the core: never the pool, the runtime or another door.
		{dir: "doors/e2b", forbidden: []string{module + "/api", module + "/cmd", module + "/pool", module + "/runner/runsc", module + "/rootfs", module + "/doors/mcp"}},
		{dir: "rootfs", forbidden: []string{module + "/api", module + "/core", module + "/doors", module + "/cmd", module + "/kernels", module + "/pool"}},
		// The host end of the agent protocol serves every runtime: it knows
		// the contract and the protocol, never how a sandbox is isolated.
		{dir: "runner/agentconn", only: []string{module + "/runner", module + "/runner/wire"}},
		// The sandbox's shape: the contract's types and the OCI spec's.
		{dir: "runner/ocispec", only: []string{module + "/runner", "github.com/opencontainers/runtime-spec/specs-go"}},
		// The egress proxy is a room of its own: the standard library,
		// prometheus and x/net's DNS message codec, nothing of Paddock.
		{dir: "egress", only: []string{"github.com/prometheus/client_golang/prometheus", "golang.org/x/net/dns/dnsmessage"},
			forbidden: []string{module + "/api", module + "/core", module + "/doors", module + "/kernels", module + "/pool", module + "/runner", module + "/cmd", module + "/templates", module + "/store"}},
		// A gateway holds no sandbox and no session by construction:
		// nothing of Paddock, only prometheus' text format for /metrics.
		{dir: "gateway", only: []string{"github.com/prometheus/client_model/go", "github.com/prometheus/common/expfmt",
			"github.com/prometheus/common/model", "google.golang.org/protobuf/proto"}},
		// Discovery finds nodes; it knows nothing of what they serve.
		{dir: "cluster/discovery", forbidden: []string{module + "/"}},
	}
	everywhereBut := []struct {
		imported string
		allowed  []string // dirs whose files may import it
		testsToo bool     // the rule also binds _test.go files
		except   []string // packages under imported that the rule leaves alone
	}{
		{imported: "github.com/gin-gonic/", allowed: []string{"api", "doors", "cmd"}, testsToo: true},
		{imported: module + "/api", allowed: []string{"api", "cmd"}, testsToo: true},
		{imported: module + "/doors", allowed: []string{"doors", "cmd"}, testsToo: true},
		{imported: module + "/cmd", allowed: []string{"cmd"}, testsToo: true},
		// Concrete pieces are wired by cmd; their own tests may combine them.
		{imported: module + "/runner/runsc", allowed: []string{"runner/runsc", "cmd", "benchmarks"}},
		{imported: module + "/rootfs", allowed: []string{"rootfs", "cmd", "benchmarks"}},
		// The doors' shared edge (internal/edge) speaks HTTP about core errors.
		{imported: module + "/core", allowed: []string{"core", "api", "doors", "internal/edge", "cmd", "benchmarks"}, testsToo: true},
		{imported: module + "/kernels", allowed: []string{"kernels", "core", "api", "doors", "cmd", "benchmarks"}, testsToo: true},
		// A door names what the core hands it in the core's own words
		// (core/types.go); only a door's tests build pools and kernels.
		{imported: module + "/kernels", allowed: []string{"kernels", "core", "cmd", "benchmarks"}},
		{imported: module + "/pool", allowed: []string{"pool", "kernels", "core", "cmd", "benchmarks"}},
		{imported: module + "/runner/runnertest", allowed: []string{"runner/runnertest"}},
		// Nothing above runner knows which runtime runs its sandboxes: a
		// concrete runtime (runsc, runc, any later one) and the pieces
		// runtimes share (agentconn, contract) are imported only by
		// runner's own packages, by cmd, which chooses the runtime, and by
		// the benchmarks, whose raw baselines drive runsc directly. Every
		// layer may know the protocol, the sandbox's layout and the fake.
		{imported: module + "/runner/", allowed: []string{"runner", "cmd", "benchmarks"}, testsToo: true,
			except: []string{module + "/runner/wire", module + "/runner/ocispec", module + "/runner/runnertest"}},
	}

	files := 0
	fset := token.NewFileSet()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != ".." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
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
			imp, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			for _, r := range rules {
				if !under(rel, r.dir) {
					continue
				}
				for _, bad := range r.forbidden {
					if under(imp, bad) {
						t.Errorf("%s imports %s: %s must not import %s", path, imp, r.dir, bad)
					}
				}
				first, _, _ := strings.Cut(imp, "/")
				outside := strings.Contains(first, ".") && !under(imp, module+"/"+r.dir)
				if r.stdlibOnly && outside {
					t.Errorf("%s imports %s: %s imports only the standard library", path, imp, r.dir)
				}
				if r.only != nil && outside && !strings.HasSuffix(name, "_test.go") && !slices.Contains(r.only, imp) {
					t.Errorf("%s imports %s: %s imports only the standard library and %v", path, imp, r.dir, r.only)
				}
			}
			for _, e := range everywhereBut {
				if !strings.HasPrefix(imp, e.imported) && !under(imp, e.imported) {
					continue
				}
				if strings.HasSuffix(name, "_test.go") && !e.testsToo || anyUnder(imp, e.except) {
					continue
				}
				if !anyUnder(rel, e.allowed) {
					t.Errorf("%s imports %s: only %v may", path, imp, e.allowed)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking the module: %v", err)
	}
	if files < 10 {
		t.Fatalf("checked %d Go files; the walk is looking in the wrong place", files)
	}
}

// under reports whether path is dir or inside it.
func under(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+"/")
}

func anyUnder(path string, dirs []string) bool {
	for _, d := range dirs {
		if under(path, d) {
			return true
		}
	}
	return false
}

func TestUnderRules(t *testing.T) {
	tests := []struct {
		name      string
		path, dir string
		want      bool
	}{
		{name: "same", path: "pool", dir: "pool", want: true},
		{name: "child", path: "runner/runsc", dir: "runner", want: true},
		{name: "sibling prefix", path: "poolside", dir: "pool", want: false},
		{name: "parent", path: "runner", dir: "runner/runsc", want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := under(tc.path, tc.dir); got != tc.want {
				t.Errorf("under(%q, %q) = %v, want %v", tc.path, tc.dir, got, tc.want)
			}
		})
	}
}
