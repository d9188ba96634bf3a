package agent

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/runner/wire"
)

func TestBadRequest(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("n", 256) // one more than a name may have
	tests := []struct {
		name     string
		req      wire.Run
		wantCode string // and then the file's path in Fail.Path
		wantPath string
	}{
		{name: "parent path", req: wire.Run{Files: []wire.File{{Path: "../x", Content: []byte("x")}}}, wantCode: "bad_path", wantPath: "../x"},
		{name: "absolute path", req: wire.Run{Files: []wire.File{{Path: "/etc/x", Content: []byte("x")}}}, wantCode: "bad_path", wantPath: "/etc/x"},
		{name: "parent inside path", req: wire.Run{Files: []wire.File{{Path: "a/../../x", Content: []byte("x")}}}, wantCode: "bad_path", wantPath: "a/../../x"},
		{name: "good then bad", req: wire.Run{Files: []wire.File{{Path: "ok.txt"}, {Path: "../x"}}}, wantCode: "bad_path", wantPath: "../x"},
		{name: "empty path", req: wire.Run{Files: []wire.File{{Path: ""}}}, wantCode: "bad_path", wantPath: ""},
		{name: "name too long", req: wire.Run{Files: []wire.File{{Path: "d/" + long}}}, wantCode: "name_too_long", wantPath: "d/" + long},
		{name: "parent is a file", req: wire.Run{Files: []wire.File{{Path: "f"}, {Path: "f/x"}}}, wantCode: "not_dir", wantPath: "f/x"},
		{name: "negative timeout", req: wire.Run{TimeoutMS: -1}},
		{name: "env name with equals", req: wire.Run{Env: map[string]string{"A=B": "c"}}},
		{name: "argument with NUL", req: wire.Run{Args: []string{"a\x00b"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(t, LanguagePython)
			c := startAgent(t, cfg)
			c.hello()
			tt.req.Code = "open('ran', 'w').write('x')"
			res := c.run(tt.req)
			if res.fail == nil || !res.fail.BadRequest || res.fail.Message == "" {
				t.Fatalf("got fail %+v, exit %+v; want a bad request", res.fail, res.exit)
			}
			if res.fail.Code != tt.wantCode || res.fail.Path != tt.wantPath {
				t.Errorf("fail code %q path %q, want %q %q", res.fail.Code, res.fail.Path, tt.wantCode, tt.wantPath)
			}
			for _, p := range []string{filepath.Join(cfg.Workdir, "ran"), filepath.Join(cfg.Workdir, "ok.txt"), filepath.Join(filepath.Dir(cfg.Workdir), "x")} {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s: %v, want it absent", p, err)
				}
			}
			// The refused request still used the sandbox.
			again := c.run(wire.Run{Code: "print(1)"})
			if again.fail == nil || again.fail.Message != "sandbox already used" || again.fail.BadRequest {
				t.Errorf("second run: fail %+v, exit %+v; want sandbox already used", again.fail, again.exit)
			}
		})
	}
}

func TestSecondRun(t *testing.T) {
	t.Parallel()
	for _, lang := range []string{LanguagePython, LanguageNode} {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			c := startAgent(t, testConfig(t, lang))
			c.hello()
			if exit := c.run(wire.Run{Code: "print(1)"}).mustExit(t); exit.Reason != "ok" && lang == LanguagePython {
				t.Errorf("first run: %+v", exit)
			}
			res := c.run(wire.Run{Code: "print(2)"})
			want := wire.Fail{Message: "sandbox already used"}
			if res.fail == nil || *res.fail != want {
				t.Errorf("second run: fail %+v, exit %+v; want %+v", res.fail, res.exit, want)
			}
		})
	}
}

func TestWarmupFailure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		language string
		warmup   string
		want     []string
	}{
		{
			name:     "python",
			language: LanguagePython,
			warmup:   "raise RuntimeError('nope')",
			want:     []string{"interpreter not ready", "exit status 1", "RuntimeError: nope"},
		},
		{
			name:     "node",
			language: LanguageNode,
			warmup:   "throw new Error('nope')",
			want:     []string{"interpreter not ready", "exit status 1", "Error: nope"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(t, tt.language)
			cfg.Warmup = tt.warmup
			c := startAgent(t, cfg)
			c.failing = true
			f, err := c.next()
			if err != nil {
				t.Fatal(err)
			}
			if f.Type != wire.TypeFail {
				t.Fatalf("first frame %c %s, want fail", f.Type, f.Payload)
			}
			var fail wire.Fail
			if err := json.Unmarshal(f.Payload, &fail); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(fail.Message, w) {
					t.Errorf("fail message %q does not mention %q", fail.Message, w)
				}
			}
		})
	}
}
