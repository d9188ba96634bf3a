package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{name: "python", cfg: Config{Language: "python", UID: 1000, GID: 1000, Workdir: "/workspace"}},
		{name: "node as root", cfg: Config{Language: "node", Workdir: "/w"}},
		{name: "unknown language", cfg: Config{Language: "ruby", Workdir: "/w"}, wantErr: `unknown language "ruby"`},
		{name: "relative workdir", cfg: Config{Language: "python", Workdir: "w"}, wantErr: "not a clean absolute path"},
		{name: "unclean workdir", cfg: Config{Language: "python", Workdir: "/w/"}, wantErr: "not a clean absolute path"},
		{name: "negative uid", cfg: Config{Language: "python", UID: -1, Workdir: "/w"}, wantErr: "negative uid"},
		{name: "NUL in warm-up", cfg: Config{Language: "python", Workdir: "/w", Warmup: "a\x00"}, wantErr: "NUL"},
		{name: "node heap ceiling", cfg: Config{Language: "node", Workdir: "/w", HeapMB: 313}},
		{name: "python heap ceiling", cfg: Config{Language: "python", Workdir: "/w", HeapMB: 313}, wantErr: "only node"},
		{name: "negative heap ceiling", cfg: Config{Language: "node", Workdir: "/w", HeapMB: -1}, wantErr: "never negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.wantErr == "" && err != nil {
				t.Errorf("Validate = %v, want nil", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("Validate = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestLookInterpreter(t *testing.T) {
	t.Parallel()
	plain := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(plain, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr bool
	}{
		{name: "on the search path", in: "sh", want: "/usr/bin/sh"},
		{name: "absolute", in: "/bin/sh", want: "/bin/sh"},
		{name: "missing", in: "no-such-interpreter-here", wantErr: true},
		{name: "not executable", in: plain, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := lookInterpreter(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("lookInterpreter(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}
