package agent

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/runner/wire"
)

func TestEncodeDriverFrame(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		req  driverRequest
		want string
	}{
		{name: "run", req: driverRequest{Op: opRun, Code: "print(1)"}, want: "\x00\x00\x00\x1e" + `{"op":"run","code":"print(1)"}`},
		{name: "run with args and env", req: driverRequest{Op: opRun, Args: []string{"a"}, Env: map[string]string{"K": "V"}}, want: "\x00\x00\x00\x29" + `{"op":"run","args":["a"],"env":{"K":"V"}}`},
		{name: "execute", req: driverRequest{Op: opExecute, Seq: 3, Count: 2, Code: "x"}, want: "\x00\x00\x00\x2d" + `{"op":"execute","code":"x","seq":3,"count":2}`},
		{name: "kernel", req: driverRequest{Op: opKernel, Source: "s"}, want: "\x00\x00\x00\x1c" + `{"op":"kernel","source":"s"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := encodeDriverFrame(tt.req)
			if err != nil || string(got) != tt.want {
				t.Errorf("encodeDriverFrame = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestDriverReader(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		stream  string
		want    []driverReport
		wantErr error
	}{
		{name: "nothing", stream: "", wantErr: io.EOF},
		{name: "limit", stream: "\x00\x00\x00\x22" + `{"op":"limit","limit":"processes"}`, want: []driverReport{{Op: opLimit, Limit: "processes"}}, wantErr: io.EOF},
		{
			name: "events and done",
			stream: "\x00\x00\x00\x10" + `{"op":"ready"}  ` +
				"\x00\x00\x00\x4c" + `{"op":"event","seq":1,"type":"stream","stream":"stdout","text":"hi\n\u0000"}` +
				"\x00\x00\x00\x56" + `{"op":"done","seq":1,"status":"error","error":{"name":"E","value":"v","traceback":[]}}`,
			want: []driverReport{
				{Op: opReady},
				{Op: opEvent, Seq: 1, Event: wire.Event{Type: "stream", Stream: "stdout", Text: "hi\n\x00"}},
				{Op: opDone, Seq: 1, Status: "error", Event: wire.Event{Error: &wire.ExecError{Name: "E", Value: "v", Traceback: []string{}}}},
			},
			wantErr: io.EOF,
		},
		{name: "cut in the header", stream: "\x00\x00", wantErr: io.ErrUnexpectedEOF},
		{name: "cut in the body", stream: "\x00\x00\x00\x10{", wantErr: io.ErrUnexpectedEOF},
		{name: "not JSON", stream: "\x00\x00\x00\x01x", wantErr: ErrDriverProtocol},
		{name: "too large", stream: "\xff\xff\xff\xff", wantErr: ErrDriverProtocol},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newDriverReaderSize(strings.NewReader(tt.stream), 16)
			var got []driverReport
			for {
				rep, err := r.next()
				if err != nil {
					if !errors.Is(err, tt.wantErr) {
						t.Errorf("after %d reports: %v, want %v", len(got), err, tt.wantErr)
					}
					break
				}
				got = append(got, rep)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("reports %+v, want %+v", got, tt.want)
			}
		})
	}
}

// The hints the drivers write are frames the agent decodes, and neither
// driver reports an exit status on fd 4 any more.
func TestDriversWriteLimitHints(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		want string
	}{
		{name: "driver.py", src: pythonDriver, want: `hint = b'{"op":"limit","limit":"%s"}' % limit`},
		{name: "driver.js", src: nodeDriver, want: "const body = Buffer.from(`{\"op\":\"limit\",\"limit\":\"${limit}\"}`);"},
	}
	for _, tt := range tests {
		if !strings.Contains(tt.src, tt.want) {
			t.Errorf("%s does not write %s", tt.name, tt.want)
		}
		if strings.Contains(tt.src, `"op":"exit"`) {
			t.Errorf("%s still writes an exit report", tt.name)
		}
	}
	for _, limit := range []string{"processes", "disk"} {
		body := `{"op":"limit","limit":"` + limit + `"}`
		frame := append([]byte{0, 0, 0, byte(len(body))}, body...)
		r := newDriverReaderSize(bytes.NewReader(frame), reportBuffer)
		if rep, err := r.next(); err != nil || rep.Op != opLimit || rep.Limit != limit {
			t.Errorf("next = %+v, %v; want the %s hint", rep, err, limit)
		}
	}
}
