package templates

import "testing"

// The expected keys were computed outside Go, for example:
//
//	printf 'paddock-rootfs\nrecipe 1\nsuite bookworm\npackages nodejs,python3\nstubs \n' | sha256sum | cut -c1-16
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
		{name: "literal template", change: func(*Template) {}, want: "f9afca06b83a4ef0"},
		{name: "package order does not matter", change: func(t *Template) { t.Packages = []string{"nodejs", "python3"} }, want: "f9afca06b83a4ef0"},
		{name: "limits do not matter", change: func(t *Template) { t.Limits.MemoryMB = 4096 }, want: "f9afca06b83a4ef0"},
		{name: "pool size does not matter", change: func(t *Template) { t.PoolSize = 9 }, want: "f9afca06b83a4ef0"},
		{name: "warmup does not matter", change: func(t *Template) { t.Warmup = "import numpy" }, want: "f9afca06b83a4ef0"},
		{name: "name does not matter", change: func(t *Template) { t.Name = "other" }, want: "f9afca06b83a4ef0"},
		{name: "suite matters", change: func(t *Template) { t.Suite = "trixie" }, want: "4482d5d0b5bbe0e9"},
		{name: "packages matter", change: func(t *Template) { t.Packages = []string{"nodejs"} }, want: "c1a941c18a51253d"},
		// printf '...stubs \nnode-startup %s heaps 0,313\n' "$(sha256sum templates/node_startup.js | cut -c1-64)"
		{name: "node adds its startup snapshots, heaps sorted", change: func(t *Template) { t.Language = "node"; t.StartupHeapsMB = []int{313, 0} }, want: "3d84ded4585a161a"},
		{name: "node without startup heaps", change: func(t *Template) { t.Language = "node" }, want: "f9afca06b83a4ef0"},
		{name: "stub packages matter, sorted", change: func(t *Template) { t.StubPackages = []string{"zz", "python3-pythran"} }, want: "4b1bc6927842e5e5"},
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
