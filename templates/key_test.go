package templates

import "testing"

// The expected keys were computed outside Go, for example:
//
//	printf 'paddock-rootfs\nrecipe 2\nsuite bookworm\npackages nodejs,python3\nstubs \n' | sha256sum | cut -c1-16
func TestKey(t *testing.T) {
	base := Template{
		Name:     "demo",
		Language: "python",
		Suite:    "bookworm",
		Packages: []string{"python3", "nodejs"},
		Limits:   Limits{MemoryMB: 512, Processes: 128, CPUs: 1, DiskMB: 256, OpenFiles: 1024, TimeoutMS: 10000},
		PoolSize: 2,
	}
	tests := []struct {
		name   string
		change func(*Template)
		want   string
	}{
		{name: "literal template", change: func(*Template) {}, want: "e60f6901d8e8c4ea"},
		{name: "package order does not matter", change: func(t *Template) { t.Packages = []string{"nodejs", "python3"} }, want: "e60f6901d8e8c4ea"},
		{name: "limits do not matter", change: func(t *Template) { t.Limits.MemoryMB = 4096 }, want: "e60f6901d8e8c4ea"},
		{name: "pool size does not matter", change: func(t *Template) { t.PoolSize = 9 }, want: "e60f6901d8e8c4ea"},
		{name: "warmup does not matter", change: func(t *Template) { t.Warmup = "import numpy" }, want: "e60f6901d8e8c4ea"},
		{name: "name does not matter", change: func(t *Template) { t.Name = "other" }, want: "e60f6901d8e8c4ea"},
		{name: "suite matters", change: func(t *Template) { t.Suite = "trixie" }, want: "b16b33ae11523fe2"},
		{name: "packages matter", change: func(t *Template) { t.Packages = []string{"nodejs"} }, want: "a9d95862e7d94a2a"},
		// printf '...stubs \nnode-startup %s heaps 0,313\n' "$(sha256sum templates/node_startup.js | cut -c1-64)"
		{name: "node adds its startup snapshots, heaps sorted", change: func(t *Template) { t.Language = "node"; t.StartupHeapsMB = []int{313, 0} }, want: "c577904ca2cb229f"},
		{name: "node without startup heaps", change: func(t *Template) { t.Language = "node" }, want: "e60f6901d8e8c4ea"},
		{name: "stub packages matter, sorted", change: func(t *Template) { t.StubPackages = []string{"zz", "python3-pythran"} }, want: "0d8504f847a95e21"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl := base
			tmpl.Packages = []string{"python3", "nodejs"}
			tt.change(&tmpl)
			if got := tmpl.Key(); got != tt.want {
				t.Errorf("Key() = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestKeyDoesNotReorderPackages(t *testing.T) {
	tmpl := Template{Suite: "bookworm", Packages: []string{"python3", "nodejs"}}
	tmpl.Key()
	if tmpl.Packages[0] != "python3" || tmpl.Packages[1] != "nodejs" {
		t.Errorf("Key reordered the template's packages: %v", tmpl.Packages)
	}
}
