package contract

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

// openKernel starts a sandbox of lang and opens a kernel on it.
func openKernel(t *testing.T, e Env, lang string) runner.Kernel {
	t.Helper()
	sb := start(t, e, lang, nil)
	ko, ok := sb.(runner.KernelOpener)
	if !ok {
		t.Fatalf("a %T cannot open a kernel", sb)
	}
	k, err := ko.OpenKernel(t.Context(), runner.KernelOptions{Env: map[string]string{"SESSION": "s1"}})
	if err != nil {
		t.Fatalf("opening a %s kernel: %v", lang, err)
	}
	return k
}

// execute runs one cell and returns its result and its stream text.
func execute(t *testing.T, k runner.Kernel, code string, timeout time.Duration) (runner.ExecuteResult, string) {
	t.Helper()
	var out strings.Builder
	res, err := k.Execute(t.Context(), runner.ExecuteRequest{Code: code, Timeout: timeout, MaxOutput: 1 << 20}, func(ev runner.Event) {
		if ev.Type == runner.EventStream {
			out.WriteString(ev.Text)
		}
	})
	if err != nil {
		t.Fatalf("executing %q: %v", code, err)
	}
	return res, out.String()
}

func testKernels(t *testing.T, e Env) {
	cells := map[string][3]string{
		// state, use, environment
		"python": {"x = 41", "print(x + 1)", "import os; print(os.environ['SESSION'])"},
		"node":   {"var x = 41", "console.log(x + 1)", "console.log(process.env.SESSION)"},
	}
	for _, lang := range []string{"python", "node"} {
		t.Run(lang+" state survives between cells", func(t *testing.T) {
			k := openKernel(t, e, lang)
			c := cells[lang]
			if res, _ := execute(t, k, c[0], 10*time.Second); res.Status != runner.StatusOK {
				t.Fatalf("first cell: %+v", res)
			}
			res, out := execute(t, k, c[1], 10*time.Second)
			if res.Status != runner.StatusOK || out != "42\n" || res.ExecutionCount != 2 {
				t.Fatalf("second cell: %+v %q, want ok, 42, count 2", res, out)
			}
			if _, out := execute(t, k, c[2], 10*time.Second); out != "s1\n" {
				t.Fatalf("session environment: %q, want s1", out)
			}
		})
	}
	t.Run("a cell's error is a result", func(t *testing.T) {
		k := openKernel(t, e, "python")
		res, _ := execute(t, k, "1/0", 10*time.Second)
		if res.Status != runner.StatusError || res.Error == nil || res.Error.Name != "ZeroDivisionError" {
			t.Fatalf("result %+v, want error ZeroDivisionError", res)
		}
	})
	t.Run("a cell past its timeout is aborted, state kept", func(t *testing.T) {
		k := openKernel(t, e, "python")
		execute(t, k, "x = 7", 10*time.Second)
		res, _ := execute(t, k, "import time\nwhile True: time.sleep(0.01)", time.Second)
		if res.Status != runner.StatusAborted || res.Reason != runner.ReasonTimeout {
			t.Fatalf("result %+v, want aborted by timeout", res)
		}
		if _, out := execute(t, k, "print(x)", 10*time.Second); out != "7\n" {
			t.Fatalf("after the timeout: %q, want 7", out)
		}
	})
	t.Run("restart forgets state", func(t *testing.T) {
		k := openKernel(t, e, "python")
		execute(t, k, "x = 7", 10*time.Second)
		if err := k.Restart(t.Context()); err != nil {
			t.Fatal(err)
		}
		res, _ := execute(t, k, "x", 10*time.Second)
		if res.Status != runner.StatusError || res.Error == nil || res.Error.Name != "NameError" || res.ExecutionCount != 1 {
			t.Fatalf("after restart: %+v, want NameError at count 1", res)
		}
	})
	t.Run("a kernel out of memory is lost with oom", func(t *testing.T) {
		k := openKernel(t, e, "python")
		res, err := k.Execute(t.Context(), runner.ExecuteRequest{Code: "a = []\nwhile True: a.append(bytearray(16 << 20))",
			Timeout: 30 * time.Second, MaxOutput: 1 << 20}, nil)
		if err == nil && res.Reason != runner.ReasonOOM {
			t.Fatalf("result %+v, want the kernel lost with oom", res)
		}
		if err != nil && !errors.Is(err, runner.ErrKernelLost) {
			t.Fatalf("execute: %v, want kernel lost", err)
		}
		select {
		case <-k.Lost():
		case <-time.After(time.Minute): // a safety net: the loss is seen when the interpreter dies
			t.Fatal("the kernel is not reported lost")
		}
	})
}

func testFiles(t *testing.T, e Env) {
	k := openKernel(t, e, "python")
	if err := k.WriteFile(t.Context(), "dir/a.txt", []byte("hello")); err != nil {
		t.Fatalf("write: %v", err)
	}
	got, err := k.ReadFile(t.Context(), "dir/a.txt", 1<<20)
	if err != nil || string(got) != "hello" {
		t.Fatalf("read: %q %v, want hello", got, err)
	}
	if _, out := execute(t, k, "print(open('dir/a.txt').read())", 10*time.Second); out != "hello\n" {
		t.Fatalf("the kernel reads %q, want hello", out)
	}
	execute(t, k, "open('made.txt','w').write('x'*5)", 10*time.Second)
	list, err := k.ListFiles(t.Context(), "")
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	var names []string
	for _, f := range list {
		names = append(names, f.Name)
	}
	slices.Sort(names)
	// .local is the image's: the sandbox user's site, where pip installs.
	if !slices.Equal(names, []string{".local", "dir", "made.txt"}) {
		t.Fatalf("listing %q, want [.local dir made.txt]", names)
	}
	if _, err := k.ReadFile(t.Context(), "missing.txt", 1<<20); !errors.Is(err, runner.ErrNotFound) {
		t.Fatalf("reading a missing file: %v, want not found", err)
	}
	execute(t, k, "import os; os.symlink('/etc/passwd', 'link')", 10*time.Second)
	if b, err := k.ReadFile(t.Context(), "link", 1<<20); err == nil {
		t.Fatalf("reading a link out of the workspace gave %.40q, want an error", b)
	}
	if err := k.WriteFile(t.Context(), "../escape", []byte("x")); err == nil {
		t.Fatal("writing ../escape succeeded")
	}
}
