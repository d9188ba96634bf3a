package templates

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func TestAll(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatalf("All: %v", err)
	}
	var names []string
	for _, tmpl := range all {
		names = append(names, tmpl.Name)
	}
	if want := []string{"node", "python", "python-slim"}; !slices.Equal(names, want) {
		t.Errorf("names = %v, want %v", names, want)
	}
}

func TestGet(t *testing.T) {
	tests := []struct {
		name     string
		language string
		packages []string
		stubs    []string
		err      error
	}{
		{name: "python", language: "python", packages: []string{
			"libopenblas0-serial", "python3", "python3-bs4", "python3-ipython", "python3-matplotlib", "python3-numpy",
			"python3-openpyxl", "python3-pandas", "python3-pil", "python3-pip", "python3-requests", "python3-scipy",
			"python3-seaborn", "python3-sympy", "python3-tabulate", "python3-yaml",
		}, stubs: []string{"python3-pythran", "unicode-data"}},
		{name: "python-slim", language: "python", packages: []string{
			"libopenblas0-serial", "python3", "python3-bs4", "python3-ipython", "python3-matplotlib", "python3-numpy",
			"python3-openpyxl", "python3-pandas", "python3-pil", "python3-pip", "python3-requests", "python3-scipy",
			"python3-seaborn", "python3-sympy", "python3-tabulate", "python3-yaml",
		}, stubs: []string{"python3-pythran", "unicode-data"}},
		{name: "node", language: "node", packages: []string{"ca-certificates", "nodejs", "npm"}},
		{name: "ruby", err: ErrUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Get(tt.name)
			if !errors.Is(err, tt.err) {
				t.Fatalf("Get(%q) error = %v, want %v", tt.name, err, tt.err)
			}
			if tt.err != nil {
				return
			}
			if got.Language != tt.language || !slices.Equal(got.Packages, tt.packages) || !slices.Equal(got.StubPackages, tt.stubs) {
				t.Errorf("Get(%q) = language %q packages %v stubs %v, want %q %v %v", tt.name, got.Language, got.Packages, got.StubPackages, tt.language, tt.packages, tt.stubs)
			}
			want := Limits{MemoryMB: 512, Processes: 64, CPUs: 1, DiskMB: 256, OpenFiles: 1024, TimeoutMS: 10000}
			if got.Limits != want || got.PoolSize != 2 || got.Suite != "bookworm" {
				t.Errorf("Get(%q) = limits %+v pool %d suite %q", tt.name, got.Limits, got.PoolSize, got.Suite)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	const good = `{"name":"tiny","language":"node","suite":"bookworm","packages":["nodejs"],
		"limits":{"memory_mb":64,"processes":8,"cpus":0.5,"disk_mb":16,"open_files":64,"timeout_ms":1000}}`
	tests := []struct {
		name  string
		files fstest.MapFS
		want  []string
		err   error
	}{
		{name: "one good file", files: fstest.MapFS{"tiny.json": {Data: []byte(good)}}, want: []string{"tiny"}},
		{name: "other files ignored", files: fstest.MapFS{"tiny.json": {Data: []byte(good)}, "README.md": {Data: []byte("x")}}, want: []string{"tiny"}},
		{name: "file name differs from template name", files: fstest.MapFS{"small.json": {Data: []byte(good)}}, err: ErrInvalid},
		{name: "unknown field", files: fstest.MapFS{"x.json": {Data: []byte(`{"name":"x","colour":"red"}`)}}, err: ErrInvalid},
		{name: "not json", files: fstest.MapFS{"x.json": {Data: []byte(`name: x`)}}, err: ErrInvalid},
		{name: "trailing data", files: fstest.MapFS{"tiny.json": {Data: []byte(good + `{}`)}}, err: ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			all, err := Load(tt.files)
			if !errors.Is(err, tt.err) {
				t.Fatalf("Load error = %v, want %v", err, tt.err)
			}
			var names []string
			for _, tmpl := range all {
				names = append(names, tmpl.Name)
			}
			if !slices.Equal(names, tt.want) {
				t.Errorf("names = %v, want %v", names, tt.want)
			}
		})
	}
}

// The two Python templates share one root filesystem, so a fresh machine
// builds it once; they differ in warm-up and in which requests they serve.
func TestPythonTemplatesShareTheirImage(t *testing.T) {
	full, err := Get("python")
	if err != nil {
		t.Fatal(err)
	}
	slim, err := Get("python-slim")
	if err != nil {
		t.Fatal(err)
	}
	if full.Key() != slim.Key() {
		t.Errorf("keys %s and %s differ: python-slim would build a second root filesystem", full.Key(), slim.Key())
	}
	if slim.Warmup != "" || len(slim.WarmImports) != 0 || !slim.Snapshot {
		t.Errorf("python-slim: warmup %q, warm imports %v, snapshot %v; want none, none, true", slim.Warmup, slim.WarmImports, slim.Snapshot)
	}
	if want := []string{"matplotlib", "numpy", "pandas", "scipy", "seaborn"}; !slices.Equal(full.WarmImports, want) {
		t.Errorf("python warm imports = %v, want %v", full.WarmImports, want)
	}
	if !slices.Equal(full.DefaultFor, []string{"sessions"}) || !slices.Equal(slim.DefaultFor, []string{"runs"}) {
		t.Errorf("default_for: python %v, python-slim %v; want [sessions], [runs]", full.DefaultFor, slim.DefaultFor)
	}
}

func TestCheckSet(t *testing.T) {
	tmpl := func(name, lang string, defaults ...string) Template {
		return Template{Name: name, Language: lang, Suite: "bookworm", Packages: []string{name}, DefaultFor: defaults,
			VersionCommands: map[string][]string{"v": {"true"}}}
	}
	twin := tmpl("b", "python")
	twin.Packages = []string{"a"}
	otherVersions := twin
	otherVersions.VersionCommands = map[string][]string{"v": {"false"}}
	tests := []struct {
		name string
		all  []Template
		want string // "" means valid
	}{
		{name: "one default each", all: []Template{tmpl("a", "python", "runs"), tmpl("b", "python", "sessions"), tmpl("c", "node", "runs", "sessions")}},
		{name: "two run defaults", all: []Template{tmpl("a", "python", "runs"), tmpl("b", "python", "runs", "sessions")},
			want: `templates "a" and "b" are both the default for runs of python`},
		{name: "one image, same versions", all: []Template{tmpl("a", "python"), twin}},
		{name: "one image, other versions", all: []Template{tmpl("a", "python"), otherVersions},
			want: `templates "a" and "b" share a root filesystem but not its version commands`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckSet(tt.all)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("CheckSet = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("CheckSet = %v, want ErrInvalid containing %q", err, tt.want)
			}
		})
	}
}
