package agentconn

import (
	"errors"
	"slices"
	"testing"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/wire"
)

// The agent's codes are the runner's kinds, one for one.
func TestFileErrorCodesAreKinds(t *testing.T) {
	var kinds []string
	for _, k := range runner.FileErrorKinds {
		kinds = append(kinds, string(k))
	}
	if !slices.Equal(wire.FileErrCodes, kinds) {
		t.Errorf("wire codes %q, runner kinds %q: want the same list", wire.FileErrCodes, kinds)
	}
}

func TestAckErr(t *testing.T) {
	tests := []struct {
		name     string
		ack      wire.Ack
		wantKind runner.FileErrorKind // "" when no FileError
		wantIs   error
		wantText string
	}{
		{name: "ok", ack: wire.Ack{ID: 1}},
		{name: "name too long", ack: wire.Ack{Error: "openat n: file name too long", BadRequest: true, Code: "name_too_long"},
			wantKind: runner.FileNameTooLong, wantText: `write "p": name_too_long: openat n: file name too long`},
		{name: "disk full", ack: wire.Ack{Error: "write t: no space left on device", BadRequest: true, Code: "no_space"},
			wantKind: runner.FileNoSpace, wantText: `write "p": no_space: write t: no space left on device`},
		{name: "missing", ack: wire.Ack{Error: "openat p: no such file or directory", NotFound: true, Code: "not_found"},
			wantKind: runner.FileNotFound, wantIs: runner.ErrNotFound, wantText: `write "p": not_found: openat p: no such file or directory`},
		{name: "unknown code is not the client's fault", ack: wire.Ack{Error: "x", BadRequest: true, Code: "what"},
			wantText: `agent answered with unknown file error code "what": x`},
		{name: "malformed request", ack: wire.Ack{Error: "decoding: x", BadRequest: true},
			wantIs: runner.ErrBadRequest, wantText: "bad run request: decoding: x"},
		{name: "agent failure", ack: wire.Ack{Error: "read f: input/output error"}, wantText: "read f: input/output error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := fileOpErr(ackErr(tt.ack), runner.FileWrite, "p")
			if tt.wantText == "" {
				if err != nil {
					t.Fatalf("ackErr = %v, want nil", err)
				}
				return
			}
			if err == nil || err.Error() != tt.wantText {
				t.Fatalf("ackErr = %v, want %s", err, tt.wantText)
			}
			var fe *runner.FileError
			if got := errors.As(err, &fe); got != (tt.wantKind != "") || got && fe.Kind != tt.wantKind {
				t.Errorf("FileError %+v, want kind %q", fe, tt.wantKind)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("%v is not %v", err, tt.wantIs)
			}
		})
	}
}
