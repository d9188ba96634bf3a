package api_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

func TestExecuteShapes(t *testing.T) {
	rt := &runnertest.Runtime{KernelFunc: func(_ context.Context, _ runner.KernelOptions, k *runnertest.Kernel) error {
		k.ExecuteFunc = func(_ context.Context, req runner.ExecuteRequest, events func(runner.Event)) (runner.ExecuteResult, error) {
			if req.Code != "rich" {
				return runner.ExecuteResult{Status: "ok", Reason: "ok"}, nil
			}
			for _, e := range []runner.Event{
				{Type: runner.EventStream, Stream: runner.Stdout, Text: "a <b>"},
				{Type: runner.EventStream, Stream: runner.Stderr, Text: "warn\n"},
				{Type: runner.EventStream, Stream: runner.Stdout, Text: " & c\n"},
				{Type: runner.EventDisplayData, Data: map[string]any{"image/png": "iVBO", "text/plain": "<Figure>"}, Metadata: map[string]any{"image/png": map[string]any{"width": 640}}},
				{Type: runner.EventExecuteResult, Data: map[string]any{"application/json": map[string]any{"x": []any{1, 2}}}, ExecutionCount: 7},
				{Type: runner.EventError, Error: &runner.ExecError{Name: "ValueError", Value: "bad", Traceback: []string{"tb1", "tb2"}}},
			} {
				events(e)
			}
			return runner.ExecuteResult{ExecutionCount: 7, Status: "error", Reason: "error", Exec: 2500 * time.Microsecond,
				Error: &runner.ExecError{Name: "ValueError", Value: "bad", Traceback: []string{"tb1", "tb2"}}}, nil
		}
		return nil
	}}
	f := newSessionFixture(t, rt, kernels.Config{}, api.Config{})
	id := f.create(t, `{"language":"python"}`)
	tests := []struct {
		name string
		code string
		want string
	}{
		{
			name: "everything",
			code: "rich",
			want: `{"execution_count":7,"stdout":"a <b> & c\n","stderr":"warn\n","results":[` +
				`{"data":{"image/png":"iVBO","text/plain":"<Figure>"},"metadata":{"image/png":{"width":640}},"main":false},` +
				`{"data":{"application/json":{"x":[1,2]}},"metadata":{},"main":true}],` +
				`"error":{"name":"ValueError","value":"bad","traceback":["tb1","tb2"]},"status":"error","reason":"error",` +
				`"warm":false,"start":"cold","timing":{"queue_ms":Q,"acquire_ms":0,"start_ms":0,"exec_ms":2.5,"total_ms":T}}`,
		},
		{
			name: "nothing",
			code: "pass",
			want: `{"execution_count":2,"stdout":"","stderr":"","results":[],"error":null,"status":"ok","reason":"ok",` +
				`"warm":false,"start":"cold","timing":{"queue_ms":Q,"acquire_ms":0,"start_ms":0,"exec_ms":1,"total_ms":T}}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := f.do(t, http.MethodPost, "/v1/sessions/"+id+"/execute", `{"code":"`+tc.code+`"}`)
			if rec.Code != http.StatusOK {
				t.Fatalf("status = %d, body %s", rec.Code, rec.Body)
			}
			if got := fixTiming(rec.Body.String()); got != tc.want+"\n" {
				t.Errorf("body = %s\nwant   %s", got, tc.want)
			}
		})
	}
}

// The request reaches the kernel as the runner should see it.
func TestExecuteRequestMapping(t *testing.T) {
	f := newSessionFixture(t, &runnertest.Runtime{}, kernels.Config{MaxOutput: 4096, DefaultTimeout: 3 * time.Second}, api.Config{})
	id := f.create(t, `{"language":"python"}`)
	for _, body := range []string{`{"code":"1"}`, `{"code":"env A","timeout_ms":2500,"env":{"A":"x"},"queue":true}`} {
		if rec := f.do(t, http.MethodPost, "/v1/sessions/"+id+"/execute", body); rec.Code != http.StatusOK {
			t.Fatalf("execute %s: %d %s", body, rec.Code, rec.Body)
		}
	}
	got := f.kernel(t, 1).Requests()
	want := []runner.ExecuteRequest{
		{Code: "1", Timeout: 3 * time.Second, MaxOutput: 4096},
		{Code: "env A", Timeout: 2500 * time.Millisecond, Env: map[string]string{"A": "x"}, MaxOutput: 4096},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("requests = %+v\nwant       %+v", got, want)
	}
}

func TestExecuteErrors(t *testing.T) {
	rt := &runnertest.Runtime{}
	var refuse atomic.Bool // once set, no fresh kernel can be had: a dead one loses its session
	rt.StartFunc = func(_ context.Context, spec runner.Spec) (runner.Sandbox, error) {
		if refuse.Load() {
			return nil, errors.New("fake start refused")
		}
		return rt.NewSandbox(spec), nil
	}
	f := newSessionFixture(t, rt, kernels.Config{MaxTimeout: time.Minute, DefaultTimeout: 10 * time.Second},
		api.Config{MaxBodyBytes: 256})
	busyID := f.create(t, `{"language":"python"}`)
	lostID := f.create(t, `{"language":"python"}`)
	k := f.kernel(t, 1)
	running := make(chan struct{})
	go func() {
		defer close(running)
		f.do(t, http.MethodPost, "/v1/sessions/"+busyID+"/execute", `{"code":"sleep 1h"}`)
	}()
	waitFor(t, "cell running", k.Running)
	refuse.Store(true)
	f.kernel(t, 2).Lose()
	waitFor(t, "session lost", func() bool {
		return strings.Contains(f.do(t, http.MethodGet, "/v1/sessions/"+lostID, "").Body.String(), `"state":"lost"`)
	})

	const (
		busy = `{"code":"busy","message":"the session is running another execution (or its queue is full); retry when it ends, or send \"queue\": true to wait your turn"}`
		lost = `{"code":"session_lost","message":"the session's kernel died and its state is gone (the kernel died between cells; ` +
			`no fresh kernel could be had: its sandbox or kernel failed to start); delete the session and create a new one"}`
	)
	tests := []struct {
		name       string
		id         string
		body       string
		wantStatus int
		wantBody   string
	}{
		{"busy", busyID, `{"code":"1"}`, http.StatusConflict, busy},
		{"lost", lostID, `{"code":"1"}`, http.StatusConflict, lost},
		{"unknown session", "0123456789abcdef0123456789abcdef", `{"code":"1"}`, http.StatusNotFound,
			`{"code":"session_not_found","message":"no such session (it may have expired or been deleted)"}`},
		{"no code", lostID, `{}`, http.StatusBadRequest, `{"code":"invalid_request","message":"code is required"}`},
		{"empty code", lostID, `{"code":""}`, http.StatusBadRequest, `{"code":"invalid_request","message":"code must not be empty"}`},
		{"timeout too long", busyID, `{"code":"1","timeout_ms":60001}`, http.StatusBadRequest,
			`{"code":"invalid_request","message":"timeout_ms must be between 1 and 60000, or 0 for the default (10000); got 60001"}`},
		{"queue not a boolean", busyID, `{"code":"1","queue":"yes"}`, http.StatusBadRequest,
			`{"code":"invalid_json","message":"field \"queue\" must be a boolean, got string"}`},
		{"body too large", busyID, `{"code":"` + strings.Repeat("x", 300) + `"}`, http.StatusRequestEntityTooLarge,
			`{"code":"body_too_large","message":"request body exceeds 256 bytes"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := f.do(t, http.MethodPost, "/v1/sessions/"+tc.id+"/execute", tc.body)
			checkResponse(t, rec, tc.wantStatus, tc.wantBody+"\n")
		})
	}
	// A lost session is still shown, and answers session_lost everywhere.
	checkResponse(t, f.do(t, http.MethodPost, "/v1/sessions/"+lostID+"/restart", ""), http.StatusConflict, lost+"\n")
	checkResponse(t, f.do(t, http.MethodGet, "/v1/sessions/"+lostID+"/files", ""), http.StatusConflict, lost+"\n")
	checkResponse(t, f.do(t, http.MethodDelete, "/v1/sessions/"+lostID, ""), http.StatusNoContent, "")

	checkResponse(t, f.do(t, http.MethodPost, "/v1/sessions/"+busyID+"/interrupt", ""), http.StatusNoContent, "")
	<-running
}

// A client that goes away mid-cell interrupts the cell.
func TestExecuteClientGoneInterrupts(t *testing.T) {
	f := newSessionFixture(t, &runnertest.Runtime{}, kernels.Config{}, api.Config{})
	id := f.create(t, `{"language":"python"}`)
	k := f.kernel(t, 1)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan int, 1)
	go func() {
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/sessions/"+id+"/execute", strings.NewReader(`{"code":"sleep 1h"}`))
		rec := httptest.NewRecorder()
		f.h.ServeHTTP(rec, req)
		done <- rec.Code
	}()
	waitFor(t, "cell running", k.Running)
	cancel()
	if got := <-done; got != 499 {
		t.Errorf("status = %d, want 499", got)
	}
	if got := k.Interrupts(); got != 1 {
		t.Errorf("Interrupts = %d, want 1", got)
	}
	rec := f.do(t, http.MethodPost, "/v1/sessions/"+id+"/execute", `{"code":"1"}`)
	if rec.Code != http.StatusOK {
		t.Errorf("next execute: %d %s", rec.Code, rec.Body)
	}
}

// A cell whose kernel had to be killed (it did not stop when interrupted
// at its timeout) answers 200 with its reason and says the state is gone
// and the kernel restarted; the session goes on, at count 1, without the
// old variables, and says how many kernels it has had.
func TestExecuteKernelRestarted(t *testing.T) {
	f := newSessionFixture(t, &runnertest.Runtime{}, kernels.Config{}, api.Config{})
	id := f.create(t, `{"language":"python"}`)
	if rec := f.do(t, http.MethodPost, "/v1/sessions/"+id+"/execute", `{"code":"x = 41"}`); rec.Code != http.StatusOK {
		t.Fatalf("first cell: %d %s", rec.Code, rec.Body)
	}
	rec := f.do(t, http.MethodPost, "/v1/sessions/"+id+"/execute", `{"code":"hang","timeout_ms":1}`)
	if got, want := fixTiming(rec.Body.String()), `{"execution_count":2,"stdout":"","stderr":"","results":[],"error":null,`+
		`"status":"aborted","reason":"timeout","state_lost":true,`+
		`"state_lost_reason":"the cell did not stop when interrupted at its timeout, so its kernel was killed","kernel_restarted":true,`+
		`"warm":false,"start":"cold","timing":{"queue_ms":Q,"acquire_ms":0,"start_ms":0,"exec_ms":1,"total_ms":T}}`+"\n"; rec.Code != http.StatusOK || got != want {
		t.Errorf("stuck cell: %d %s\nwant %s", rec.Code, got, want)
	}
	rec = f.do(t, http.MethodPost, "/v1/sessions/"+id+"/execute", `{"code":"x"}`)
	if !strings.Contains(rec.Body.String(), `"execution_count":1,`) || !strings.Contains(rec.Body.String(), `"text/plain":"x"`) ||
		strings.Contains(rec.Body.String(), "state_lost") {
		t.Errorf("next cell: %d %s; want the unset x at count 1, state kept", rec.Code, rec.Body)
	}
	if rec := f.do(t, http.MethodGet, "/v1/sessions/"+id, ""); !strings.Contains(rec.Body.String(), `"restarts":1`) ||
		!strings.Contains(rec.Body.String(), `"state":"idle"`) {
		t.Errorf("session after the restart: %s", rec.Body)
	}
}
