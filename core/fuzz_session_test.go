package core

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/pool"
	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/runnertest"
)

// Session limits of the fuzzed service.
const (
	fuzzMaxTTLS      = 3600
	fuzzMaxTimeoutMS = 60_000
)

// newFuzzService is a service with sessions over the fake runtime,
// limited as the fuzz targets expect. No sandbox is started: the targets
// stop at the options the core would hand to kernels.
func newFuzzService(f *testing.F) *Service {
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
	s, err := New(Config{Pool: p, Kernels: km, Templates: []Template{
		{Name: "python-ml", Language: "python"},
		{Name: "python", Language: "python"},
		{Name: "node", Language: "node"},
	}})
	if err != nil {
		f.Fatal(err)
	}
	return s
}

// fuzzSession is the shape /v1 gives a session to create; bodies that
// do not decode into it are skipped (the doors refuse them).
type fuzzSession struct {
	Language string            `json:"language"`
	TTLS     int32             `json:"ttl_s"`
	Env      map[string]string `json:"env"`
}

type fuzzExecute struct {
	Code      string            `json:"code"`
	TimeoutMS int32             `json:"timeout_ms"`
	Env       map[string]string `json:"env"`
	Queue     bool              `json:"queue"`
}

// FuzzCreateSession checks arbitrary session inputs as CreateSession
// does. Whatever the input, nothing panics; a refusal is a KindInvalid
// with a code and a message; accepted input yields options within the
// limits, and checking them again yields the same options. The seeds
// (request bodies of /v1) are in testdata/fuzz/FuzzCreateSession.
func FuzzCreateSession(f *testing.F) {
	s := newFuzzService(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		var req fuzzSession
		if json.Unmarshal(body, &req) != nil {
			return
		}
		in := SessionInput{Language: req.Language, TTL: time.Duration(req.TTLS) * time.Second, Env: req.Env}
		opts, err := s.createOptions(Caller{}, in)
		if err != nil {
			checkRefusal(t, body, err)
			return
		}
		switch {
		case req.Language == "python" && opts.Template != "python",
			req.Language == "node" && opts.Template != "node",
			req.Language != "python" && req.Language != "node":
			t.Fatalf("language %q became template %q", req.Language, opts.Template)
		case opts.TTL < 0 || opts.TTL > fuzzMaxTTLS*time.Second || opts.TTL != in.TTL:
			t.Fatalf("ttl_s %d became TTL %s (at most %ds)", req.TTLS, opts.TTL, fuzzMaxTTLS)
		}
		checkAcceptedEnv(t, opts.Env)
		again, err := s.createOptions(Caller{}, in)
		if err != nil || !reflect.DeepEqual(again, opts) {
			t.Fatalf("again %q: %+v, %v; want %+v", body, again, err, opts)
		}
	})
}

// FuzzExecute does the same for Execute's checks. The seeds are in
// testdata/fuzz/FuzzExecute.
func FuzzExecute(f *testing.F) {
	s := newFuzzService(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		var req fuzzExecute
		if json.Unmarshal(body, &req) != nil {
			return
		}
		in := ExecuteInput{Code: req.Code, Timeout: time.Duration(req.TimeoutMS) * time.Millisecond, Env: req.Env, Queue: req.Queue}
		opts, err := s.executeOptions(in)
		if err != nil {
			checkRefusal(t, body, err)
			return
		}
		switch {
		case opts.Code == "" || opts.Code != req.Code || !utf8.ValidString(opts.Code):
			t.Fatalf("code %q became %q", req.Code, opts.Code)
		case opts.Timeout < 0 || opts.Timeout > fuzzMaxTimeoutMS*time.Millisecond || opts.Timeout != in.Timeout:
			t.Fatalf("timeout_ms %d became Timeout %s (at most %dms)", req.TimeoutMS, opts.Timeout, fuzzMaxTimeoutMS)
		case opts.Queue != req.Queue:
			t.Fatalf("queue %t became %t", req.Queue, opts.Queue)
		}
		checkAcceptedEnv(t, opts.Env)
		again, err := s.executeOptions(in)
		if err != nil || !reflect.DeepEqual(again, opts) {
			t.Fatalf("again %q: %+v, %v; want %+v", body, again, err, opts)
		}
	})
}

// checkRefusal requires err to be a KindInvalid *Error with a code and a
// UTF-8 message.
func checkRefusal(t *testing.T, body []byte, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindInvalid || e.Code == "" || e.Message == "" || !utf8.ValidString(e.Message) {
		t.Fatalf("input %q: refused with %T %+v, want a KindInvalid with a code and a message", body, err, err)
	}
}

// checkAcceptedEnv requires env to be one checkEnv accepts: nil when
// empty, else at most maxEnv entries with non-empty keys free of '=' and
// NUL, and values free of NUL.
func checkAcceptedEnv(t *testing.T, env map[string]string) {
	t.Helper()
	if env != nil && len(env) == 0 || len(env) > maxEnv {
		t.Fatalf("env has %d entries (nil: %t)", len(env), env == nil)
	}
	for k, v := range env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
			t.Fatalf("env entry %q=%q accepted", k, v)
		}
	}
}
