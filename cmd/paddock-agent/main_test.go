package main

import (
	"io"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/runner/agent"
)

func TestParseFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		args      []string
		want      agent.Config
		wantDebug bool
		wantErr   string
	}{
		{
			name: "defaults",
			want: agent.Config{Language: "python", UID: 1000, GID: 1000, Workdir: "/workspace", NodeStartupDir: "/usr/lib/paddock"},
		},
		{
			name: "sandbox command line",
			args: []string{"--language", "node", "--uid", "1000", "--gid", "1000", "--workdir", "/workspace"},
			want: agent.Config{Language: "node", UID: 1000, GID: 1000, Workdir: "/workspace", NodeStartupDir: "/usr/lib/paddock"},
		},
		{
			name:      "test command line",
			args:      []string{"--language=python", "--uid=0", "--gid=0", "--workdir=/tmp/w", "--interpreter=/usr/bin/python3", "--warmup-b64=aW1wb3J0IGpzb24=", "--debug"},
			want:      agent.Config{Language: "python", Interpreter: "/usr/bin/python3", Workdir: "/tmp/w", Warmup: "import json", NodeStartupDir: "/usr/lib/paddock"},
			wantDebug: true,
		},
		{
			name: "node heap ceiling",
			args: []string{"--language=node", "--heap-mb=313"},
			want: agent.Config{Language: "node", UID: 1000, GID: 1000, Workdir: "/workspace", HeapMB: 313, NodeStartupDir: "/usr/lib/paddock"},
		},
		{
			name: "no node startup snapshots",
			args: []string{"--language=node", "--node-startup-dir="},
			want: agent.Config{Language: "node", UID: 1000, GID: 1000, Workdir: "/workspace"},
		},
		{name: "relative node startup snapshot directory", args: []string{"--node-startup-dir=lib"}, wantErr: "not an absolute path"},
		{name: "heap ceiling for python", args: []string{"--heap-mb=313"}, wantErr: "only node"},
		{name: "bad base64", args: []string{"--warmup-b64=!!"}, wantErr: "decoding --warmup-b64"},
		{name: "unknown language", args: []string{"--language=ruby"}, wantErr: `unknown language "ruby"`},
		{name: "relative workdir", args: []string{"--workdir=w"}, wantErr: "not a clean absolute path"},
		{name: "stray argument", args: []string{"extra"}, wantErr: "unexpected arguments"},
		{name: "unknown flag", args: []string{"--nope"}, wantErr: "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, debug, err := parseFlags(tt.args, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("parseFlags error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want || debug != tt.wantDebug {
				t.Errorf("parseFlags = %+v, %v, %v; want %+v, %v", got, debug, err, tt.want, tt.wantDebug)
			}
		})
	}
}
