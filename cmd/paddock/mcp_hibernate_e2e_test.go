package main

import (
	"slices"
	"testing"
)

// mcpCall is one tool call as doors/clients/mcp_client.mjs saw it.
type mcpCall struct {
	IsError bool           `json:"isError"`
	Texts   []string       `json:"texts"`
	Out     map[string]any `json:"out"`
}

// mcpHibernateOut is what `mcp_client.mjs hibernate` reports.
type mcpHibernateOut struct {
	ID           string  `json:"id"`
	Set          mcpCall `json:"set"`
	Paused       mcpCall `json:"paused"`
	PausedOnV1   string  `json:"pausedOnV1"`
	Woken        mcpCall `json:"woken"`
	WokenOnV1    string  `json:"wokenOnV1"`
	ResumeAwake  mcpCall `json:"resumeAwake"`
	ResumeAsleep mcpCall `json:"resumeAsleep"`
	Forked       mcpCall `json:"forked"`
	Children     []struct {
		ID   string  `json:"id"`
		Cell mcpCall `json:"cell"`
	} `json:"children"`
	ParentAfter mcpCall `json:"parentAfter"`
}

// TestE2EMCPHibernate drives pause_session, resume_session and
// fork_session with the TypeScript SDK's client on gVisor, hibernation on
// (the state dir's hibernate/): a paused session's sandbox is gone and
// its next cell wakes it with its variables; a fork's two children each
// start with the parent's; all of them close with the MCP session.
func TestE2EMCPHibernate(t *testing.T) {
	e := newE2E(t)
	var out mcpHibernateOut
	node(t, &out, "mcp_client.mjs", "hibernate", e.srv.URL+"/mcp")

	if out.Set.IsError {
		t.Fatalf("x = 41: %+v", out.Set)
	}
	if p := out.Paused; p.IsError || p.Out["state"] != "hibernated" || p.Out["session_id"] != out.ID ||
		p.Out["execution_count"] != 1.0 || !(p.Out["image_bytes"].(float64) > 0) || out.PausedOnV1 != "hibernated" {
		t.Errorf("pause_session: %+v, /v1 says %q; want hibernated at count 1 with an image", p, out.PausedOnV1)
	}
	if w := out.Woken; w.IsError || !slices.Equal(w.Texts, []string{"42"}) || w.Out["execution_count"] != 2.0 ||
		w.Out["resumed"] != true || !(w.Out["resume_ms"].(float64) > 0) || out.WokenOnV1 != "idle" {
		t.Errorf("x + 1 on the paused session: %+v, then /v1 says %q; want 42 at count 2, resumed, idle", w, out.WokenOnV1)
	}
	if r := out.ResumeAwake; r.IsError || r.Out["state"] != "idle" || r.Out["resumed"] != nil || r.Out["execution_count"] != 2.0 {
		t.Errorf("resume_session on an awake session: %+v, want idle and not resumed", r)
	}
	if r := out.ResumeAsleep; r.IsError || r.Out["state"] != "idle" || r.Out["resumed"] != true || !(r.Out["resume_ms"].(float64) > 0) {
		t.Errorf("resume_session on a paused session: %+v, want resumed, idle", r)
	}
	if f := out.Forked; f.IsError || f.Out["session_id"] != out.ID || len(out.Children) != 2 {
		t.Fatalf("fork_session count 2: %+v, children %+v", f, out.Children)
	}
	seen := map[string]bool{out.ID: true}
	for _, c := range out.Children {
		if seen[c.ID] {
			t.Errorf("fork child id %q repeats the parent's or its sibling's", c.ID)
		}
		seen[c.ID] = true
		if c.Cell.IsError || !slices.Equal(c.Cell.Texts, []string{"41"}) || c.Cell.Out["execution_count"] != 3.0 {
			t.Errorf("x in child %s: %+v, want 41 at count 3 (the parent's 2, then this cell)", c.ID, c.Cell)
		}
	}
	if p := out.ParentAfter; p.IsError || !slices.Equal(p.Texts, []string{"41"}) || p.Out["execution_count"] != 3.0 {
		t.Errorf("x in the parent after the fork: %+v, want 41 at count 3", p)
	}
	t.Logf("image %.0f bytes; woken by a cell in %v ms, by resume_session in %v ms",
		out.Paused.Out["image_bytes"], out.Woken.Out["resume_ms"], out.ResumeAsleep.Out["resume_ms"])
	// The parent and both children closed with the MCP session.
	awaitNoSessions(t, e)
}
