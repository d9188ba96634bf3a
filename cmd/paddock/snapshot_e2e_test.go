package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/pool"
)

// startedRun is the part of a run response about how its sandbox started.
type startedRun struct {
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
	Reason string `json:"reason"`
	Start  string `json:"start"`
	Warm   bool   `json:"warm"`
}

func (e *e2e) runStarted(t *testing.T, lang, code string) startedRun {
	t.Helper()
	var r startedRun
	code2, raw := e.do(t, http.MethodPost, "/v1/run", map[string]any{"language": lang, "code": code}, "")
	if code2 != http.StatusOK {
		t.Fatalf("run: HTTP %d %s", code2, raw)
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
	if r.Reason != "ok" {
		t.Fatalf("run %q: %+v", code, r)
	}
	return r
}

func waitStats(t *testing.T, e *e2e, what string, cond func(pool.Stats) bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond(statsOf(e, "python")) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %+v", what, statsOf(e, "python"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestE2ESnapshotWarmPool: pooled Python sandboxes come from the
// template's snapshot, with pandas already imported, and clones never
// repeat each other's random numbers. Node is never snapshotted, and its
// runs differ too.
func TestE2ESnapshotWarmPool(t *testing.T) {
	e := newE2E(t)
	if s := statsOf(e, "python"); s.Snapshot != "ready" || s.Restores == 0 {
		t.Fatalf("python pool %+v, want it filled from a ready snapshot", s)
	}
	r := e.runStarted(t, "python", "import sys\nprint('pandas' in sys.modules, 'matplotlib.pyplot' in sys.modules)\nimport pandas\nprint(pandas.__version__)")
	if !strings.HasPrefix(r.Stdout, "True True\n") || r.Start != "pool" || !r.Warm {
		t.Fatalf("pooled python run: %+v, want pandas imported before the run, from the pool", r)
	}

	probes := []struct{ lang, code string }{
		{"python", "import random; print(random.random())"},
		{"python", "import numpy as np; print(np.random.rand())"},
		{"python", "import uuid, secrets; print(uuid.uuid4(), secrets.token_hex(8))"},
		{"node", "console.log(Math.random())"},
		{"node", "console.log(require('crypto').randomBytes(8).toString('hex'))"},
	}
	for _, p := range probes {
		seen := map[string]bool{}
		for range 3 {
			out := e.runStarted(t, p.lang, p.code).Stdout
			if seen[out] {
				t.Errorf("%s %q printed %q twice in fresh sandboxes", p.lang, p.code, out)
			}
			seen[out] = true
		}
	}
}

// TestE2ESnapshotLostAndCorrupt: with no pool, every Python run restores
// the image on the request path. Deleting the image makes the next start
// cold and the image is rebuilt; a corrupt image likewise falls back to a
// cold start with the server healthy, and is replaced.
func TestE2ESnapshotLostAndCorrupt(t *testing.T) {
	snaps := t.TempDir()
	e := newE2EWith(t, "--pool-size=0", "--pool-max=0", "--snapshot-dir="+snaps)
	waitStats(t, e, "the snapshot", func(s pool.Stats) bool { return s.Snapshot == "ready" })
	if r := e.runStarted(t, "python", "print('pandas' in __import__('sys').modules)"); r.Start != "restore" || r.Warm || r.Stdout != "True\n" {
		t.Fatalf("run with no pool: %+v, want a restore with pandas imported", r)
	}
	image := func() string {
		m, _ := filepath.Glob(filepath.Join(snaps, "python-*", "checkpoint.img"))
		if len(m) != 1 {
			return ""
		}
		return filepath.Dir(m[0])
	}
	dir := image()
	if dir == "" {
		t.Fatalf("no image under %s", snaps)
	}

	breakers := []struct {
		name  string
		spoil func(t *testing.T, dir string)
	}{
		{"deleted", func(t *testing.T, dir string) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
		}},
		{"corrupt", func(t *testing.T, dir string) {
			for _, f := range []string{"checkpoint.img", "pages.img"} {
				if err := os.WriteFile(filepath.Join(dir, f), []byte("garbage"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}},
	}
	for _, b := range breakers {
		failures := statsOf(e, "python").RestoreFailures
		b.spoil(t, image())
		r := e.runStarted(t, "python", "print(6 * 7)")
		if r.Start != "cold" || r.Stdout != "42\n" {
			t.Fatalf("%s image: run %+v, want a cold start that works", b.name, r)
		}
		e.healthy(t)
		if s := statsOf(e, "python"); s.RestoreFailures != failures+1 {
			t.Errorf("%s image: %d restore failures, want %d", b.name, s.RestoreFailures, failures+1)
		}
		waitStats(t, e, "the rebuilt snapshot", func(s pool.Stats) bool { return s.Snapshot == "ready" })
		if image() == "" {
			t.Fatalf("%s image: not rebuilt on disk", b.name)
		}
		if r := e.runStarted(t, "python", "print(1)"); r.Start != "restore" {
			t.Fatalf("%s image: run after the rebuild %+v, want a restore", b.name, r)
		}
	}
}

// TestE2ESnapshotSharedDirectory: two servers on one snapshot directory,
// with agents that differ by one byte, so that their images have
// different keys (as two versions of Paddock side by side would). The
// second server's build prunes the template's other keys, but not the
// image the first server restores from: both keep restoring from their
// own image, and neither sees a restore fail.
func TestE2ESnapshotSharedDirectory(t *testing.T) {
	snaps := t.TempDir()
	flags := []string{"--templates=python-slim", "--pool-size=0", "--pool-max=0", "--session-kernels=0", "--snapshot-dir=" + snaps}
	ready := func(e *e2e) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Minute) // a safety net only
		for s := statsOf(e, "python-slim"); s.Snapshot != "ready"; s = statsOf(e, "python-slim") {
			if time.Now().After(deadline) {
				t.Fatalf("python-slim after 5 minutes: %+v, want a ready snapshot", s)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	images := func() []string {
		m, _ := filepath.Glob(filepath.Join(snaps, "python-slim-*", "checkpoint.img"))
		return m
	}
	run := func(e *e2e, who string) {
		t.Helper()
		var r startedRun
		code, raw := e.do(t, http.MethodPost, "/v1/run", map[string]any{"template": "python-slim", "code": "print(6 * 7)"}, "")
		if code != http.StatusOK {
			t.Fatalf("%s: HTTP %d %s", who, code, raw)
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatalf("decoding %s: %v", raw, err)
		}
		if r.Start != "restore" || r.Stdout != "42\n" {
			t.Fatalf("%s: run %+v, want 42 from a restore", who, r)
		}
	}

	older := newE2EWith(t, flags...)
	ready(older)
	if n := len(images()); n != 1 {
		t.Fatalf("%d images after the first server's build, want 1", n)
	}
	agent, err := os.ReadFile(os.Getenv("PADDOCK_AGENT"))
	if err != nil {
		t.Fatal(err)
	}
	otherAgent := filepath.Join(t.TempDir(), "paddock-agent")
	if err := os.WriteFile(otherAgent, append(agent, 0), 0o755); err != nil {
		t.Fatal(err)
	}
	newer := newE2EWith(t, append(flags, "--agent="+otherAgent)...)
	ready(newer)
	if s := statsOf(newer, "python-slim"); s.Snapshot != "ready" {
		t.Fatalf("second server: %+v", s)
	}
	if got := images(); len(got) != 2 {
		t.Fatalf("images after the second server's build: %v, want both servers' (2)", got)
	}
	run(older, "first server")
	run(newer, "second server")
	for _, e := range []*e2e{older, newer} {
		if s := statsOf(e, "python-slim"); s.RestoreFailures != 0 {
			t.Errorf("a server saw %d restore failures, want none", s.RestoreFailures)
		}
	}
}
