package wire_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/paddock-dev/paddock/runner/wire"
)

// TestMessageJSON pins the JSON both ends exchange: the encoding of each
// message, and that the literal decodes back to the same value.
func TestMessageJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		msg  any // a wire message value, not a pointer
		want string
	}{
		{
			name: "hello without interpreter",
			msg:  wire.Hello{Version: 1, Language: "python"},
			want: `{"version":1,"language":"python"}`,
		},
		{
			name: "hello with interpreter",
			msg:  wire.Hello{Version: 1, Language: "node", Interpreter: 42},
			want: `{"version":1,"language":"node","interpreter_pid":42}`,
		},
		{
			name: "minimal run",
			msg:  wire.Run{Code: "print(1)"},
			want: `{"code":"print(1)","timeout_ms":0,"max_stdout":0,"max_stderr":0}`,
		},
		{
			name: "full run",
			msg: wire.Run{
				Code: "import sys\nprint(sys.argv)",
				Files: []wire.File{
					{Path: "data/in.txt", Content: []byte("hi\n")},
					{Path: "blob.bin", Content: []byte{0x00, 0xff, 0xfe}},
					{Path: "empty", Content: []byte{}},
				},
				Stdin:     []byte("x"),
				Args:      []string{"-v", "two words"},
				Env:       map[string]string{"Z": "last", "A": "first"},
				TimeoutMS: 5000,
				MaxStdout: 1 << 20,
				MaxStderr: 65536,
				Outputs:   []string{"out/*.png", "log.txt"},

				MaxOutputBytes: 1 << 20,
				MaxOutputFiles: 100,
			},
			want: `{"code":"import sys\nprint(sys.argv)",` +
				`"files":[{"path":"data/in.txt","content":"aGkK"},{"path":"blob.bin","content":"AP/+"},{"path":"empty","content":""}],` +
				`"stdin":"eA==","args":["-v","two words"],"env":{"A":"first","Z":"last"},` +
				`"timeout_ms":5000,"max_stdout":1048576,"max_stderr":65536,` +
				`"outputs":["out/*.png","log.txt"],"max_output_bytes":1048576,"max_output_files":100}`,
		},
		{
			name: "output file returned",
			msg:  wire.OutputFile{Pattern: "out/*.png", Path: "out/plot.png", Size: 1234, Mode: "-rw-r--r--"},
			want: `{"pattern":"out/*.png","path":"out/plot.png","size":1234,"mode":"-rw-r--r--"}`,
		},
		{
			name: "output pattern matching nothing",
			msg:  wire.OutputFile{Pattern: "*.csv", Code: wire.OutputErrNotFound},
			want: `{"pattern":"*.csv","code":"not_found"}`,
		},
		{
			name: "introspect",
			msg:  wire.Introspect{ID: 3, Op: wire.OpInspect, Code: "f(", CursorPos: 2, DetailLevel: 1},
			want: `{"id":3,"op":"inspect","code":"f(","cursor_pos":2,"detail_level":1}`,
		},
		{
			name: "ack with an answer",
			msg:  wire.Ack{ID: 3, Answer: &wire.Answer{Matches: []string{"os"}, CursorStart: 7, CursorEnd: 8}},
			want: `{"id":3,"answer":{"matches":["os"],"cursor_start":7,"cursor_end":8}}`,
		},
		{
			name: "input request",
			msg:  wire.InputRequest{ID: 4, Prompt: "pw: ", Password: true},
			want: `{"id":4,"prompt":"pw: ","password":true}`,
		},
		{
			name: "input replies",
			msg:  []wire.InputReply{{ID: 4, Value: "v"}, {ID: 4, Error: "gone"}},
			want: `[{"id":4,"value":"v"},{"id":4,"value":"","error":"gone"}]`,
		},
		{
			name: "display events",
			msg: []wire.Event{
				{ID: 5, Type: "update_display_data", Data: map[string]any{"text/plain": "b"}, Transient: map[string]any{"display_id": "d"}},
				{ID: 5, Type: "clear_output", Wait: true},
			},
			want: `[{"id":5,"type":"update_display_data","data":{"text/plain":"b"},"transient":{"display_id":"d"}},{"id":5,"type":"clear_output","wait":true}]`,
		},
		{
			name: "file without content",
			msg:  wire.File{Path: "touch.me"},
			want: `{"path":"touch.me","content":null}`,
		},
		{
			name: "exit ok",
			msg:  wire.Exit{Reason: "ok", ExecNS: 1234567},
			want: `{"exit_code":0,"reason":"ok","exec_ns":1234567}`,
		},
		{
			name: "exit error",
			msg:  wire.Exit{ExitCode: 3, Reason: "error", ExecNS: 1},
			want: `{"exit_code":3,"reason":"error","exec_ns":1}`,
		},
		{
			name: "exit killed and truncated",
			msg:  wire.Exit{ExitCode: 137, Signal: 9, Reason: "output_limit", StdoutTruncated: true, StderrTruncated: true, ExecNS: 2},
			want: `{"exit_code":137,"signal":9,"reason":"output_limit","stdout_truncated":true,"stderr_truncated":true,"exec_ns":2}`,
		},
		{
			name: "agent failure",
			msg:  wire.Fail{Message: "fork: resource temporarily unavailable"},
			want: `{"message":"fork: resource temporarily unavailable"}`,
		},
		{
			name: "bad request",
			msg:  wire.Fail{BadRequest: true, Message: `file path "../x" escapes the working directory`},
			want: `{"bad_request":true,"message":"file path \"../x\" escapes the working directory"}`,
		},
		{
			name: "request file refused",
			msg:  wire.Fail{BadRequest: true, Message: "openat a/b: not a directory", Code: wire.FileErrNotDir, Path: "a/b"},
			want: `{"bad_request":true,"message":"openat a/b: not a directory","code":"not_dir","path":"a/b"}`,
		},
		{
			name: "file request refused",
			msg:  wire.Ack{ID: 7, Error: "write t: no space left on device", BadRequest: true, Code: wire.FileErrNoSpace},
			want: `{"id":7,"error":"write t: no space left on device","bad_request":true,"code":"no_space"}`,
		},
		{
			name: "command",
			msg:  wire.Command{ID: 9, Argv: []string{"/bin/bash", "-l", "-c", "echo hi"}, Env: map[string]string{"A": "1"}, Dir: "sub", TimeoutMS: 60000, MaxStdout: 10, MaxStderr: 20},
			want: `{"id":9,"argv":["/bin/bash","-l","-c","echo hi"],"env":{"A":"1"},"dir":"sub","timeout_ms":60000,"max_stdout":10,"max_stderr":20}`,
		},
		{
			name: "command started",
			msg:  wire.Ack{ID: 9, PID: 42},
			want: `{"id":9,"pid":42}`,
		},
		{
			name: "command killed by a signal",
			msg:  wire.CommandEnd{ID: 9, ExitCode: 143, Signal: 15, Reason: "killed", StdoutTruncated: true, ExecNS: 5},
			want: `{"id":9,"exit_code":143,"signal":15,"reason":"killed","stdout_truncated":true,"exec_ns":5}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := json.Marshal(tt.msg)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if string(got) != tt.want {
				t.Errorf("Marshal =\n%s\nwant\n%s", got, tt.want)
			}
			back := reflect.New(reflect.TypeOf(tt.msg))
			if err := json.Unmarshal([]byte(tt.want), back.Interface()); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if !reflect.DeepEqual(back.Elem().Interface(), tt.msg) {
				t.Errorf("Unmarshal = %+v, want %+v", back.Elem().Interface(), tt.msg)
			}
		})
	}
}
