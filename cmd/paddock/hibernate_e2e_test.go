package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

type hibernatedSession struct {
	ID         string  `json:"id"`
	State      string  `json:"state"`
	ImageBytes int64   `json:"image_bytes"`
	Count      int     `json:"execution_count"`
	Resumed    bool    `json:"resumed"`
	ResumeMS   float64 `json:"resume_ms"`
	Start      string  `json:"start"`
}

// sessionCall posts to a session's action (pause, resume) or GETs it ("")
// and decodes the answer, which must be a 200.
func (e *e2e) sessionCall(t *testing.T, id, action string) hibernatedSession {
	t.Helper()
	method, path := "GET", "/v1/sessions/"+id
	if action != "" {
		method, path = "POST", path+"/"+action
	}
	code, raw := e.do(t, method, path, nil, "")
	if code != http.StatusOK {
		t.Fatalf("%s %s: HTTP %d %s", method, path, code, raw)
	}
	var s hibernatedSession
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s %s: %v in %s", method, path, err, raw)
	}
	return s
}

// TestE2EHibernate: a session's variables, files and execution count
// survive hibernation; its sandbox is gone meanwhile and its image is the
// server's only; the next cell wakes it and says so; an idle session
// hibernates of itself; a damaged image loses its session, never gives it
// an empty kernel.
func TestE2EHibernate(t *testing.T) {
	e := newE2EWith(t, "--hibernate-after=2s")
	dir := filepath.Join(e.cfg.StateDir, "hibernate")

	t.Run("pause and wake", func(t *testing.T) {
		for _, lang := range []string{"python", "node"} {
			t.Run(lang, func(t *testing.T) {
				id := e.newSession(t, map[string]any{"language": lang})
				set, check := "x = 41\nopen('kept.txt', 'w').write('kept')", "print(x + 1, open('kept.txt').read())"
				if lang == "node" {
					set, check = "var x = 41; require('fs').writeFileSync('kept.txt', 'kept')", "console.log(x + 1, require('fs').readFileSync('kept.txt', 'utf8'))"
				}
				e.exec(t, id, set)
				sandbox := e.sandboxOf(t, id)
				paused := e.sessionCall(t, id, "pause")
				if paused.State != "hibernated" || paused.ImageBytes <= 0 || e.sandboxOf(t, id) != "" {
					t.Fatalf("after pause: %+v, want hibernated, no sandbox, an image", paused)
				}
				if slices.Contains(e.list(t), sandbox) {
					t.Errorf("the hibernated session's sandbox %s is still listed by runsc", sandbox)
				}
				if again := e.sessionCall(t, id, "pause"); again.State != "hibernated" {
					t.Errorf("pausing a hibernated session: %+v", again)
				}
				checkOwnerOnly(t, dir)
				r := e.exec(t, id, check)
				if strings.TrimSpace(r.Stdout) != "42 kept" || r.ExecutionCount != 2 {
					t.Errorf("after waking: stdout %q, count %d; want \"42 kept\", 2", r.Stdout, r.ExecutionCount)
				}
				var woke struct {
					Resumed bool   `json:"resumed"`
					Start   string `json:"start"`
					Timing  struct {
						ResumeMS float64 `json:"resume_ms"`
					} `json:"timing"`
				}
				_, raw := e.do(t, "POST", "/v1/sessions/"+id+"/execute", map[string]any{"code": "1"}, "")
				_ = json.Unmarshal(raw, &woke)
				if woke.Resumed {
					t.Errorf("a cell on an awake session says resumed: %s", raw)
				}
				if now := e.sessionCall(t, id, ""); now.State != "idle" || e.sandboxOf(t, id) == "" || now.Start != "wake" {
					t.Errorf("after waking: %+v, want idle on a woken sandbox", now)
				}
				if entries, _ := os.ReadDir(dir); len(entries) != 0 {
					t.Errorf("images left after waking: %d", len(entries))
				}
			})
		}
	})

	t.Run("resume says so", func(t *testing.T) {
		id := e.newSession(t, map[string]any{"language": "python"})
		e.exec(t, id, "y = 'still here'")
		e.sessionCall(t, id, "pause")
		r := e.sessionCall(t, id, "resume")
		if !r.Resumed || r.ResumeMS <= 0 || r.State != "idle" {
			t.Errorf("resume: %+v, want resumed with its time", r)
		}
		if out := e.exec(t, id, "print(y)"); strings.TrimSpace(out.Stdout) != "still here" {
			t.Errorf("after resume: %q", out.Stdout)
		}
		if r := e.sessionCall(t, id, "resume"); r.Resumed {
			t.Errorf("resuming an awake session says resumed: %+v", r)
		}
	})

	t.Run("idle", func(t *testing.T) {
		id := e.newSession(t, map[string]any{"language": "python"})
		e.exec(t, id, "z = 6 * 7")
		deadline := time.Now().Add(2 * time.Minute)
		for e.sessionCall(t, id, "").State != "hibernated" {
			if time.Now().After(deadline) {
				t.Fatal("an idle session was not hibernated within 2 minutes (--hibernate-after=2s)")
			}
			time.Sleep(100 * time.Millisecond)
		}
		if out := e.exec(t, id, "print(z)"); strings.TrimSpace(out.Stdout) != "42" || out.ExecutionCount != 2 {
			t.Errorf("after idle hibernation: %q, count %d", out.Stdout, out.ExecutionCount)
		}
	})

	t.Run("fork", func(t *testing.T) {
		parent := e.newSession(t, map[string]any{"language": "python"})
		e.exec(t, parent, "import random\nx = 41\nopen('kept.txt', 'w').write('kept')")
		code, raw := e.do(t, "POST", "/v1/sessions/"+parent+"/fork", map[string]any{"count": 3}, "")
		if code != http.StatusCreated {
			t.Fatalf("fork: HTTP %d %s", code, raw)
		}
		var forked struct {
			Sessions []hibernatedSession `json:"sessions"`
		}
		if err := json.Unmarshal(raw, &forked); err != nil || len(forked.Sessions) != 3 {
			t.Fatalf("fork answered %s", raw)
		}
		draws := map[string]bool{}
		for _, c := range forked.Sessions {
			t.Cleanup(func() { e.do(t, "DELETE", "/v1/sessions/"+c.ID, nil, "") })
			if c.ID == parent || c.Count != 1 {
				t.Errorf("child %+v, want a new id at execution 1", c)
			}
			r := e.exec(t, c.ID, "print(x + 1, open('kept.txt').read(), random.random())")
			out := strings.Fields(r.Stdout)
			if len(out) != 3 || out[0] != "42" || out[1] != "kept" || r.ExecutionCount != 2 {
				t.Fatalf("child %s printed %q at count %d", c.ID, r.Stdout, r.ExecutionCount)
			}
			draws[out[2]] = true
		}
		if len(draws) != 3 {
			t.Errorf("three children drew %d different random numbers, want 3: %v", len(draws), draws)
		}
		// The parent runs on, apart from its children.
		e.exec(t, forked.Sessions[0].ID, "x = 0")
		if r := e.exec(t, parent, "print(x)"); strings.TrimSpace(r.Stdout) != "41" {
			t.Errorf("the parent after its child changed x: %q", r.Stdout)
		}
		for _, bad := range []map[string]any{{"count": 0}, {"count": 101}} {
			if code, raw := e.do(t, "POST", "/v1/sessions/"+parent+"/fork", bad, ""); code != http.StatusBadRequest {
				t.Errorf("fork %v: HTTP %d %s, want 400", bad, code, raw)
			}
		}
		node := e.newSession(t, map[string]any{"language": "node"})
		code, raw = e.do(t, "POST", "/v1/sessions/"+node+"/fork", map[string]any{"count": 1}, "")
		if code != http.StatusConflict || !strings.Contains(string(raw), "fork_unsupported") {
			t.Errorf("forking a node session: HTTP %d %s, want 409 fork_unsupported", code, raw)
		}
		if n := len(e.st.Kernels.ListAll()); n > 16 {
			t.Errorf("%d sessions open after the forks", n)
		}
	})

	t.Run("checkpoint and rewind", func(t *testing.T) {
		id := e.newSession(t, map[string]any{"language": "python"})
		e.exec(t, id, "v = 'before'")
		code, raw := e.do(t, "POST", "/v1/sessions/"+id+"/checkpoints", map[string]any{"name": "one"}, "")
		if code != http.StatusCreated || !strings.Contains(string(raw), `"execution_count":1`) {
			t.Fatalf("checkpoint: HTTP %d %s", code, raw)
		}
		e.exec(t, id, "v = 'after'\nopen('late.txt', 'w').write('x')")
		code, raw = e.do(t, "POST", "/v1/sessions/"+id+"/rewind", map[string]any{"checkpoint": "one"}, "")
		if code != http.StatusOK {
			t.Fatalf("rewind: HTTP %d %s", code, raw)
		}
		r := e.exec(t, id, "import os\nprint(v, os.path.exists('late.txt'))")
		if strings.TrimSpace(r.Stdout) != "before False" || r.ExecutionCount != 2 {
			t.Errorf("after rewinding: %q at count %d, want \"before False\" at 2", r.Stdout, r.ExecutionCount)
		}
		if code, raw := e.do(t, "POST", "/v1/sessions/"+id+"/rewind", map[string]any{"checkpoint": "nope"}, ""); code != http.StatusNotFound {
			t.Errorf("rewind to a missing checkpoint: HTTP %d %s", code, raw)
		}
		if code, raw := e.do(t, "POST", "/v1/sessions/"+id+"/checkpoints", map[string]any{"name": "../x"}, ""); code != http.StatusBadRequest {
			t.Errorf("a bad checkpoint name: HTTP %d %s", code, raw)
		}
		code, raw = e.do(t, "GET", "/v1/sessions/"+id+"/checkpoints", nil, "")
		if code != http.StatusOK || strings.Count(string(raw), `"name"`) != 1 {
			t.Errorf("listing checkpoints: HTTP %d %s", code, raw)
		}
		e.do(t, "DELETE", "/v1/sessions/"+id, nil, "")
		if left, _ := filepath.Glob(filepath.Join(dir, id+"-*")); len(left) != 0 {
			t.Errorf("checkpoints left after the session ended: %v", left)
		}
	})

	t.Run("damaged image", func(t *testing.T) {
		id := e.newSession(t, map[string]any{"language": "python"})
		e.exec(t, id, "secret = 1")
		e.sessionCall(t, id, "pause")
		images, _ := filepath.Glob(filepath.Join(dir, id+"-*"))
		if len(images) != 1 {
			t.Fatalf("images of %s: %v", id, images)
		}
		img := filepath.Join(images[0], "checkpoint.img")
		fi, err := os.Stat(img)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(img, fi.Size()/2); err != nil {
			t.Fatal(err)
		}
		code, raw := e.do(t, "POST", "/v1/sessions/"+id+"/execute", map[string]any{"code": "print(secret)"}, "")
		var body struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(raw, &body)
		if code < 400 || body.Code != "session_lost" || !strings.Contains(body.Message, "damaged") {
			t.Errorf("a cell on a damaged image: HTTP %d %s, want session_lost saying it is damaged", code, raw)
		}
		if _, err := os.Stat(images[0]); !os.IsNotExist(err) {
			t.Errorf("the damaged image is still on disk: %v", err)
		}
	})
}

// sandboxOf is the sandbox session id runs on, as the kernels see it;
// empty while it is hibernated.
func (e *e2e) sandboxOf(t *testing.T, id string) string {
	t.Helper()
	for _, s := range e.st.Kernels.ListAll() {
		if s.ID == id {
			return s.SandboxID
		}
	}
	t.Fatalf("session %s is not listed", id)
	return ""
}

// checkOwnerOnly fails unless dir and everything under it is its owner's
// only.
func checkOwnerOnly(t *testing.T, dir string) {
	t.Helper()
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v, want no access for group or others", p, fi.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestE2EMaxLiveSessions: over --max-live-sessions, a new session and a
// wake each hibernate the least recently used idle session, which keeps
// its state and wakes at its next call.
func TestE2EMaxLiveSessions(t *testing.T) {
	e := newE2EWith(t, "--max-live-sessions=2")
	a := e.newSession(t, map[string]any{"language": "python"})
	e.exec(t, a, "x = 'a'")
	b := e.newSession(t, map[string]any{"language": "python"})
	e.exec(t, b, "x = 'b'")
	c := e.newSession(t, map[string]any{"language": "python"})
	states := func() string {
		return e.sessionCall(t, a, "").State + " " + e.sessionCall(t, b, "").State + " " + e.sessionCall(t, c, "").State
	}
	if got := states(); got != "hibernated idle idle" {
		t.Fatalf("after a third session: states %q, want the least recently used (a) hibernated", got)
	}
	r := e.exec(t, a, "print(x)")
	if strings.TrimSpace(r.Stdout) != "a" || r.ExecutionCount != 2 {
		t.Errorf("a woken: stdout %q, count %d; want a, 2", r.Stdout, r.ExecutionCount)
	}
	if got := states(); got != "idle hibernated idle" {
		t.Errorf("after waking a: states %q, want b (now the least recently used) hibernated", got)
	}
	if r := e.exec(t, b, "print(x)"); strings.TrimSpace(r.Stdout) != "b" {
		t.Errorf("b woken: stdout %q, want b", r.Stdout)
	}
}
