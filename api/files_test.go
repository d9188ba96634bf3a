package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

func TestSessionFiles(t *testing.T) {
	f := newSessionFixture(t, &runnertest.Runtime{}, kernels.Config{}, api.Config{MaxBodyBytes: 64})
	id := f.create(t, `{"language":"python"}`)
	base := "/v1/sessions/" + id + "/files"

	checkResponse(t, f.do(t, http.MethodPut, base+"?path=data/a.bin", "\x00\x01 raw"), http.StatusNoContent, "")
	checkResponse(t, f.do(t, http.MethodPut, base+"?path=top.txt", "hello"), http.StatusNoContent, "")

	rec := f.do(t, http.MethodGet, base+"?path=data/a.bin", "")
	if rec.Code != http.StatusOK || rec.Body.String() != "\x00\x01 raw" || rec.Header().Get("Content-Type") != "application/octet-stream" {
		t.Errorf("read: %d %q %q; want 200, the raw bytes, application/octet-stream", rec.Code, rec.Body, rec.Header().Get("Content-Type"))
	}
	checkResponse(t, f.do(t, http.MethodGet, base, ""), http.StatusOK, `{"files":[`+
		`{"name":"data","size":0,"is_dir":true,"mode":"drwxr-xr-x","mtime":"2026-01-02T03:04:05Z"},`+
		`{"name":"top.txt","size":5,"is_dir":false,"mode":"-rw-r--r--","mtime":"2026-01-02T03:04:05Z"}]}`+"\n")
	checkResponse(t, f.do(t, http.MethodGet, base+"?list=data", ""), http.StatusOK, `{"files":[`+
		`{"name":"a.bin","size":6,"is_dir":false,"mode":"-rw-r--r--","mtime":"2026-01-02T03:04:05Z"}]}`+"\n")

	tests := []struct {
		name       string
		method     string
		target     string
		body       string
		wantStatus int
		wantBody   string
	}{
		{"missing file", http.MethodGet, base + "?path=nope", "", http.StatusNotFound,
			`{"code":"file_not_found","message":"cannot read \"nope\": no such file or directory"}`},
		{"missing dir", http.MethodGet, base + "?list=nope", "", http.StatusNotFound,
			`{"code":"file_not_found","message":"cannot list \"nope\": no such file or directory"}`},
		{"escaping path", http.MethodGet, base + "?path=../etc/passwd", "", http.StatusBadRequest,
			`{"code":"invalid_path","message":"path must not contain \"..\" components"}`},
		{"escaping listing", http.MethodGet, base + "?list=data/../..", "", http.StatusBadRequest,
			`{"code":"invalid_path","message":"list must not contain \"..\" components"}`},
		{"absolute write", http.MethodPut, base + "?path=/etc/x", "x", http.StatusBadRequest,
			`{"code":"invalid_path","message":"path must be relative to the session's working directory, not absolute"}`},
		{"unclean path", http.MethodPut, base + "?path=a//b", "x", http.StatusBadRequest,
			`{"code":"invalid_path","message":"path must be a clean path: no empty or \".\" components, no trailing slash"}`},
		{"trailing slash", http.MethodGet, base + "?list=data/", "", http.StatusBadRequest,
			`{"code":"invalid_path","message":"list must be a clean path: no empty or \".\" components, no trailing slash"}`},
		{"working directory as a file", http.MethodGet, base + "?path=.", "", http.StatusBadRequest,
			`{"code":"invalid_path","message":"path must name a file, not the working directory"}`},
		{"no path", http.MethodPut, base, "x", http.StatusBadRequest,
			`{"code":"invalid_path","message":"path is required (a path relative to the session's working directory)"}`},
		{"empty path", http.MethodGet, base + "?path=", "", http.StatusBadRequest,
			`{"code":"invalid_path","message":"path is required (a path relative to the session's working directory)"}`},
		{"NUL in path", http.MethodGet, base + "?path=a%00b", "", http.StatusBadRequest,
			`{"code":"invalid_path","message":"path must not contain a NUL byte"}`},
		{"long path", http.MethodPut, base + "?path=" + strings.Repeat("a", 4097), "x", http.StatusBadRequest,
			`{"code":"invalid_path","message":"path is too long (at most 4096 bytes)"}`},
		{"path and list", http.MethodGet, base + "?path=a&list=b", "", http.StatusBadRequest,
			`{"code":"invalid_path","message":"give either path (read a file) or list (list a directory), not both"}`},
		{"upload too large", http.MethodPut, base + "?path=big", strings.Repeat("x", 65), http.StatusRequestEntityTooLarge,
			`{"code":"body_too_large","message":"request body exceeds 64 bytes"}`},
		{"unknown session", http.MethodGet, "/v1/sessions/0123456789abcdef0123456789abcdef/files", "", http.StatusNotFound,
			`{"code":"session_not_found","message":"no such session (it may have expired or been deleted)"}`},
		{"wrong method", http.MethodPost, base, "", http.StatusMethodNotAllowed,
			`{"code":"method_not_allowed","message":"method POST is not allowed here"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkResponse(t, f.do(t, tc.method, tc.target, tc.body), tc.wantStatus, tc.wantBody+"\n")
		})
	}
	// A file larger than MaxBodyBytes cannot be read back either.
	if err := f.kernel(t, 1).WriteFile(t.Context(), "huge", make([]byte, 65)); err != nil {
		t.Fatal(err)
	}
	checkResponse(t, f.do(t, http.MethodGet, base+"?path=huge", ""), http.StatusBadRequest,
		`{"code":"file_too_large","message":"cannot read \"huge\": the file is larger than a read may return (--max-body)"}`+"\n")
	// "." lists the working directory, as "" does.
	if rec := f.do(t, http.MethodGet, base+"?list=.", ""); rec.Code != http.StatusOK {
		t.Errorf("listing \".\": %d %s, want 200", rec.Code, rec.Body)
	}
}
