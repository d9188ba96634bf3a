package templates

import (
	"errors"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	valid := func() Template {
		return Template{
			Name:            "py",
			Language:        "python",
			Suite:           "bookworm",
			Packages:        []string{"python3", "python3-numpy"},
			VersionCommands: map[string][]string{"python": {"python3", "--version"}},
			Limits:          Limits{MemoryMB: 512, Processes: 128, CPUs: 1, DiskMB: 256, OpenFiles: 1024, TimeoutMS: 10000},
			PoolSize:        2,
		}
	}
	tests := []struct {
		name   string
		change func(*Template)
		want   string // substring of the error; "" means valid
	}{
		{name: "valid", change: func(*Template) {}},
		{name: "pool size zero is allowed", change: func(t *Template) { t.PoolSize = 0 }},
		{name: "empty name", change: func(t *Template) { t.Name = "" }, want: "name must match"},
		{name: "name with slash", change: func(t *Template) { t.Name = "../etc" }, want: "name must match"},
		{name: "unknown language", change: func(t *Template) { t.Language = "ruby" }, want: `language "ruby"`},
		{name: "bad suite", change: func(t *Template) { t.Suite = "Bookworm Main" }, want: "suite"},
		{name: "no packages", change: func(t *Template) { t.Packages = nil }, want: "no packages"},
		{name: "bad package", change: func(t *Template) { t.Packages = []string{"python3", "--force"} }, want: `package "--force"`},
		{name: "duplicate package", change: func(t *Template) { t.Packages = []string{"python3", "python3"} }, want: "listed twice"},
		{name: "node startup heaps", change: func(t *Template) { t.Language = "node"; t.StartupHeapsMB = []int{0, 313} }},
		{name: "startup heaps for python", change: func(t *Template) { t.StartupHeapsMB = []int{313} }, want: "only node takes startup snapshots"},
		{name: "negative startup heap", change: func(t *Template) { t.Language = "node"; t.StartupHeapsMB = []int{-1} }, want: "startup heap -1 MiB"},
		{name: "bad stub package", change: func(t *Template) { t.StubPackages = []string{"Pythran"} }, want: `stub package "Pythran"`},
		{name: "stub also a package", change: func(t *Template) { t.StubPackages = []string{"python3-numpy"} }, want: "also listed"},
		{name: "empty version argv", change: func(t *Template) { t.VersionCommands["numpy"] = nil }, want: `version command "numpy"`},
		{name: "zero memory", change: func(t *Template) { t.Limits.MemoryMB = 0 }, want: "limits must all be positive"},
		{name: "warm imports and defaults", change: func(t *Template) {
			t.WarmImports = []string{"numpy", "_x2"}
			t.DefaultFor = []string{"runs", "sessions"}
		}},
		{name: "dotted warm import", change: func(t *Template) { t.WarmImports = []string{"matplotlib.pyplot"} }, want: `warm import "matplotlib.pyplot" is not a top-level module name`},
		{name: "duplicate warm import", change: func(t *Template) { t.WarmImports = []string{"numpy", "numpy"} }, want: `warm import "numpy" listed twice`},
		{name: "warm imports of node", change: func(t *Template) { t.Language = "node"; t.WarmImports = []string{"fs"} }, want: `language "node" may not have them`},
		{name: "unknown default", change: func(t *Template) { t.DefaultFor = []string{"cells"} }, want: `default_for "cells" is not "runs" or "sessions"`},
		{name: "duplicate default", change: func(t *Template) { t.DefaultFor = []string{"runs", "runs"} }, want: `default_for "runs" listed twice`},
		{name: "negative pool", change: func(t *Template) { t.PoolSize = -1 }, want: "pool_size -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl := valid()
			tt.change(&tmpl)
			err := tmpl.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v, want ErrInvalid containing %q", err, tt.want)
			}
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	err := Template{Name: "x", Language: "cobol"}.Validate()
	for _, want := range []string{`language "cobol"`, "suite", "no packages", "limits"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to mention %q", err, want)
		}
	}
}
