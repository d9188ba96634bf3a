package api_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/api"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// gatedKernel makes every cell send "hi\n" on stdout, wait for proceed (or
// its end), then run after(k) for the rest.
func gatedKernel(proceed <-chan struct{}, after func(ctx context.Context, k *runnertest.Kernel, events func(runner.Event)) (runner.ExecuteResult, error)) *runnertest.Runtime {
	return &runnertest.Runtime{KernelFunc: func(_ context.Context, _ runner.KernelOptions, k *runnertest.Kernel) error {
		k.ExecuteFunc = func(ctx context.Context, _ runner.ExecuteRequest, events func(runner.Event)) (runner.ExecuteResult, error) {
			events(runner.Event{Type: runner.EventStream, Stream: runner.Stdout, Text: "hi\n"})
			select {
			case <-proceed:
			case <-ctx.Done():
				return runnertest.CellEnd(ctx)
			}
			return after(ctx, k, events)
		}
		return nil
	}}
}

func richRest(_ context.Context, _ *runnertest.Kernel, events func(runner.Event)) (runner.ExecuteResult, error) {
	events(runner.Event{Type: runner.EventStream, Stream: runner.Stderr, Text: "w"})
	events(runner.Event{Type: runner.EventDisplayData, Data: map[string]any{"text/html": "<b>"}})
	events(runner.Event{Type: runner.EventExecuteResult, Data: map[string]any{"text/plain": "2"}, ExecutionCount: 1})
	events(runner.Event{Type: runner.EventError, Error: &runner.ExecError{Name: "E", Value: "v"}})
	return runner.ExecuteResult{Status: "error", Reason: "error", Error: &runner.ExecError{Name: "E", Value: "v"}}, nil
}

// streamRequest posts code to the session's execute endpoint on srv,
// accepting accept.
func streamRequest(t *testing.T, ctx context.Context, srv *httptest.Server, id, accept string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/sessions/"+id+"/execute", strings.NewReader(`{"code":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", accept)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestExecuteStream(t *testing.T) {
	const end = `"execution_count":1,"stdout":"hi\n","stderr":"w","results":[{"data":{"text/html":"<b>"},"metadata":{},"main":false},` +
		`{"data":{"text/plain":"2"},"metadata":{},"main":true}],"error":{"name":"E","value":"v","traceback":[]},` +
		`"status":"error","reason":"error","warm":false,"start":"cold","timing":{"queue_ms":Q,"acquire_ms":0,"start_ms":0,"exec_ms":1,"total_ms":T}}`
	tests := []struct {
		name        string
		accept      string
		contentType string
		first       string // read before the cell may go on
		rest        string
	}{
		{
			name:        "ndjson",
			accept:      "application/x-ndjson",
			contentType: "application/x-ndjson; charset=utf-8",
			first:       `{"type":"stdout","text":"hi\n"}` + "\n",
			rest: `{"type":"stderr","text":"w"}` + "\n" +
				`{"type":"result","data":{"text/html":"<b>"},"metadata":{},"main":false}` + "\n" +
				`{"type":"result","data":{"text/plain":"2"},"metadata":{},"main":true,"execution_count":1}` + "\n" +
				`{"type":"error","name":"E","value":"v","traceback":[]}` + "\n" +
				`{"type":"end",` + end + "\n",
		},
		{
			name:        "sse",
			accept:      "text/html, text/event-stream;q=0.9",
			contentType: "text/event-stream; charset=utf-8",
			first:       "event: stdout\ndata: {\"type\":\"stdout\",\"text\":\"hi\\n\"}\n\n",
			rest: "event: stderr\ndata: {\"type\":\"stderr\",\"text\":\"w\"}\n\n" +
				"event: result\ndata: {\"type\":\"result\",\"data\":{\"text/html\":\"<b>\"},\"metadata\":{},\"main\":false}\n\n" +
				"event: result\ndata: {\"type\":\"result\",\"data\":{\"text/plain\":\"2\"},\"metadata\":{},\"main\":true,\"execution_count\":1}\n\n" +
				"event: error\ndata: {\"type\":\"error\",\"name\":\"E\",\"value\":\"v\",\"traceback\":[]}\n\n" +
				"event: end\ndata: {\"type\":\"end\"," + end + "\n\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			proceed := make(chan struct{})
			f := newSessionFixture(t, gatedKernel(proceed, richRest), kernels.Config{}, api.Config{})
			srv := httptest.NewServer(f.h)
			defer srv.Close()
			id := f.create(t, `{"language":"python"}`)

			resp := streamRequest(t, t.Context(), srv, id, tc.accept)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status = %d", resp.StatusCode)
			}
			for h, want := range map[string]string{"Content-Type": tc.contentType, "Cache-Control": "no-cache"} {
				if got := resp.Header.Get(h); got != want {
					t.Errorf("%s = %q, want %q", h, got, want)
				}
			}
			br := bufio.NewReader(resp.Body)
			first := make([]byte, len(tc.first))
			if _, err := io.ReadFull(br, first); err != nil {
				t.Fatalf("reading the first event: %v", err)
			}
			if string(first) != tc.first {
				t.Errorf("first event = %q, want %q", first, tc.first)
			}
			close(proceed) // the first event came while the cell still ran
			rest, err := io.ReadAll(br)
			if err != nil {
				t.Fatalf("reading the stream: %v", err)
			}
			if got := fixTiming(string(rest)); got != tc.rest {
				t.Errorf("rest = %s\nwant   %s", got, tc.rest)
			}
		})
	}
}

func TestStreamKeepalive(t *testing.T) {
	proceed := make(chan struct{})
	rt := &runnertest.Runtime{KernelFunc: func(_ context.Context, _ runner.KernelOptions, k *runnertest.Kernel) error {
		k.ExecuteFunc = func(ctx context.Context, _ runner.ExecuteRequest, events func(runner.Event)) (runner.ExecuteResult, error) {
			<-proceed // silent until the test saw a keepalive
			return runner.ExecuteResult{Status: "ok", Reason: "ok"}, nil
		}
		return nil
	}}
	f := newSessionFixture(t, rt, kernels.Config{}, api.Config{Keepalive: 5 * time.Millisecond})
	srv := httptest.NewServer(f.h)
	defer srv.Close()
	id := f.create(t, `{"language":"python"}`)

	resp := streamRequest(t, t.Context(), srv, id, "application/x-ndjson")
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	if err != nil || line != `{"type":"keepalive"}`+"\n" {
		t.Fatalf("first line = %q, %v; want a keepalive", line, err)
	}
	close(proceed)
	rest, err := io.ReadAll(br)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(rest), "\n"), "\n")
	for _, l := range lines[:len(lines)-1] {
		if l != `{"type":"keepalive"}` {
			t.Errorf("unexpected line before the end: %s", l)
		}
	}
	if got, want := fixTiming(lines[len(lines)-1]), `{"type":"end","execution_count":1,"stdout":"","stderr":"","results":[],"error":null,`+
		`"status":"ok","reason":"ok","warm":false,"start":"cold","timing":{"queue_ms":Q,"acquire_ms":0,"start_ms":0,"exec_ms":1,"total_ms":T}}`; got != want {
		t.Errorf("end = %s\nwant  %s", got, want)
	}
}

// An error after the 200 went out ends the stream with an explaining end
// event; one before it is a plain error response.
func TestStreamErrors(t *testing.T) {
	never := make(chan struct{})
	f := newSessionFixture(t, gatedKernel(never, richRest), kernels.Config{}, api.Config{})
	srv := httptest.NewServer(f.h)
	defer srv.Close()
	id := f.create(t, `{"language":"python"}`)

	resp := streamRequest(t, t.Context(), srv, id, "application/x-ndjson")
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); err != nil || line != `{"type":"stdout","text":"hi\n"}`+"\n" {
		t.Fatalf("first line = %q, %v", line, err)
	}
	// Busy before streaming starts: a plain 409.
	rec := f.doWith(t, http.MethodPost, "/v1/sessions/"+id+"/execute", `{"code":"1"}`, map[string]string{"Accept": "application/x-ndjson"})
	if rec.Code != http.StatusConflict || !strings.HasPrefix(rec.Body.String(), `{"code":"busy",`) {
		t.Errorf("concurrent stream: %d %s, want 409 busy", rec.Code, rec.Body)
	}
	// The session deleted under the running cell: the stream ends with
	// the error.
	if rec := f.do(t, http.MethodDelete, "/v1/sessions/"+id, ""); rec.Code != http.StatusNoContent {
		t.Fatalf("delete: %d %s", rec.Code, rec.Body)
	}
	rest, err := io.ReadAll(br)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fixTiming(string(rest)), `{"type":"end","execution_count":0,"stdout":"hi\n","stderr":"","results":[],"error":null,`+
		`"status":"aborted","reason":"session_not_found","message":"no such session (it may have expired or been deleted)",`+
		`"warm":false,"start":"cold","timing":{"queue_ms":Q,"acquire_ms":0,"start_ms":0,"exec_ms":0,"total_ms":T}}`+"\n"; got != want {
		t.Errorf("end = %s\nwant  %s", got, want)
	}
	// Not found before streaming starts: a plain 404.
	rec = f.doWith(t, http.MethodPost, "/v1/sessions/"+id+"/execute", `{"code":"1"}`, map[string]string{"Accept": "text/event-stream"})
	if rec.Code != http.StatusNotFound || !strings.HasPrefix(rec.Body.String(), `{"code":"session_not_found",`) {
		t.Errorf("stream on a deleted session: %d %s, want 404 session_not_found", rec.Code, rec.Body)
	}
}

// A kernel that dies during a streamed cell ends the stream with the
// cell's end event, which says the state is gone and the kernel restarted.
func TestStreamKernelDies(t *testing.T) {
	proceed := make(chan struct{})
	die := func(_ context.Context, k *runnertest.Kernel, _ func(runner.Event)) (runner.ExecuteResult, error) {
		k.Lose()
		return runner.ExecuteResult{}, runner.ErrKernelLost
	}
	f := newSessionFixture(t, gatedKernel(proceed, die), kernels.Config{}, api.Config{})
	srv := httptest.NewServer(f.h)
	defer srv.Close()
	id := f.create(t, `{"language":"python"}`)
	resp := streamRequest(t, t.Context(), srv, id, "application/x-ndjson")
	close(proceed)
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fixTiming(string(body)), `{"type":"stdout","text":"hi\n"}`+"\n"+
		`{"type":"end","execution_count":0,"stdout":"hi\n","stderr":"","results":[],"error":null,`+
		`"status":"aborted","reason":"kernel_lost","state_lost":true,"state_lost_reason":"the kernel died during the cell","kernel_restarted":true,`+
		`"warm":false,"start":"cold","timing":{"queue_ms":Q,"acquire_ms":0,"start_ms":0,"exec_ms":0,"total_ms":T}}`+"\n"; got != want {
		t.Errorf("stream = %s\nwant     %s", got, want)
	}
}

// A streaming client that disconnects interrupts the cell.
func TestStreamClientGoneInterrupts(t *testing.T) {
	never := make(chan struct{})
	f := newSessionFixture(t, gatedKernel(never, richRest), kernels.Config{}, api.Config{})
	srv := httptest.NewServer(f.h)
	defer srv.Close()
	id := f.create(t, `{"language":"python"}`)
	ctx, cancel := context.WithCancel(t.Context())
	resp := streamRequest(t, ctx, srv, id, "application/x-ndjson")
	if line, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil || !strings.Contains(line, "stdout") {
		t.Fatalf("first line = %q, %v", line, err)
	}
	cancel()
	k := f.kernel(t, 1)
	waitFor(t, "cell interrupted", func() bool { return k.Interrupts() == 1 && !k.Running() })
	waitFor(t, "session idle", func() bool {
		return strings.Contains(f.do(t, http.MethodGet, "/v1/sessions/"+id, "").Body.String(), `"state":"idle"`)
	})
}
