package agent

import (
	"reflect"
	"syscall"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner/wire"
)

func TestExitFrame(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		ws     syscall.WaitStatus // exit code << 8, or the signal number
		reason string
		out    pumpResult
		want   wire.Exit
	}{
		{name: "ok", ws: 0, want: wire.Exit{Reason: "ok", ExecNS: 5}},
		{name: "error", ws: 3 << 8, want: wire.Exit{ExitCode: 3, Reason: "error", ExecNS: 5}},
		{name: "killed", ws: 9, want: wire.Exit{ExitCode: 137, Signal: 9, Reason: "killed", ExecNS: 5}},
		{name: "segfault", ws: 11, want: wire.Exit{ExitCode: 139, Signal: 11, Reason: "killed", ExecNS: 5}},
		{name: "timeout", ws: 9, reason: "timeout", want: wire.Exit{ExitCode: 137, Signal: 9, Reason: "timeout", ExecNS: 5}},
		{
			name: "output limit after a clean exit", ws: 0, reason: "output_limit", out: pumpResult{truncated: true},
			want: wire.Exit{Reason: "output_limit", StdoutTruncated: true, ExecNS: 5},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := exitFrame(tt.ws, tt.reason, tt.out, pumpResult{}, 5*time.Nanosecond)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("exitFrame = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestEnderFirstReasonWins(t *testing.T) {
	t.Parallel()
	kills := 0
	e := &ender{kill: func() { kills++ }}
	e.end("timeout")
	e.end("output_limit")
	if e.why() != "timeout" || kills != 2 {
		t.Errorf("reason %q after %d kills, want timeout after 2", e.why(), kills)
	}
}
