package agentconn

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReadCounter(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "memory.oom_control")
	if err := os.WriteFile(path, []byte("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		path   string
		key    string
		want   int
		wantOK bool
	}{
		{"present", path, "oom_kill", 3, true},
		{"missing key", path, "nope", 0, false},
		{"missing file", filepath.Join(dir, "absent"), "oom_kill", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, ok := readCounter(tt.path, tt.key)
			if n != tt.want || ok != tt.wantOK {
				t.Errorf("readCounter = %d, %v; want %d, %v", n, ok, tt.want, tt.wantOK)
			}
		})
	}
}
