package e2bdoor

import (
	"net/http"
	"testing"

	"github.com/paddock-dev/paddock/core"
	"github.com/paddock-dev/paddock/kernels"
)

// The e2b SDK's pause() returns true on 204, false on 409 (already
// paused), throws SandboxNotFoundError on 404; connect reads 200 (was
// running) and 201 (resumed) alike.
func TestPauseAndConnect(t *testing.T) {
	td := newTestDoor(t, Config{})
	sa := td.create("alice", nil)
	td.do("POST", "/contexts", map[string]any{"language": "python"}, interp(sa)) // s02

	steps := []struct {
		name, method, path string
		body               any
		tenant             string
		code               int
		want               string // the body, when not empty
	}{
		{"pause", "POST", "/sandboxes/s01/pause", nil, "alice", 204, ""},
		{"pause again", "POST", "/sandboxes/s01/pause", map[string]any{}, "alice", 409, `{"code":409,"message":"sandbox \"s01\" is already paused"}`},
		{"another tenant", "POST", "/sandboxes/s01/pause", nil, "bob", 404, `{"code":404,"message":"sandbox \"s01\" not found"}`},
		{"unknown", "POST", "/sandboxes/nope/pause", nil, "alice", 404, `{"code":404,"message":"sandbox \"nope\" not found"}`},
		{"keepMemory false", "POST", "/sandboxes/s01/pause", map[string]any{"memory": false}, "alice", 400,
			`{"code":400,"message":"memory: false (keepMemory false, onResume 'reboot') is not served: Paddock pauses and resumes a sandbox with its memory"}`},
		{"connect another tenant", "POST", "/v2/sandboxes/s01/connect", map[string]any{"timeout": 60}, "bob", 404, ""},
		{"connect reboot", "POST", "/v2/sandboxes/s01/connect", map[string]any{"memory": false}, "alice", 400, ""},
		{"connect resumes", "POST", "/v2/sandboxes/s01/connect", map[string]any{"timeout": 60}, "alice", 201, ""},
		{"connect running", "POST", "/v2/sandboxes/s01/connect", map[string]any{"timeout": 60}, "alice", 200, ""},
		{"resume running", "POST", "/sandboxes/s01/resume", nil, "alice", 409, `{"code":409,"message":"sandbox \"s01\" is not paused"}`},
	}
	for _, st := range steps {
		a := td.do(st.method, st.path, st.body, key(st.tenant))
		if a.code != st.code || (st.want != "" && string(a.body) != st.want) {
			t.Fatalf("%s: HTTP %d %s, want %d %s", st.name, a.code, a.body, st.code, st.want)
		}
		if st.name == "pause" {
			for _, id := range []string{"s01", "s02"} {
				if got := td.core.sessions[id].info.State; got != kernels.StateHibernated {
					t.Fatalf("after pause %s is %q", id, got)
				}
			}
		}
		if st.code == 200 || st.code == 201 {
			var got sandboxAnswer
			a.json(t, &got)
			if got.SandboxID != "s01" || got.EnvdAccessToken != sa.EnvdAccessToken || got.TrafficAccessToken != sa.TrafficAccessToken || got.EnvdVersion != EnvdVersion {
				t.Fatalf("%s: answer %s", st.name, a.body)
			}
			if ttl := td.core.sessions["s01"].info.TTL.Seconds(); ttl != 60 {
				t.Fatalf("%s: TTL %vs, want 60", st.name, ttl)
			}
		}
	}
	if td.core.wakes != 1 {
		t.Fatalf("%d wakes, want 1 (connect wakes the main context only)", td.core.wakes)
	}
	td.do("POST", "/sandboxes/s01/pause", nil, key("alice"))
	if a := td.do("POST", "/sandboxes/s01/resume", map[string]any{"timeout": 30}, key("alice")); a.code != 201 {
		t.Fatalf("resume paused: HTTP %d %s", a.code, a.body)
	}
}

func TestPauseRefusals(t *testing.T) {
	cases := []struct {
		name string
		set  func(*fakeCore)
		code int
		want string
	}{
		{"hibernation off", func(f *fakeCore) { f.NoHibernation = true }, 501, `{"code":501,"message":"hibernation is off on this server"}`},
		{"cell running", func(f *fakeCore) {
			f.PauseErr = &core.Error{Kind: core.KindConflict, Code: "busy", Message: "the session is running another execution"}
		}, 503, `{"code":503,"message":"the session is running another execution (a sandbox is paused between cells and commands; retry when they end)"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			td := newTestDoor(t, Config{})
			td.create("alice", nil)
			tc.set(td.core)
			a := td.do("POST", "/sandboxes/s01/pause", nil, key("alice"))
			if a.code != tc.code || string(a.body) != tc.want {
				t.Fatalf("HTTP %d %s, want %d %s", a.code, a.body, tc.code, tc.want)
			}
			if got := td.core.sessions["s01"].info.State; got != kernels.StateIdle {
				t.Fatalf("state %q after a refused pause", got)
			}
		})
	}
}

// Without autoResume an in-sandbox call on a paused sandbox is refused
// as E2B's proxy refuses it (409; health 502, isRunning() false) and
// the sandbox stays paused; with it the call goes through and the core
// wakes the sandbox.
func TestPausedInSandboxCalls(t *testing.T) {
	td := newTestDoor(t, Config{})
	plain := td.create("alice", nil)
	auto := td.create("alice", map[string]any{"autoResume": map[string]any{"enabled": true}})
	for _, id := range []string{plain.SandboxID, auto.SandboxID} {
		if a := td.do("POST", "/sandboxes/"+id+"/pause", nil, key("alice")); a.code != 204 {
			t.Fatalf("pause %s: HTTP %d %s", id, a.code, a.body)
		}
	}
	const paused = "The sandbox is paused: resume it with Sandbox.connect() (it was created without lifecycle.autoResume)"
	cases := []struct {
		name string
		sa   sandboxAnswer
		path string
		hdr  func(sandboxAnswer) map[string]string
		code int
		want string
	}{
		{"execute", plain, "/execute", interp, 409, `{"code":409,"message":"` + paused + `"}`},
		{"file", plain, "/files?path=a.txt", envd, 409, `{"code":409,"message":"` + paused + `"}`},
		{"health", plain, "/health", envd, 502, `{"code":502,"message":"` + paused + `"}`},
		{"rpc", plain, "/filesystem.Filesystem/Stat", func(sa sandboxAnswer) map[string]string {
			return with(envd(sa), "Content-Type", "application/json")
		}, 409, `{"code":"aborted","message":"` + paused + `"}`},
		{"execute autoResume", auto, "/execute", interp, 200, ""},
	}
	for _, tc := range cases {
		method := "POST"
		var body any = map[string]any{"code": "1"}
		if tc.path != "/execute" && tc.name != "rpc" {
			method, body = "GET", nil
		}
		if tc.name == "rpc" {
			body = map[string]any{"path": "/home/user"}
		}
		a := td.do(method, tc.path, body, tc.hdr(tc.sa))
		if a.code != tc.code || (tc.want != "" && string(a.body) != tc.want) {
			t.Fatalf("%s: HTTP %d %s, want %d %s", tc.name, a.code, a.body, tc.code, tc.want)
		}
	}
	if got := td.core.sessions[plain.SandboxID].info.State; got != kernels.StateHibernated {
		t.Fatalf("refused calls woke the sandbox: %q", got)
	}
	if got := td.core.sessions[auto.SandboxID].info.State; got != kernels.StateIdle || td.core.wakes != 1 {
		t.Fatalf("autoResume sandbox %q after a call, %d wakes", got, td.core.wakes)
	}
}

func TestListAndGetState(t *testing.T) {
	td := newTestDoor(t, Config{})
	for range 3 {
		td.create("alice", nil)
	}
	td.do("POST", "/sandboxes/s02/pause", nil, key("alice"))
	ids := func(q string) (string, string) {
		t.Helper()
		a := td.do("GET", "/v2/sandboxes"+q, nil, key("alice"))
		if a.code != http.StatusOK {
			t.Fatalf("%s: HTTP %d %s", q, a.code, a.body)
		}
		var page []sandboxDetail
		a.json(t, &page)
		out := ""
		for _, s := range page {
			out += s.SandboxID + ":" + s.State + " "
		}
		return out, a.header.Get("X-Total-Running")
	}
	for _, tc := range []struct{ q, want, total string }{
		{"", "s01:running s02:paused s03:running ", "3"},
		{"?state=running,paused", "s01:running s02:paused s03:running ", "3"},
		{"?state=paused", "s02:paused ", "1"},
		{"?state=running", "s01:running s03:running ", "2"},
		{"?state=running&state=paused", "s01:running s02:paused s03:running ", "3"},
	} {
		if got, total := ids(tc.q); got != tc.want || total != tc.total {
			t.Fatalf("%q: %s (total %s), want %s (total %s)", tc.q, got, total, tc.want, tc.total)
		}
	}
	var d sandboxDetail
	a := td.do("GET", "/sandboxes/s02", nil, key("alice"))
	a.json(t, &d)
	if d.State != "paused" || d.Lifecycle != (lifecycle{OnTimeout: "kill"}) {
		t.Fatalf("get: %s", a.body)
	}
	var v1 []sandboxDetail
	td.do("GET", "/sandboxes", nil, key("alice")).json(t, &v1)
	if len(v1) != 2 || v1[0].SandboxID != "s01" || v1[1].SandboxID != "s03" {
		t.Fatalf("v1 list lists running ones only: %+v", v1)
	}
}

// Sandbox.fork({count, timeoutMs}) reads 201 and one {sandbox} per fork.
func TestFork(t *testing.T) {
	td := newTestDoor(t, Config{})
	sa := td.create("alice", map[string]any{"metadata": map[string]string{"team": "a"}, "timeout": 120})
	td.core.sessions["s01"].files["x.txt"] = []byte("x")
	a := td.do("POST", "/sandboxes/s01/fork", map[string]any{"count": 2, "timeout": 30}, key("alice"))
	if a.code != http.StatusCreated {
		t.Fatalf("fork: HTTP %d %s", a.code, a.body)
	}
	var res []forkResult
	a.json(t, &res)
	if len(res) != 2 || res[0].Sandbox == nil || res[1].Sandbox == nil || res[0].Error != nil ||
		res[0].Sandbox.SandboxID != "s02" || res[1].Sandbox.SandboxID != "s03" ||
		res[0].Sandbox.EnvdAccessToken == sa.EnvdAccessToken || res[0].Sandbox.EnvdAccessToken == res[1].Sandbox.EnvdAccessToken {
		t.Fatalf("fork answer %s", a.body)
	}
	for _, id := range []string{"s02", "s03"} {
		if ttl := td.core.sessions[id].info.TTL.Seconds(); ttl != 30 {
			t.Fatalf("%s TTL %vs, want 30", id, ttl)
		}
	}
	child := *res[0].Sandbox
	if a := td.do("GET", "/files?path=x.txt", nil, envd(child)); a.code != 200 || string(a.body) != "x" {
		t.Fatalf("child file: HTTP %d %s", a.code, a.body)
	}
	var d sandboxDetail
	td.do("GET", "/sandboxes/s02", nil, key("alice")).json(t, &d)
	if d.Metadata["team"] != "a" {
		t.Fatalf("child detail %+v", d)
	}
	for _, tc := range []struct {
		name   string
		tenant string
		body   any
		code   int
	}{
		{"another tenant", "bob", nil, 404},
		{"count 0", "alice", map[string]any{"count": 0}, 400},
		{"bad timeout", "alice", map[string]any{"timeout": 0}, 400},
		{"timeout over the maximum", "alice", map[string]any{"timeout": 7200}, 400},
	} {
		if a := td.do("POST", "/sandboxes/s01/fork", tc.body, key(tc.tenant)); a.code != tc.code {
			t.Fatalf("%s: HTTP %d %s", tc.name, a.code, a.body)
		}
	}
	if ids := td.core.live(); len(ids) != 3 {
		t.Fatalf("a refused fork left sessions: %v", ids)
	}
}

// lifecycle {onTimeout: 'pause'} arrives as autoPause: every session of
// the sandbox (its extra contexts too) hibernates at its expiry, which
// the core does; get reports the lifecycle, forks keep it.
func TestAutoPause(t *testing.T) {
	td := newTestDoor(t, Config{})
	sa := td.create("alice", map[string]any{"autoPause": true, "autoResume": map[string]any{"enabled": true}})
	td.do("POST", "/contexts", map[string]any{"language": "js"}, interp(sa)) // s02
	plain := td.create("alice", nil)                                         // s03
	a := td.do("POST", "/sandboxes/s01/fork", nil, key("alice"))             // s04
	if a.code != http.StatusCreated {
		t.Fatalf("fork: HTTP %d %s", a.code, a.body)
	}
	for id, want := range map[string]bool{"s01": true, "s02": true, plain.SandboxID: false, "s04": true} {
		if got := td.core.sessions[id].sleepAtExpiry; got != want {
			t.Errorf("%s: HibernateAtExpiry %v, want %v", id, got, want)
		}
	}
	for id, want := range map[string]lifecycle{"s01": {"pause", true}, plain.SandboxID: {"kill", false}, "s04": {"pause", true}} {
		var d sandboxDetail
		td.do("GET", "/sandboxes/"+id, nil, key("alice")).json(t, &d)
		if d.Lifecycle != want {
			t.Errorf("%s: lifecycle %+v, want %+v", id, d.Lifecycle, want)
		}
	}
	td.core.NoHibernation = true
	a = td.do("POST", "/v2/sandboxes", map[string]any{"autoPause": true}, key("alice"))
	if a.code != 501 || string(a.body) != `{"code":501,"message":"hibernation is off on this server"}` {
		t.Fatalf("hibernation off: HTTP %d %s", a.code, a.body)
	}
}
