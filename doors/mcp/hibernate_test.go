package mcpdoor

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/kernels"
	"github.com/paddock-dev/paddock/runner"
)

// structured is a result's structuredContent as JSON (the client decodes
// it into a map: keys come sorted).
func structured(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// pause_session, resume_session and fork_session pass the session to the
// core and show what it answers; the forks close with the MCP session
// that made them, as its created sessions do.
func TestPauseResumeFork(t *testing.T) {
	f := &fakeCore{auth: true, closes: make(chan string, 4)}
	cs := connect(t, serve(t, f, Options{}), "alice")
	call(t, cs, "create_session", map[string]any{"language": "python"})

	steps := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"pause", "pause_session", map[string]any{"session_id": "s0"},
			`{"execution_count":1,"image_bytes":4096,"session_id":"s0","state":"hibernated"}`},
		{"pause again", "pause_session", map[string]any{"session_id": "s0"},
			`{"execution_count":1,"image_bytes":4096,"session_id":"s0","state":"hibernated"}`},
		{"resume", "resume_session", map[string]any{"session_id": "s0"},
			`{"execution_count":1,"resume_ms":1.25,"resumed":true,"session_id":"s0","state":"idle"}`},
		{"resume awake", "resume_session", map[string]any{"session_id": "s0"},
			`{"execution_count":1,"session_id":"s0","state":"idle"}`},
		{"fork", "fork_session", map[string]any{"session_id": "s0", "count": 2},
			`{"session_id":"s0","sessions":[{"expires_at":"0001-01-01T00:00:00Z","language":"python","session_id":"s1","template":"python"},` +
				`{"expires_at":"0001-01-01T00:00:00Z","language":"python","session_id":"s2","template":"python"}]}`},
	}
	for _, st := range steps {
		res := call(t, cs, st.tool, st.args)
		if got := structured(t, res.StructuredContent); res.IsError || got != st.want {
			t.Errorf("%s: isError %v, structured %s\nwant %s", st.name, res.IsError, got, st.want)
		}
	}
	for _, c := range f.callers {
		if c.Tenant != "alice" || c.Door != "mcp" {
			t.Errorf("the core saw caller %+v, want alice over mcp", c)
		}
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	var closed []string
	for range 3 {
		select {
		case id := <-f.closes:
			closed = append(closed, id)
		case <-time.After(time.Minute):
			t.Fatalf("closed %v a minute after the MCP session ended, want s0, s1 and s2", closed)
		}
	}
	slices.Sort(closed)
	if !slices.Equal(closed, []string{"s0", "s1", "s2"}) {
		t.Errorf("closed %v when the MCP session ended, want s0, s1 and s2", closed)
	}
}

// Another tenant's session, or a refusal, comes back as an error result
// with the core's code and reason, and nothing of the session.
func TestHibernationToolErrors(t *testing.T) {
	f := &fakeCore{auth: true}
	srv := serve(t, f, Options{})
	call(t, connect(t, srv, "alice"), "create_session", map[string]any{"language": "python"})
	bob := connect(t, srv, "bob")
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"pause_session", map[string]any{"session_id": "s0"}},
		{"resume_session", map[string]any{"session_id": "s0"}},
		{"fork_session", map[string]any{"session_id": "s0", "count": 1}},
	} {
		tool := tc.tool
		res := call(t, bob, tool, tc.args)
		if want := []string{"session_not_found: session s0 not found"}; !res.IsError || !slices.Equal(texts(res), want) {
			t.Errorf("bob's %s on alice's session: isError %v texts %q, want %q", tool, res.IsError, texts(res), want)
		}
	}
	if f.asleep["s0"] {
		t.Error("bob's pause_session hibernated alice's session")
	}

	f.fork = func(id string, count int) ([]core.Session, error) {
		return nil, fmt.Errorf("%w: count must be between 1 and %d; got %d", kernels.ErrInvalid, kernels.MaxFork, count)
	}
	res := call(t, bob, "fork_session", map[string]any{"session_id": "s0", "count": 101})
	if want := []string{"invalid_request: invalid request: count must be between 1 and 100; got 101"}; !res.IsError || !slices.Equal(texts(res), want) {
		t.Errorf("fork of 101: isError %v texts %q, want %q", res.IsError, texts(res), want)
	}
	// A count is required: the SDK refuses a call without one before the
	// core sees it.
	calls := len(f.callers)
	res = call(t, bob, "fork_session", map[string]any{"session_id": "s0"})
	if want := []string{`validating "arguments": validating root: required: missing properties: ["count"]`}; !res.IsError || !slices.Equal(texts(res), want) {
		t.Errorf("fork without a count: isError %v texts %q, want %q", res.IsError, texts(res), want)
	}
	if len(f.callers) != calls {
		t.Error("the core saw a fork without a count")
	}
}

// A cell that had to wake its session says so, with the time it took.
func TestExecuteSaysResumed(t *testing.T) {
	f := &fakeCore{execute: func(string, core.ExecuteInput, func(runner.Event)) (kernels.Execution, error) {
		return kernels.Execution{ExecuteResult: runner.ExecuteResult{ExecutionCount: 2, Status: "ok", Reason: runner.ReasonOK},
			Wake: core.Wake{Resumed: true, Took: 812500 * time.Microsecond}}, nil
	}}
	cs := connect(t, serve(t, f, Options{}), "")
	res := call(t, cs, "execute", map[string]any{"session_id": "s0", "code": "x + 1"})
	want := `{"duration_ms":0,"execution_count":2,"reason":"ok","resume_ms":812.5,"resumed":true,"session_id":"s0","status":"ok","stderr":"","stdout":""}`
	if got := structured(t, res.StructuredContent); res.IsError || got != want {
		t.Fatalf("isError %v, structured %s\nwant %s", res.IsError, got, want)
	}
}
