package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

func TestRunHappyPath(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, pool.Config{}, api.Config{}, true)
	rec := f.do(t, http.MethodPost, "/v1/run", `{"language":"python","code":"print('<ok> & done')"}`)
	if rec.Code != http.StatusOK {
		t.Fatalf("status = %d, body %s", rec.Code, rec.Body)
	}
	var got map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("decoding %s: %v", rec.Body, err)
	}
	timing, ok := got["timing"].(map[string]any)
	if !ok {
		t.Fatalf("timing = %#v, want an object", got["timing"])
	}
	delete(got, "timing")
	want := map[string]any{
		"stdout":           "print('<ok> & done')",
		"stderr":           "",
		"exit_code":        float64(0),
		"reason":           "ok",
		"stdout_truncated": false,
		"stderr_truncated": false,
		"warm":             true,
		"start":            "pool",
		"sandbox_id":       "fake-0001",
		"template":         "python",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("response = %v\nwant       %v", got, want)
	}
	for _, k := range []string{"queue_ms", "acquire_ms", "start_ms", "exec_ms", "total_ms"} {
		if v, ok := timing[k].(float64); !ok || v < 0 {
			t.Errorf("timing.%s = %#v, want a non-negative number", k, timing[k])
		}
	}
	if timing["start_ms"] != float64(0) {
		t.Errorf("timing.start_ms = %v on a pool hit, want 0", timing["start_ms"])
	}
	if len(timing) != 5 {
		t.Errorf("timing = %v, want 5 fields", timing)
	}
	if strings.Contains(rec.Body.String(), `\u003c`) {
		t.Errorf("body escapes HTML: %s", rec.Body)
	}
}

func TestRunColdStart(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, pool.Config{}, api.Config{}, true)
	rec := f.do(t, http.MethodPost, "/v1/run", `{"language":"node","code":"1"}`)
	var got struct {
		Warm      bool   `json:"warm"`
		Start     string `json:"start"`
		SandboxID string `json:"sandbox_id"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("status %d, body %s, err %v", rec.Code, rec.Body, err)
	}
	if got.Warm || got.Start != "cold" || got.SandboxID != "fake-0002" {
		t.Errorf("warm, start, sandbox = %v, %q, %q; want false, cold, fake-0002", got.Warm, got.Start, got.SandboxID)
	}
}

// The request reaches the sandbox exactly as the runner should see it.
func TestRunRequestMapping(t *testing.T) {
	reqs := make(chan runner.RunRequest, 1)
	rt := &runnertest.Runtime{RunFunc: func(_ context.Context, req runner.RunRequest, _ runner.OutputFunc) (runner.RunResult, error) {
		reqs <- req
		return runner.RunResult{Reason: runner.ReasonOK}, nil
	}}
	f := newFixture(t, rt, pool.Config{}, api.Config{}, true)
	tests := []struct {
		name string
		body string
		want runner.RunRequest
	}{
		{
			name: "template's default timeout",
			body: `{"language":"python","code":"print(1)"}`,
			want: runner.RunRequest{Code: "print(1)", Timeout: 30 * time.Second, MaxStdout: 1 << 20, MaxStderr: 1 << 20},
		},
		{
			name: "API's default timeout",
			body: `{"language":"node","code":"1"}`,
			want: runner.RunRequest{Code: "1", Timeout: 10 * time.Second, MaxStdout: 1 << 20, MaxStderr: 1 << 20},
		},
		{
			name: "everything",
			body: `{"language":"python","code":"import sys","stdin":"in\n","args":["-v","x y"],
				"env":{"A":"1","B":""},"timeout_ms":2500,"max_output_bytes":100,
				"files":[{"path":"./data/a.txt","content":"héllo"},{"path":"b.bin","content":"AAH/","encoding":"base64"}]}`,
			want: runner.RunRequest{
				Code:  "import sys",
				Files: []runner.File{{Path: "data/a.txt", Content: []byte("héllo")}, {Path: "b.bin", Content: []byte{0, 1, 255}}},
				Stdin: []byte("in\n"), Args: []string{"-v", "x y"}, Env: map[string]string{"A": "1", "B": ""},
				Timeout: 2500 * time.Millisecond, MaxStdout: 100, MaxStderr: 100,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := f.do(t, http.MethodPost, "/v1/run", tc.body)
			if rec.Code != http.StatusOK {
				t.Fatalf("status = %d, body %s", rec.Code, rec.Body)
			}
			if got := <-reqs; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("runner got %#v\nwant       %#v", got, tc.want)
			}
		})
	}
}

func TestRunAcceptsAnyContentType(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, pool.Config{}, api.Config{}, true)
	tests := []struct {
		name        string
		contentType string
	}{
		{name: "curl -d form type", contentType: "application/x-www-form-urlencoded"},
		{name: "text", contentType: "text/plain"},
		{name: "none", contentType: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/v1/run",
				strings.NewReader(`{"language":"node","code":"x=1"}`))
			req.Header.Set("Content-Type", tc.contentType)
			rec := httptest.NewRecorder()
			f.h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"stdout":"x=1"`) {
				t.Errorf("status %d, body %s; want 200 with stdout x=1", rec.Code, rec.Body)
			}
		})
	}
}

func TestRunInvalidUTF8Output(t *testing.T) {
	rt := &runnertest.Runtime{RunFunc: func(context.Context, runner.RunRequest, runner.OutputFunc) (runner.RunResult, error) {
		return runner.RunResult{
			Stdout: []byte{'a', 0xff, 0xfe, 'b'},
			Stderr: []byte("fine ✓"),
			Reason: runner.ReasonOK,
		}, nil
	}}
	f := newFixture(t, rt, pool.Config{}, api.Config{}, true)
	rec := f.do(t, http.MethodPost, "/v1/run", `{"language":"python","code":"x"}`)
	var got map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("decoding %s: %v", rec.Body, err)
	}
	if got["stdout"] != "a\uFFFD\uFFFDb" || got["stdout_base64"] != "Yf/+Yg==" {
		t.Errorf("stdout, stdout_base64 = %q, %q; want %q, %q", got["stdout"], got["stdout_base64"], "a\uFFFD\uFFFDb", "Yf/+Yg==")
	}
	if _, ok := got["stderr_base64"]; ok || got["stderr"] != "fine ✓" {
		t.Errorf("stderr = %q, stderr_base64 present = %v; want %q and absent", got["stderr"], ok, "fine ✓")
	}
}

func TestRunErrorMapping(t *testing.T) {
	tests := []struct {
		name       string
		run        runnertest.RunFunc
		wantStatus int
		wantBody   string
	}{
		{
			name: "failing program is a 200",
			run: func(context.Context, runner.RunRequest, runner.OutputFunc) (runner.RunResult, error) {
				return runner.RunResult{Stderr: []byte("boom\n"), ExitCode: 1, Reason: runner.ReasonError}, nil
			},
			wantStatus: http.StatusOK,
		},
		{
			name: "sandbox refused the request",
			run: func(context.Context, runner.RunRequest, runner.OutputFunc) (runner.RunResult, error) {
				return runner.RunResult{}, fmt.Errorf("%w: file too large", runner.ErrBadRequest)
			},
			wantStatus: http.StatusBadRequest,
			wantBody:   `{"code":"bad_request","message":"running in sandbox fake-0001: bad run request: file too large"}` + "\n",
		},
		{
			name: "internal failure hides its text",
			run: func(context.Context, runner.RunRequest, runner.OutputFunc) (runner.RunResult, error) {
				return runner.RunResult{}, errors.New("runsc: /var/lib/secret/path exploded")
			},
			wantStatus: http.StatusInternalServerError,
			wantBody:   `{"code":"internal","message":"internal error"}` + "\n",
		},
		{
			name: "panic in the run",
			run: func(context.Context, runner.RunRequest, runner.OutputFunc) (runner.RunResult, error) {
				panic("secret panic text")
			},
			wantStatus: http.StatusInternalServerError,
			wantBody:   `{"code":"internal","message":"internal error"}` + "\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := &runnertest.Runtime{RunFunc: tc.run}
			f := newFixture(t, rt, pool.Config{}, api.Config{}, true)
			rec := f.do(t, http.MethodPost, "/v1/run", `{"language":"python","code":"x"}`)
			if rec.Code != tc.wantStatus {
				t.Errorf("status = %d, want %d (body %s)", rec.Code, tc.wantStatus, rec.Body)
			}
			if tc.wantBody != "" && rec.Body.String() != tc.wantBody {
				t.Errorf("body = %s\nwant   %s", rec.Body, tc.wantBody)
			}
			waitFor(t, "sandbox released", func() bool { return f.rt.Sandboxes()[0].Destroyed() })
		})
	}
}

func TestRunSaturated(t *testing.T) {
	unblock := make(chan struct{})
	running := make(chan struct{}, 1)
	rt := &runnertest.Runtime{RunFunc: func(context.Context, runner.RunRequest, runner.OutputFunc) (runner.RunResult, error) {
		running <- struct{}{}
		<-unblock
		return runner.RunResult{Reason: runner.ReasonOK}, nil
	}}
	f := newFixture(t, rt, pool.Config{MaxRuns: 1, QueueDeadline: 10 * time.Millisecond}, api.Config{}, true)

	first := make(chan int, 1)
	go func() {
		req := httptest.NewRequest(http.MethodPost, "/v1/run", strings.NewReader(`{"language":"python","code":"x"}`))
		rec := httptest.NewRecorder()
		f.h.ServeHTTP(rec, req)
		first <- rec.Code
	}()
	<-running
	rec := f.do(t, http.MethodPost, "/v1/run", `{"language":"python","code":"y"}`)
	// One request served in the pool's 10 s rate window is 0.1/s, so one
	// waiter is served in 10 s.
	checkResponse(t, rec, http.StatusServiceUnavailable, `{"code":"saturated","message":"the server is saturated: `+
		`no sandbox was free within the queue deadline; retry after 10 s"}`+"\n")
	if got := rec.Header().Get("Retry-After"); got != "10" {
		t.Errorf("Retry-After = %q, want 10", got)
	}
	close(unblock)
	if code := <-first; code != http.StatusOK {
		t.Errorf("first run status = %d, want 200", code)
	}
}

func TestRunAfterPoolClosed(t *testing.T) {
	f := newFixture(t, &runnertest.Runtime{}, pool.Config{}, api.Config{}, true)
	if err := f.pool.Close(t.Context()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	rec := f.do(t, http.MethodPost, "/v1/run", `{"language":"python","code":"x"}`)
	checkResponse(t, rec, http.StatusServiceUnavailable, `{"code":"unavailable","message":"the server is shutting down"}`+"\n")
}

func TestRunClientGone(t *testing.T) {
	started := make(chan struct{})
	rt := &runnertest.Runtime{RunFunc: func(ctx context.Context, _ runner.RunRequest, _ runner.OutputFunc) (runner.RunResult, error) {
		close(started)
		<-ctx.Done()
		return runner.RunResult{}, ctx.Err()
	}}
	f := newFixture(t, rt, pool.Config{}, api.Config{}, true)
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-started
		cancel()
	}()
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/run", strings.NewReader(`{"language":"python","code":"x"}`))
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	if rec.Code != 499 || rec.Body.Len() != 0 {
		t.Errorf("status %d, body %q; want 499 and no body", rec.Code, rec.Body)
	}
	waitFor(t, "sandbox destroyed", func() bool { return f.rt.Sandboxes()[0].Destroyed() })
}

func TestRunLimitsReached(t *testing.T) {
	tests := []struct {
		name    string
		reached []string
		want    string // the raw JSON value, or "" for absent
	}{
		{name: "none: omitted", reached: nil, want: ""},
		{name: "processes", reached: []string{runner.LimitProcesses}, want: `["processes"]`},
		{name: "both", reached: []string{runner.LimitProcesses, runner.LimitDisk}, want: `["processes","disk"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := &runnertest.Runtime{RunFunc: func(context.Context, runner.RunRequest, runner.OutputFunc) (runner.RunResult, error) {
				return runner.RunResult{ExitCode: 2, Reason: runner.ReasonError, LimitsReached: tt.reached}, nil
			}}
			f := newFixture(t, rt, pool.Config{}, api.Config{}, true)
			rec := f.do(t, http.MethodPost, "/v1/run", `{"language":"python","code":"x"}`)
			var got map[string]json.RawMessage
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatalf("decoding %s: %v", rec.Body, err)
			}
			if raw, ok := got["limits_reached"]; string(raw) != tt.want || ok != (tt.want != "") {
				t.Errorf("limits_reached = %s (present %v), want %q", raw, ok, tt.want)
			}
			if string(got["reason"]) != `"error"` || string(got["exit_code"]) != "2" {
				t.Errorf("reason %s exit_code %s, want \"error\" and 2", got["reason"], got["exit_code"])
			}
		})
	}
}
