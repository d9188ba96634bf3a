package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// Session limits of the fuzzed server, in the API's units.
const (
	fuzzMaxTTLS      = 3600
	fuzzMaxTimeoutMS = 60_000
)

// newFuzzServer is a server with sessions over the fake runtime, limited
// as the fuzz targets expect. No sandbox is started: the targets stop at
// the options a handler would hand to kernels.
func newFuzzServer(f *testing.F) *server {
	gin.SetMode(gin.ReleaseMode) // as New does; checkRefusal makes gin contexts
	p, err := pool.New(&runnertest.Runtime{}, pool.Config{Templates: []pool.Template{
		{Name: "python", Spec: runner.Spec{Language: "python"}},
		{Name: "python-ml", Spec: runner.Spec{Language: "python"}},
		{Name: "node", Spec: runner.Spec{Language: "node"}},
	}}, nil)
	if err != nil {
		f.Fatal(err)
	}
	km, err := kernels.New(p, kernels.Config{MaxTTL: fuzzMaxTTLS * time.Second, DefaultTTL: time.Minute,
		MaxTimeout: fuzzMaxTimeoutMS * time.Millisecond, DefaultTimeout: 10 * time.Second}, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := errors.Join(km.Close(ctx), p.Close(ctx)); err != nil {
			f.Errorf("closing: %v", err)
		}
	})
	return newServer(Config{Pool: p, Kernels: km, Templates: []Template{
		{Name: "python-ml", Language: "python"},
		{Name: "python", Language: "python"},
		{Name: "node", Language: "node"},
	}})
}

// FuzzCreateSessionRequest decodes and checks arbitrary bodies of POST
// /v1/sessions as the handler does. Whatever the body, nothing panics; a
// refusal is a 400 with a code; an accepted body yields options within
// the limits, and encoding the decoded request again yields the same
// options. The seeds are in testdata/fuzz/FuzzCreateSessionRequest.
func FuzzCreateSessionRequest(f *testing.F) {
	s := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		opts, req, err := decodeCreate(s, body)
		if err != nil {
			checkRefusal(t, s, body, err)
			return
		}
		if !json.Valid(body) {
			t.Fatalf("accepted a body that is not JSON: %q", body)
		}
		switch {
		case req.Language == "python" && opts.Template != "python",
			req.Language == "node" && opts.Template != "node",
			req.Language != "python" && req.Language != "node":
			t.Fatalf("language %q became template %q", req.Language, opts.Template)
		case opts.TTL < 0 || opts.TTL > fuzzMaxTTLS*time.Second || opts.TTL != time.Duration(req.TTLS)*time.Second:
			t.Fatalf("ttl_s %d became TTL %s (at most %ds)", req.TTLS, opts.TTL, fuzzMaxTTLS)
		}
		checkAcceptedEnv(t, opts.Env)
		again, _, err := decodeCreate(s, marshal(t, req))
		if err != nil || !reflect.DeepEqual(again, opts) {
			t.Fatalf("round trip of %q: %+v, %v; want %+v", body, again, err, opts)
		}
	})
}

// FuzzExecuteRequest does the same for POST /v1/sessions/{id}/execute.
// The seeds are in testdata/fuzz/FuzzExecuteRequest.
func FuzzExecuteRequest(f *testing.F) {
	s := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		opts, req, err := decodeExecute(s, body)
		if err != nil {
			checkRefusal(t, s, body, err)
			return
		}
		if !json.Valid(body) {
			t.Fatalf("accepted a body that is not JSON: %q", body)
		}
		switch {
		case req.Code == nil || opts.Code == "" || opts.Code != *req.Code || !utf8.ValidString(opts.Code):
			t.Fatalf("code %v became %q", req.Code, opts.Code)
		case opts.Timeout < 0 || opts.Timeout > fuzzMaxTimeoutMS*time.Millisecond ||
			opts.Timeout != time.Duration(req.TimeoutMS)*time.Millisecond:
			t.Fatalf("timeout_ms %d became Timeout %s (at most %dms)", req.TimeoutMS, opts.Timeout, fuzzMaxTimeoutMS)
		case opts.Queue != req.Queue:
			t.Fatalf("queue %t became %t", req.Queue, opts.Queue)
		}
		checkAcceptedEnv(t, opts.Env)
		again, _, err := decodeExecute(s, marshal(t, req))
		if err != nil || !reflect.DeepEqual(again, opts) {
			t.Fatalf("round trip of %q: %+v, %v; want %+v", body, again, err, opts)
		}
	})
}

// decodeCreate is createSession's parsing: decodeJSON, then
// toCreateOptions.
func decodeCreate(s *server, body []byte) (kernels.CreateOptions, createSessionRequest, error) {
	var req createSessionRequest
	if err := decodeJSON(body, &req); err != nil {
		return kernels.CreateOptions{}, req, err
	}
	opts, err := s.toCreateOptions(req)
	return opts, req, err
}

// decodeExecute is execute's parsing: decodeJSON, then toExecuteOptions.
func decodeExecute(s *server, body []byte) (kernels.ExecuteOptions, executeRequest, error) {
	var req executeRequest
	if err := decodeJSON(body, &req); err != nil {
		return kernels.ExecuteOptions{}, req, err
	}
	opts, err := s.toExecuteOptions(req)
	return opts, req, err
}

// checkRefusal requires err to be a request error that describeError
// answers with 400 and a code and message.
func checkRefusal(t *testing.T, s *server, body []byte, err error) {
	t.Helper()
	var reqErr *requestError
	if !errors.As(err, &reqErr) {
		t.Fatalf("body %q: error %T %v is not a request error", body, err, err)
	}
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	c.Request = httptest.NewRequest(http.MethodPost, "/v1/sessions", nil)
	status, eb := s.describeError(c, err)
	if status != http.StatusBadRequest || eb.Code == "" || eb.Message == "" || !utf8.ValidString(eb.Message) {
		t.Fatalf("body %q: answered %d %+v, want 400 with a code and a message", body, status, eb)
	}
}

// checkAcceptedEnv requires env to be one checkEnv accepts: nil when
// empty, else at most maxEnv entries with non-empty keys free of '=' and
// NUL, and values free of NUL, all valid UTF-8.
func checkAcceptedEnv(t *testing.T, env map[string]string) {
	t.Helper()
	if env != nil && len(env) == 0 || len(env) > maxEnv {
		t.Fatalf("env has %d entries (nil: %t)", len(env), env == nil)
	}
	for k, v := range env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) ||
			!utf8.ValidString(k) || !utf8.ValidString(v) {
			t.Fatalf("env entry %q=%q accepted", k, v)
		}
	}
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encoding %+v: %v", v, err)
	}
	return b
}
