package memory

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/paddock-dev/paddock/benchmarks/internal/report"
)

func TestReadMemCgroup(t *testing.T) {
	tests := []struct {
		name  string
		v2    bool
		files map[string]string
		want  report.MemSample
	}{
		{"cgroup v1", false, map[string]string{
			"memory.usage_in_bytes": "31457280\n",
			"memory.stat":           "cache 4096\nrss 1048576\nshmem 20971520\ntotal_rss 2097152\ntotal_shmem 20971520\n",
		}, report.MemSample{Usage: 31457280, RSS: 2097152, Shmem: 20971520}},
		{"cgroup v2", true, map[string]string{
			"memory.current": "41943040\n",
			"memory.stat":    "anon 3145728\nfile 8192\nkernel 65536\nshmem 26214400\n",
		}, report.MemSample{Usage: 41943040, RSS: 3145728, Shmem: 26214400}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := readMemCgroup(dir, tt.v2)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if _, err := readMemCgroup(dir, !tt.v2); err == nil {
				t.Error("read the other version's files without error")
			}
		})
	}
	m := report.MemRow{Samples: []report.MemSample{{Usage: 31457280}, {Usage: 10485760}}}
	if mb := m.MeanMB(func(s report.MemSample) uint64 { return s.Usage }); mb != 20 {
		t.Errorf("mean usage %v MiB, want 20", mb)
	}
}
