package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/pool"
)

// createdSession is the answer to a session create, as far as these
// tests read it.
type createdSession struct {
	ID     string `json:"id"`
	Start  string `json:"start"`
	Warm   bool   `json:"warm"`
	Timing struct {
		KernelMS float64 `json:"kernel_ms"`
	} `json:"timing"`
}

func (e *e2e) createSession(t *testing.T, body map[string]any) createdSession {
	t.Helper()
	code, raw := e.do(t, "POST", "/v1/sessions", body, "")
	if code != http.StatusCreated {
		t.Fatalf("create session: HTTP %d %s", code, raw)
	}
	var s createdSession
	if err := json.Unmarshal(raw, &s); err != nil || s.ID == "" {
		t.Fatalf("create session: %s", raw)
	}
	t.Cleanup(func() { e.do(t, "DELETE", "/v1/sessions/"+s.ID, nil, "") })
	return s
}

// premadeSession waits for a kernel-ready sandbox of lang and opens a
// session on it.
func (e *e2e) premadeSession(t *testing.T, lang string) createdSession {
	t.Helper()
	waitStats(t, e, lang+" kernel ready", func(pool.Stats) bool { return statsOf(e, lang).KernelsReady == 1 })
	s := e.createSession(t, map[string]any{"language": lang})
	if s.Start != "kernel" || !s.Warm || s.Timing.KernelMS != 0 {
		t.Fatalf("session %+v, want start kernel, warm, kernel_ms 0", s)
	}
	return s
}

// interruptRunaway runs a cell that prints a line and spins, interrupts
// it once the line arrives, and returns the end event's reason.
func (e *e2e) interruptRunaway(t *testing.T, id, code string) string {
	t.Helper()
	return e.interruptRunawayAfter(t, id, code, nil)
}

// interruptRunawayAfter is interruptRunaway that calls running (unless
// nil) once the line has arrived, before the interrupt. The cell asks for
// the longest timeout the server allows, so that it ends by the interrupt
// however long running takes on a loaded machine, within that limit.
func (e *e2e) interruptRunawayAfter(t *testing.T, id, code string, running func()) string {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"code": code, "timeout_ms": e.cfg.MaxTimeout.Milliseconds()})
	req, _ := http.NewRequest("POST", e.srv.URL+"/v1/sessions/"+id+"/execute", strings.NewReader(string(b)))
	req.Header.Set("Accept", "application/x-ndjson")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sent := false
	for sc.Scan() {
		var ev struct{ Type, Text, Reason string }
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("bad NDJSON line %q", sc.Text())
		}
		if ev.Type == "stdout" && ev.Text == "spinning\n" && !sent {
			if running != nil {
				running()
			}
			if code, raw := e.do(t, "POST", "/v1/sessions/"+id+"/interrupt", nil, ""); code >= 300 {
				t.Fatalf("interrupt: HTTP %d %s", code, raw)
			}
			sent = true
		}
		if ev.Type == "end" {
			return ev.Reason
		}
	}
	t.Fatal("the cell's stream ended without an end event")
	return ""
}

// TestE2EPremadeKernels: a session on a sandbox whose kernel was opened
// before it was asked for keeps state across cells, moves files both
// ways and survives an interrupt; two such kernels never share random
// numbers (each sandbox reseeded after its own restore).
func TestE2EPremadeKernels(t *testing.T) {
	e := newE2E(t)
	cases := []struct {
		lang, set, get, runaway, readFile string
		random                            []string
	}{
		{"python", "x = 41", "x + 1", "print('spinning', flush=True)\nwhile True: pass", "open('in.txt').read()",
			[]string{"import random; random.random()", "import numpy as np; np.random.rand()", "import uuid, secrets; (str(uuid.uuid4()), secrets.token_hex(8))"}},
		{"node", "var x = 41", "x + 1", "console.log('spinning'); while (true) {}", "require('fs').readFileSync('in.txt', 'utf8')",
			[]string{"Math.random()", "require('crypto').randomBytes(8).toString('hex')"}},
	}
	for _, c := range cases {
		t.Run(c.lang, func(t *testing.T) {
			a := e.premadeSession(t, c.lang)
			e.exec(t, a.ID, c.set)
			if r := e.exec(t, a.ID, c.get); mainText(r) != "42" || r.ExecutionCount != 2 || r.Start != "kernel" {
				t.Errorf("%s = %q (count %d, start %q), want 42 (count 2, start kernel)", c.get, mainText(r), r.ExecutionCount, r.Start)
			}
			files := "/v1/sessions/" + a.ID + "/files?path=in.txt"
			if status, raw := e.sendRaw(t, "PUT", files, []byte("from the host")); status >= 300 {
				t.Fatalf("write file: HTTP %d %s", status, raw)
			}
			if r := e.exec(t, a.ID, c.readFile); !strings.Contains(mainText(r), "from the host") {
				t.Errorf("the kernel read %q, want the file written from the host", mainText(r))
			}
			if status, raw := e.do(t, "GET", files, nil, ""); status != http.StatusOK || string(raw) != "from the host" {
				t.Errorf("read file: HTTP %d %q", status, raw)
			}
			if reason := e.interruptRunaway(t, a.ID, c.runaway); reason != "interrupted" {
				t.Errorf("runaway cell ended %q, want interrupted", reason)
			}
			if r := e.exec(t, a.ID, "x"); mainText(r) != "41" {
				t.Errorf("after the interrupt x = %q, want 41", mainText(r))
			}

			b := e.premadeSession(t, c.lang)
			for _, code := range c.random {
				ra, rb := mainText(e.exec(t, a.ID, code)), mainText(e.exec(t, b.ID, code))
				if ra == "" || ra == rb {
					t.Errorf("%s: %q in one premade kernel, %q in the other; want two different values", code, ra, rb)
				}
			}
		})
	}
}

// TestE2EPremadeKernelFallback: a session that finds no kernel-ready
// sandbox, or asks for an environment, opens a kernel on a pooled sandbox
// as before. With room for two sandboxes, a held premade session keeps
// the kernel-ready list from refilling.
func TestE2EPremadeKernelFallback(t *testing.T) {
	e := newE2EWith(t, "--templates=python", "--max-sandboxes=2")
	a := e.premadeSession(t, "python")
	b := e.createSession(t, map[string]any{"language": "python"})
	if b.Start == "kernel" || b.Timing.KernelMS <= 0 {
		t.Fatalf("second session %+v, want one that opened its own kernel", b)
	}
	if s := statsOf(e, "python"); s.KernelMisses != 1 || s.KernelHits != 1 || s.KernelsReady != 0 {
		t.Errorf("kernel misses, hits, ready = %d, %d, %d; want 1, 1, 0", s.KernelMisses, s.KernelHits, s.KernelsReady)
	}
	for _, id := range []string{a.ID, b.ID} {
		e.exec(t, id, "x = 41")
		if r := e.exec(t, id, "x + 1"); mainText(r) != "42" {
			t.Errorf("x + 1 = %q, want 42", mainText(r))
		}
	}
	// Room again: the pool refills its ready list, then the kernel.
	e.do(t, "DELETE", "/v1/sessions/"+a.ID, nil, "")
	e.do(t, "DELETE", "/v1/sessions/"+b.ID, nil, "")
	waitStats(t, e, "kernel ready again", func(s pool.Stats) bool { return s.KernelsReady == 1 })
	c := e.createSession(t, map[string]any{"language": "python", "env": map[string]string{"GREETING": "hi"}})
	if c.Start == "kernel" {
		t.Fatalf("session with env %+v, want one that opened its own kernel", c)
	}
	if r := e.exec(t, c.ID, "import os; os.environ['GREETING']"); mainText(r) != "'hi'" {
		t.Errorf("GREETING = %q, want 'hi'", mainText(r))
	}
}
