package agent

import (
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/paddock-dev/paddock/internal/prereq"
)

func TestKillTarget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		self    int
		own     int
		pgid    int
		want    int
		wantErr bool
	}{
		{name: "init kills everything", self: 1, own: 1, pgid: 42, want: -1},
		{name: "init without a group", self: 1, own: 1, pgid: 0, want: -1},
		{name: "not init kills the group", self: 500, own: 500, pgid: 42, want: -42},
		{name: "not init never everything", self: 500, own: 500, pgid: 1, wantErr: true},
		{name: "no group", self: 500, own: 500, pgid: 0, wantErr: true},
		{name: "negative group", self: 500, own: 500, pgid: -7, wantErr: true},
		{name: "own group", self: 500, own: 77, pgid: 77, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := killTarget(tt.self, tt.own, tt.pgid)
			if tt.wantErr {
				if !errors.Is(err, ErrUnsafeKill) {
					t.Errorf("killTarget = %d, %v; want ErrUnsafeKill", got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("killTarget = %d, %v; want %d", got, err, tt.want)
			}
		})
	}
}

// The tests are not PID 1: killAll must signal the interpreter's group and
// nothing else, and must refuse a group it cannot trust.
func TestKillAllOutsideSandbox(t *testing.T) {
	t.Parallel()
	if os.Getpid() == 1 {
		prereq.Missing(t, "the tests run as PID 1", "run them under a shell or an init, not as a container's entrypoint")
	}
	tests := []struct {
		name     string
		pgid     int
		wantPids []int
		wantErr  bool
	}{
		{name: "group", pgid: 123456, wantPids: []int{-123456}},
		{name: "group gone", pgid: 654321, wantPids: []int{-654321}},
		{name: "init's group", pgid: 1, wantErr: true},
		{name: "own group", pgid: syscall.Getpgrp(), wantErr: true},
		{name: "no group", pgid: 0, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pids []int
			k := killer{pgid: tt.pgid, signal: func(pid int, sig syscall.Signal) error {
				if sig != syscall.SIGKILL {
					t.Errorf("signal %v, want SIGKILL", sig)
				}
				pids = append(pids, pid)
				return syscall.ESRCH
			}}
			err := k.killAll()
			if (err != nil) != tt.wantErr {
				t.Errorf("killAll = %v, want error %v", err, tt.wantErr)
			}
			if len(pids) != len(tt.wantPids) || (len(pids) == 1 && pids[0] != tt.wantPids[0]) {
				t.Errorf("signalled %v, want %v", pids, tt.wantPids)
			}
		})
	}
}
