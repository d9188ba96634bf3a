package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// sandboxText is what the agent said; no response may repeat it.
const sandboxText = "openat dir/.paddock-SECRET.tmp: internal detail"

// Every kind of file refusal is a 4xx with its own code and a message
// that names the request and its path, never the sandbox's text.
func TestSessionFileErrors(t *testing.T) {
	f := newSessionFixture(t, &runnertest.Runtime{}, kernels.Config{}, api.Config{})
	id := f.create(t, `{"language":"python"}`)
	k := f.kernel(t, 1)
	var kind runner.FileErrorKind
	refuse := func(op runner.FileOp, p string) error {
		return &runner.FileError{Op: op, Path: p, Kind: kind, Detail: sandboxText}
	}
	k.WriteFileFunc = func(_ context.Context, p string, _ []byte) error { return refuse(runner.FileWrite, p) }
	k.ReadFileFunc = func(_ context.Context, p string, _ int64) ([]byte, error) { return nil, refuse(runner.FileRead, p) }
	k.ListFilesFunc = func(_ context.Context, p string) ([]runner.FileInfo, error) { return nil, refuse(runner.FileList, p) }
	base := "/v1/sessions/" + id + "/files"

	tests := []struct {
		kind       runner.FileErrorKind
		method     string
		target     string
		wantStatus int
		wantBody   string
	}{
		{runner.FileBadPath, http.MethodGet, base + "?path=link/passwd", http.StatusBadRequest,
			`{"code":"invalid_path","message":"cannot read \"link/passwd\": the path leads out of the working directory (a symbolic link or \"..\" points outside it)"}`},
		{runner.FileNameTooLong, http.MethodPut, base + "?path=" + strings.Repeat("n", 300), http.StatusBadRequest,
			`{"code":"name_too_long","message":"cannot write \"` + strings.Repeat("n", 100) + `\"… (300 bytes): a name in the path is longer than the sandbox's file system allows (255 bytes)"}`},
		{runner.FileNotDir, http.MethodPut, base + "?path=file.txt/x", http.StatusConflict,
			`{"code":"not_a_directory","message":"cannot write \"file.txt/x\": a part of the path that must be a directory is a file"}`},
		{runner.FileNotDir, http.MethodGet, base + "?list=file.txt", http.StatusConflict,
			`{"code":"not_a_directory","message":"cannot list \"file.txt\": a part of the path that must be a directory is a file"}`},
		{runner.FileIsDir, http.MethodGet, base + "?path=data", http.StatusConflict,
			`{"code":"is_a_directory","message":"cannot read \"data\": it is a directory, not a file"}`},
		{runner.FileNotRegular, http.MethodGet, base + "?path=fifo", http.StatusConflict,
			`{"code":"not_a_regular_file","message":"cannot read \"fifo\": it is a pipe, socket or device, not a regular file"}`},
		{runner.FileExists, http.MethodPut, base + "?path=d", http.StatusConflict,
			`{"code":"file_exists","message":"cannot write \"d\": something already exists in its place"}`},
		{runner.FileLoop, http.MethodGet, base + "?path=loop", http.StatusConflict,
			`{"code":"symlink_loop","message":"cannot read \"loop\": the path goes through too many symbolic links (a loop)"}`},
		{runner.FilePermission, http.MethodGet, base + "?path=secret", http.StatusForbidden,
			`{"code":"permission_denied","message":"cannot read \"secret\": the sandbox's user is not allowed to (file permissions, or a read-only location)"}`},
		{runner.FileNoSpace, http.MethodPut, base + "?path=big", http.StatusRequestEntityTooLarge,
			`{"code":"disk_full","message":"cannot write \"big\": the sandbox's disk is full (its disk_mb limit); delete files or ask for a larger disk_mb"}`},
		{runner.FileNotFound, http.MethodGet, base, http.StatusNotFound,
			`{"code":"file_not_found","message":"cannot list \".\": no such file or directory"}`},
		{runner.FileTooLarge, http.MethodGet, base + "?path=huge", http.StatusBadRequest,
			`{"code":"file_too_large","message":"cannot read \"huge\": the file is larger than a read may return (--max-body)"}`},
		{runner.FileTooManyEntries, http.MethodGet, base + "?list=many", http.StatusBadRequest,
			`{"code":"too_many_entries","message":"cannot list \"many\": the directory has more than 10000 entries, the most a listing returns"}`},
		{"no_such_kind", http.MethodGet, base + "?path=x", http.StatusInternalServerError,
			`{"code":"internal","message":"internal error"}`},
	}
	seen := map[runner.FileErrorKind]bool{}
	for _, tc := range tests {
		seen[tc.kind] = true
		t.Run(string(tc.kind)+" "+tc.method, func(t *testing.T) {
			kind = tc.kind
			checkResponse(t, f.do(t, tc.method, tc.target, "x"), tc.wantStatus, tc.wantBody+"\n")
		})
	}
	for _, k := range runner.FileErrorKinds {
		if !seen[k] {
			t.Errorf("kind %s has no case", k)
		}
	}
}

// A run whose files the sandbox could not write is refused with the same
// codes, naming the file.
func TestRunFileErrors(t *testing.T) {
	tests := []struct {
		kind       runner.FileErrorKind
		wantStatus int
		wantBody   string
	}{
		{runner.FileNotDir, http.StatusConflict,
			`{"code":"not_a_directory","message":"cannot write the run's file \"a/b\": a part of the path that must be a directory is a file"}`},
		{runner.FileNoSpace, http.StatusRequestEntityTooLarge,
			`{"code":"disk_full","message":"cannot write the run's file \"a/b\": the sandbox's disk is full (its disk_mb limit); delete files or ask for a larger disk_mb"}`},
		{runner.FileNameTooLong, http.StatusBadRequest,
			`{"code":"name_too_long","message":"cannot write the run's file \"a/b\": a name in the path is longer than the sandbox's file system allows (255 bytes)"}`},
	}
	for _, tc := range tests {
		t.Run(string(tc.kind), func(t *testing.T) {
			rt := &runnertest.Runtime{RunFunc: func(context.Context, runner.RunRequest, runner.OutputFunc) (runner.RunResult, error) {
				err := &runner.FileError{Op: runner.FileRunWrite, Path: "a/b", Kind: tc.kind, Detail: sandboxText}
				return runner.RunResult{}, fmt.Errorf("running in sandbox fake-0001: %w", err)
			}}
			f := newFixture(t, rt, pool.Config{}, api.Config{}, true)
			rec := f.do(t, http.MethodPost, "/v1/run", `{"language":"python","code":"x","files":[{"path":"a","content":""},{"path":"a/b","content":""}]}`)
			checkResponse(t, rec, tc.wantStatus, tc.wantBody+"\n")
		})
	}
}
