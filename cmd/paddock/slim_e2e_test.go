package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/pool"
)

// routedRun is what a slim test reads from a run's response.
type routedRun struct {
	Stdout   string `json:"stdout"`
	Reason   string `json:"reason"`
	Start    string `json:"start"`
	Template string `json:"template"`
}

// runRouted posts body to /v1/run and requires a 200 with reason ok.
func (e *e2e) runRouted(t *testing.T, body map[string]any) routedRun {
	t.Helper()
	status, raw := e.do(t, http.MethodPost, "/v1/run", body, "")
	var r routedRun
	if status != http.StatusOK || json.Unmarshal(raw, &r) != nil || r.Reason != "ok" {
		t.Fatalf("run %v: HTTP %d %s", body, status, raw)
	}
	return r
}

// statsOf is the pool state of the named template.
func statsOf(e *e2e, template string) pool.Stats {
	for _, s := range e.st.Pool.Stats() {
		if s.Template == template {
			return s
		}
	}
	return pool.Stats{}
}

// TestE2ESlimTemplate serves the shipped Python pair on real gVisor: a
// plain run lands on python-slim, with nothing imported ahead; a run that
// imports pandas lands on python, with pandas already loaded; a request
// may name either; a wrong pair is a 400; sessions get python unless they
// name python-slim; and both templates' pools are filled from their own
// snapshots whose clones never repeat each other's random numbers.
func TestE2ESlimTemplate(t *testing.T) {
	// A snapshot directory of its own, so that the images it waits for are
	// built by this server rather than found from another checkout's run.
	e := newE2EWith(t, "--templates=node,python,python-slim", "--snapshot-dir="+t.TempDir())
	// Safety net only: a snapshot build is a cold start plus a checkpoint,
	// seconds here; the pandas-ready one imports pandas first.
	deadline := time.Now().Add(5 * time.Minute)
	for _, name := range []string{"python-slim", "python"} {
		for s := statsOf(e, name); s.Snapshot != "ready" || s.Restores == 0; s = statsOf(e, name) {
			if time.Now().After(deadline) {
				t.Fatalf("%s pool after 5 minutes: %+v, want a ready snapshot and a restored sandbox", name, s)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	const loaded = "import sys\nprint('pandas' in sys.modules)"

	t.Run("routing", func(t *testing.T) {
		tests := []struct {
			name     string
			body     map[string]any
			template string
			stdout   string
		}{
			{name: "plain print", body: map[string]any{"language": "python", "code": "print(1)"}, template: "python-slim", stdout: "1\n"},
			{name: "nothing heavy imported", body: map[string]any{"language": "python", "code": loaded}, template: "python-slim", stdout: "False\n"},
			{name: "import pandas", body: map[string]any{"language": "python", "code": loaded + "\nimport pandas as pd\nprint(pd.DataFrame({'a': [1, 2]}).a.sum())"},
				template: "python", stdout: "True\n3\n"},
			{name: "named python", body: map[string]any{"language": "python", "template": "python", "code": loaded}, template: "python", stdout: "True\n"},
			{name: "named python-slim, no language", body: map[string]any{"template": "python-slim", "code": loaded + "\nimport pandas\nprint(pandas.__name__)"},
				template: "python-slim", stdout: "False\npandas\n"},
			{name: "node", body: map[string]any{"language": "node", "code": "console.log(1 + 1)"}, template: "node", stdout: "2\n"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := e.runRouted(t, tt.body)
				if r.Template != tt.template || r.Stdout != tt.stdout {
					t.Errorf("run %v went to %q and printed %q, want %q and %q", tt.body, r.Template, r.Stdout, tt.template, tt.stdout)
				}
			})
		}
	})

	t.Run("templates say the rule", func(t *testing.T) {
		status, raw := e.do(t, http.MethodGet, "/v1/templates", nil, "")
		var list struct {
			Templates []struct {
				Name        string   `json:"name"`
				WarmImports []string `json:"warm_imports"`
				DefaultFor  []string `json:"default_for"`
			} `json:"templates"`
		}
		if status != http.StatusOK || json.Unmarshal(raw, &list) != nil {
			t.Fatalf("GET /v1/templates: HTTP %d %s", status, raw)
		}
		got := map[string]string{}
		for _, tm := range list.Templates {
			got[tm.Name] = fmt.Sprintf("%v %v", tm.WarmImports, tm.DefaultFor)
		}
		want := map[string]string{"node": "[] []", "python": "[matplotlib numpy pandas scipy seaborn] [sessions]", "python-slim": "[] [runs]"}
		if !maps.Equal(got, want) {
			t.Errorf("templates' warm imports and defaults = %v, want %v", got, want)
		}
	})

	t.Run("bad pairs", func(t *testing.T) {
		for _, tc := range []struct {
			body map[string]any
			want string
		}{
			{map[string]any{"language": "node", "template": "python-slim"},
				`{"code":"template_language","message":"template \"python-slim\" runs python, not node"}`},
			{map[string]any{"language": "python", "template": "python-huge"},
				`{"code":"unknown_template","message":"unknown template \"python-huge\" (known: node, python, python-slim)"}`},
		} {
			for _, path := range []string{"/v1/run", "/v1/sessions"} {
				body := maps.Clone(tc.body)
				if path == "/v1/run" {
					body["code"] = "print(1)"
				}
				status, raw := e.do(t, http.MethodPost, path, body, "")
				if status != http.StatusBadRequest || string(raw) != tc.want+"\n" {
					t.Errorf("POST %s %v: HTTP %d %s, want 400 %s", path, body, status, raw, tc.want)
				}
			}
		}
	})

	t.Run("sessions", func(t *testing.T) {
		for _, tc := range []struct {
			body           map[string]any
			template, want string
		}{
			{map[string]any{"language": "python"}, "python", "True"},
			{map[string]any{"language": "python", "template": "python-slim"}, "python-slim", "False"},
		} {
			status, raw := e.do(t, http.MethodPost, "/v1/sessions", tc.body, "")
			var s struct {
				ID       string `json:"id"`
				Template string `json:"template"`
			}
			if status != http.StatusCreated || json.Unmarshal(raw, &s) != nil {
				t.Fatalf("create session %v: HTTP %d %s", tc.body, status, raw)
			}
			t.Cleanup(func() { e.do(t, http.MethodDelete, "/v1/sessions/"+s.ID, nil, "") })
			if s.Template != tc.template {
				t.Errorf("session %v got template %q, want %q", tc.body, s.Template, tc.template)
			}
			if r := e.exec(t, s.ID, loaded); r.Stdout != tc.want+"\n" {
				t.Errorf("session on %s printed %q for 'pandas' in sys.modules, want %s", s.Template, r.Stdout, tc.want)
			}
		}
	})

	// Each template's pooled sandboxes are clones of its snapshot: the
	// agent reseeds them, so no two print the same random numbers.
	t.Run("snapshots reseed", func(t *testing.T) {
		for _, template := range []string{"python-slim", "python"} {
			for _, code := range []string{"import random; print(random.random())", "import uuid, secrets; print(uuid.uuid4(), secrets.token_hex(8))"} {
				seen := map[string]bool{}
				for range 3 {
					r := e.runRouted(t, map[string]any{"template": template, "code": code})
					if r.Template != template || r.Start == "cold" {
						t.Errorf("%s run started %q on %q, want a pooled or restored %s", template, r.Start, r.Template, template)
					}
					if seen[r.Stdout] {
						t.Errorf("%s %q printed %q twice in fresh sandboxes", template, code, r.Stdout)
					}
					seen[r.Stdout] = true
				}
			}
			if s := statsOf(e, template); s.Snapshot != "ready" {
				t.Errorf("%s pool %+v, want a ready snapshot", template, s)
			}
		}
	})
}
