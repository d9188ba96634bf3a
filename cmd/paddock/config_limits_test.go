package main

import (
	"strings"
	"testing"
)

func TestConfigMaxLimits(t *testing.T) {
	tests := []struct {
		name    string
		flags   []string
		wantErr string // "" for a valid config
	}{
		{name: "defaults"},
		{name: "raised", flags: []string{"--max-memory-mb=8192", "--max-processes=1024", "--max-cpus=8", "--max-disk-mb=65536", "--max-open-files=65536"}},
		{name: "at the minima", flags: []string{"--max-memory-mb=64", "--max-processes=16", "--max-cpus=0.25", "--max-disk-mb=16", "--max-open-files=64"}},
		{name: "memory below the minimum", flags: []string{"--max-memory-mb=32"}, wantErr: "--max-memory-mb must be between 64 and 1048576, got 32"},
		{name: "processes below the minimum", flags: []string{"--max-processes=8"}, wantErr: "--max-processes must be between 16 and 1048576, got 8"},
		{name: "no cpus", flags: []string{"--max-cpus=0"}, wantErr: "--max-cpus must be between 0.25 and 1024, got 0"},
		{name: "disk below the minimum", flags: []string{"--max-disk-mb=-1"}, wantErr: "--max-disk-mb must be between 16 and 16777216, got -1"},
		{name: "open files below the minimum", flags: []string{"--max-open-files=63"}, wantErr: "--max-open-files must be between 64 and 1048576, got 63"},
		{name: "session lifetime", flags: []string{"--max-session-lifetime=1h"}},
		{name: "no session lifetime", flags: []string{"--max-session-lifetime=0s"}, wantErr: "--max-session-lifetime must be at least 1s"},
		{name: "start budget and queue deadline", flags: []string{"--start-budget=3", "--queue-deadline=100ms"}},
		{name: "negative start budget", flags: []string{"--start-budget=-1"}, wantErr: "--start-budget must be at least 0 and --queue-deadline at least 100ms"},
		{name: "short queue deadline", flags: []string{"--queue-deadline=99ms"}, wantErr: "--start-budget must be at least 0 and --queue-deadline at least 100ms"},
		{name: "busy start budget and hold", flags: []string{"--busy-start-budget=0", "--busy-hold=0"}},
		{name: "negative busy start budget", flags: []string{"--busy-start-budget=-1"}, wantErr: "--busy-start-budget and --busy-cell-max must be at least 0 and --busy-hold between 0 and 1m"},
		{name: "negative busy cell max", flags: []string{"--busy-cell-max=-1s"}, wantErr: "--busy-start-budget and --busy-cell-max must be at least 0 and --busy-hold between 0 and 1m"},
		{name: "body and output at their ceilings", flags: []string{"--max-body=1073741824", "--max-output=67108864"}},
		{name: "output past its ceiling", flags: []string{"--max-output=67108865"}, wantErr: "--max-output between 1 KiB and 64 MiB, got 10485760 and 67108865"},
		{name: "body past its ceiling", flags: []string{"--max-body=1073741825"}, wantErr: "--max-body must be between 1 KiB and 1 GiB"},
		{name: "output below its floor", flags: []string{"--max-output=1023"}, wantErr: "--max-output between 1 KiB and 64 MiB"},
		{name: "long busy hold", flags: []string{"--busy-hold=61s"}, wantErr: "--busy-start-budget and --busy-cell-max must be at least 0 and --busy-hold between 0 and 1m"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _, err := parse("serve", append([]string{"--runsc=/bin/true"}, tc.flags...))
			if err != nil {
				t.Fatal(err)
			}
			err = cfg.Validate()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("Validate: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("Validate error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
