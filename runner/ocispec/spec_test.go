package ocispec

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/paddock-dev/paddock/runner"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestOCISpecGolden(t *testing.T) {
	tests := []struct {
		name string
		spec runner.Spec
	}{
		{
			name: "python-defaults",
			spec: runner.Spec{Template: "python", Language: "python", Rootfs: "/cache/rootfs/python-0123",
				Labels: map[string]string{"template": "python"}},
		},
		{
			name: "node-limits-warmup",
			spec: runner.Spec{Template: "node", Language: "node", Rootfs: "/cache/rootfs/node-4567", Warmup: "require('fs')",
				Limits: runner.Limits{MemoryBytes: 256 << 20, Processes: 64, CPUs: 0.5, DiskBytes: 64 << 20, OpenFiles: 256}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.MarshalIndent(Render("pd-0123456789abcdef", tt.spec, "/state/agent"), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "spec-"+tt.name+".json")
			if *update {
				if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if string(want) != string(got)+"\n" {
				t.Errorf("spec differs from %s (run with -update after checking):\n%s", golden, got)
			}
		})
	}
}

func TestNodeHeapMB(t *testing.T) {
	tests := []struct {
		memMB int64
		want  int64
	}{
		{memMB: 64, want: 0},
		{memMB: 128, want: 0},
		{memMB: 155, want: 0}, // 63 MiB: under the minimum
		{memMB: 156, want: 64},
		{memMB: 256, want: 134},
		{memMB: 512, want: 313},
		{memMB: 2048, want: 1388},
	}
	for _, tt := range tests {
		if got := NodeHeapMB(tt.memMB << 20); got != tt.want {
			t.Errorf("NodeHeapMB(%d MiB) = %d, want %d", tt.memMB, got, tt.want)
		}
	}
}
