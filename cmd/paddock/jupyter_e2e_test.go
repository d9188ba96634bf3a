package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/store"
)

// jupyterClients holds the pinned npm clients (`make clients`).
const jupyterClients = "../../doors/clients"

// jupyterNode runs a script of doors/clients with args and decodes the
// JSON report it prints as its last line of output.
func jupyterNode(t *testing.T, into any, script string, args ...string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(jupyterClients, "node_modules", ".package-lock.json")); err != nil {
		if os.Getenv("PADDOCK_REQUIRE_GVISOR") == "1" {
			t.Fatal("the npm clients are not installed: run `make clients`")
		}
		t.Skip("the npm clients are not installed: run `make clients`")
	}
	// A safety net only: a client that hangs fails the test instead of
	// holding it to the package's timeout.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{script}, args...)...)
	cmd.Dir = jupyterClients
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\nstderr:\n%s", script, err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), into); err != nil {
		t.Fatalf("node %s printed %s: %v\nstderr:\n%s", script, out, err, stderr.String())
	}
}

// jupyterE2E is a real Paddock on gVisor with JWT auth on, and a token of
// tenant "alice" for it.
func jupyterE2E(t *testing.T, flags ...string) (*e2e, string) {
	t.Helper()
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("0123456789abcdef0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newE2EWith(t, append([]string{"--jwt-hs256-secret-file=" + secret, "--pool-max=2"}, flags...)...)
	var tok bytes.Buffer
	if err := tokenCmd([]string{"--subject=alice", "--jwt-hs256-secret-file=" + secret}, &tok); err != nil {
		t.Fatal(err)
	}
	return e, strings.TrimSpace(tok.String())
}

// jupCell is one cell as doors/clients/jupyter_client.mjs saw it.
type jupCell struct {
	Streams string `json:"streams"`
	Results []struct {
		Count int     `json:"count"`
		Text  *string `json:"text"`
	} `json:"results"`
	Displays [][]string `json:"displays"`
	Errors   []struct {
		Ename     string `json:"ename"`
		Evalue    string `json:"evalue"`
		Traceback int    `json:"traceback"`
	} `json:"errors"`
	InputCount *int     `json:"inputCount"`
	Statuses   []string `json:"statuses"`
	Prompts    []string `json:"prompts"`
	Reply      struct {
		Status string  `json:"status"`
		Count  int     `json:"count"`
		Ename  *string `json:"ename"`
	} `json:"reply"`
	ParentMatches bool `json:"parentMatches"`
}

func (c jupCell) result() string {
	if len(c.Results) != 1 || c.Results[0].Text == nil {
		return "<none>"
	}
	return *c.Results[0].Text
}

func (c jupCell) ename() string {
	if c.Reply.Ename == nil {
		return ""
	}
	return *c.Reply.Ename
}

type jupyterReport struct {
	Specs struct {
		Default  string   `json:"default"`
		Names    []string `json:"names"`
		Display  string   `json:"display"`
		Language string   `json:"language"`
	} `json:"specs"`
	KernelID string `json:"kernelId"`
	Info     struct {
		Protocol string `json:"protocol"`
		Language string `json:"language"`
		Version  string `json:"version"`
	} `json:"info"`
	Protocol string  `json:"protocol"`
	First    jupCell `json:"first"`
	Second   jupCell `json:"second"`
	Print    jupCell `json:"print"`
	OtherSaw string  `json:"otherSaw"`
	Plot     jupCell `json:"plot"`
	Await    jupCell `json:"await"`
	Fail     jupCell `json:"fail"`
	Complete struct {
		Status  string   `json:"status"`
		Matches []string `json:"matches"`
	} `json:"complete"`
	Inspect struct {
		Status string  `json:"status"`
		Found  bool    `json:"found"`
		Text   *string `json:"text"`
	} `json:"inspect"`
	IsComplete     string   `json:"isComplete"`
	Interrupted    jupCell  `json:"interrupted"`
	AfterInterrupt jupCell  `json:"afterInterrupt"`
	NoStdin        jupCell  `json:"noStdin"`
	Input          jupCell  `json:"input"`
	History        []string `json:"history"`
	AfterRestart   jupCell  `json:"afterRestart"`
	Session        struct {
		Path       string `json:"path"`
		KernelName string `json:"kernelName"`
	} `json:"session"`
	SessionRun      jupCell `json:"sessionRun"`
	Proof           jupCell `json:"proof"`
	KernelsLeft     int     `json:"kernelsLeft"`
	AnonymousStatus int     `json:"anonymousStatus"`
}

// jupyterCheckCells checks what every cell shares: busy then idle on iopub around
// it, and a reply parented on its request.
func jupyterCheckCells(t *testing.T, cells map[string]jupCell) {
	t.Helper()
	for name, c := range cells {
		if !slices.Equal(c.Statuses, []string{"busy", "idle"}) || !c.ParentMatches {
			t.Errorf("%s: statuses %v, reply parented on the request %v", name, c.Statuses, c.ParentMatches)
		}
	}
}

// jupyterCheckKernel checks the cases both kernels share.
// protocol is the WebSocket framing the client must have been given; ""
// takes whatever the server chose.
func jupyterCheckKernel(t *testing.T, r jupyterReport, language, protocol string) {
	t.Helper()
	if r.Specs.Default != "python3" || !slices.Equal(r.Specs.Names, []string{"javascript", "python3"}) || r.Specs.Language != language {
		t.Errorf("kernelspecs: %+v", r.Specs)
	}
	if r.Info.Protocol != "5.3" || r.Info.Language != language || r.Info.Version == "" {
		t.Errorf("kernel_info: %+v", r.Info)
	}
	if protocol != "" && r.Protocol != protocol {
		t.Errorf("the client's WebSocket framing is %q, want the v1 binary one", r.Protocol)
	}
	if r.First.Reply.Status != "ok" || r.First.Reply.Count != 1 || r.First.InputCount == nil || *r.First.InputCount != 1 {
		t.Errorf("x = 41: %+v", r.First)
	}
	if r.Second.result() != "42" || r.Second.Results[0].Count != 2 || r.Second.Reply.Count != 2 || *r.Second.InputCount != 2 {
		t.Errorf("x + 1: %+v", r.Second)
	}
	if r.Print.Streams != "hello from paddock\n" {
		t.Errorf("print: %+v", r.Print)
	}
	if r.OtherSaw != "hello from paddock\n" {
		t.Errorf("a second client on the kernel saw %q on iopub", r.OtherSaw)
	}
	if r.Fail.Reply.Status != "error" || len(r.Fail.Errors) != 1 || r.Fail.Errors[0].Traceback == 0 || r.Fail.Errors[0].Ename != r.Fail.ename() {
		t.Errorf("failing cell: %+v", r.Fail)
	}
	if r.Complete.Status != "ok" || r.Inspect.Status != "ok" || !r.Inspect.Found || r.Inspect.Text == nil {
		t.Errorf("complete %+v, inspect %+v", r.Complete, r.Inspect)
	}
	if r.Interrupted.Reply.Status != "error" || r.AfterInterrupt.result() != "41" {
		t.Errorf("interrupt: %+v then x: %+v", r.Interrupted, r.AfterInterrupt)
	}
	if len(r.NoStdin.Errors) != 1 || r.NoStdin.Errors[0].Ename != "StdinNotImplementedError" || len(r.NoStdin.Prompts) != 0 {
		t.Errorf("input without allow_stdin: %+v", r.NoStdin)
	}
	if !slices.Equal(r.Input.Prompts, []string{"who? "}) || !strings.Contains(r.Input.Streams, "hi paddock\n") || r.Input.Reply.Status != "ok" {
		t.Errorf("input through stdin: %+v", r.Input)
	}
	if len(r.History) != 3 || r.History[0] != "x" {
		t.Errorf("history tail 3: %q", r.History)
	}
	if r.AfterRestart.Reply.Status != "error" || r.AfterRestart.Reply.Count != 1 {
		t.Errorf("x after restart: %+v", r.AfterRestart)
	}
	if r.Session.Path != "paddock.ipynb" || r.Session.KernelName != jupyterKernelName(language) || r.SessionRun.result() != "42" {
		t.Errorf("session manager: %+v %+v", r.Session, r.SessionRun)
	}
	left := 0
	if r.Proof.Reply.Status != "" {
		left = 1 // the client kept its first kernel for the caller to look at
	}
	if r.KernelsLeft != left || r.AnonymousStatus != 403 {
		t.Errorf("kernels left after shutdown %d; without a token HTTP %d, want 403", r.KernelsLeft, r.AnonymousStatus)
	}
	jupyterCheckCells(t, map[string]jupCell{"first": r.First, "second": r.Second, "print": r.Print, "fail": r.Fail,
		"interrupted": r.Interrupted, "input": r.Input, "afterRestart": r.AfterRestart, "session": r.SessionRun})
}

func jupyterKernelName(language string) string {
	if language == "python" {
		return "python3"
	}
	return language
}

// TestE2EJupyter drives Paddock's Jupyter door with the real
// @jupyterlab/services client (and ws in the legacy framing), on gVisor.
func TestE2EJupyter(t *testing.T) {
	e, token := jupyterE2E(t)

	t.Run("python3", func(t *testing.T) {
		var r jupyterReport
		jupyterNode(t, &r, "jupyter_client.mjs", e.srv.URL, token, "python3")
		jupyterCheckKernel(t, r, "python", "v1.kernel.websocket.jupyter.org")
		if len(r.Plot.Displays) != 1 || !slices.Contains(r.Plot.Displays[0], "image/png") {
			t.Errorf("plot: %+v", r.Plot)
		}
		if r.Fail.ename() != "ZeroDivisionError" {
			t.Errorf("1/0: %+v", r.Fail)
		}
		if !slices.Contains(r.Complete.Matches, "os") {
			t.Errorf("completions of `import o`: %q", r.Complete.Matches)
		}
		if r.IsComplete != "incomplete" {
			t.Errorf("is_complete of `for i in range(3):` = %q", r.IsComplete)
		}
		if r.Interrupted.ename() != "KeyboardInterrupt" {
			t.Errorf("interrupted: %+v", r.Interrupted)
		}
		if len(r.AfterRestart.Errors) != 1 || r.AfterRestart.Errors[0].Ename != "NameError" {
			t.Errorf("x after restart: %+v", r.AfterRestart)
		}
	})

	t.Run("javascript", func(t *testing.T) {
		var r jupyterReport
		jupyterNode(t, &r, "jupyter_client.mjs", e.srv.URL, token, "javascript")
		jupyterCheckKernel(t, r, "javascript", "v1.kernel.websocket.jupyter.org")
		if r.Await.result() != "7" {
			t.Errorf("top-level await: %+v", r.Await)
		}
		if r.Fail.ename() != "TypeError" {
			t.Errorf("null.x: %+v", r.Fail)
		}
		if !slices.Contains(r.Complete.Matches, "Math.floor") && !slices.Contains(r.Complete.Matches, "floor") {
			t.Errorf("completions of `Math.fl`: %q", r.Complete.Matches)
		}
		if r.IsComplete != "incomplete" {
			t.Errorf("is_complete of `function f() {` = %q", r.IsComplete)
		}
		if len(r.AfterRestart.Errors) != 1 || r.AfterRestart.Errors[0].Ename != "ReferenceError" {
			t.Errorf("x after restart: %+v", r.AfterRestart)
		}
	})

	t.Run("legacy_framing_and_dead_kernel", func(t *testing.T) {
		var r struct {
			StartStatus int      `json:"startStatus"`
			Location    string   `json:"location"`
			Protocol    string   `json:"protocol"`
			Info        []string `json:"info"`
			TextFrames  bool     `json:"textFrames"`
			InfoReply   string   `json:"infoReply"`
			Execute     []string `json:"execute"`
			Result      string   `json:"result"`
			HeaderOK    bool     `json:"headerOK"`
			Died        struct {
				Status string `json:"status"`
				Ename  string `json:"ename"`
			} `json:"died"`
			AfterState    string   `json:"afterState"`
			RestartStatus []string `json:"restartStatuses"`
			AfterRestart  string   `json:"afterRestart"`
			OversizeClose int      `json:"oversizeClose"`
			UnknownName   struct {
				Status int `json:"status"`
				Body   struct {
					Message string `json:"message"`
					Reason  string `json:"reason"`
				} `json:"body"`
			} `json:"unknownName"`
			UnknownKernel   int      `json:"unknownKernel"`
			BadToken        int      `json:"badToken"`
			AfterRefusals   string   `json:"afterRefusals"`
			SessionsMade    int      `json:"sessionsMade"`
			SessionsRefused int      `json:"sessionsRefused"`
			StopOnError     []string `json:"stopOnError"`
			AfterAbort      string   `json:"afterAbort"`
			DeleteStatus    int      `json:"deleteStatus"`
			Model           struct {
				ID string `json:"id"`
			} `json:"model"`
		}
		jupyterNode(t, &r, "jupyter_legacy.mjs", e.srv.URL, token, strconv.FormatInt(e.cfg.MaxBody, 10))
		if r.StartStatus != 201 || r.Location != "/api/kernels/"+r.Model.ID || r.Protocol != "" || !r.TextFrames {
			t.Errorf("start and connect: %+v", r)
		}
		if !slices.Equal(r.Info, []string{"iopub:status:busy", "shell:kernel_info_reply", "iopub:status:idle"}) || r.InfoReply != "5.3" {
			t.Errorf("kernel_info in the legacy framing: %v %q", r.Info, r.InfoReply)
		}
		want := []string{"iopub:status:busy", "iopub:execute_input", "iopub:execute_result", "shell:execute_reply", "iopub:status:idle"}
		if !slices.Equal(r.Execute, want) || r.Result != "42" || !r.HeaderOK {
			t.Errorf("execute in the legacy framing: %v %q headers ok %v", r.Execute, r.Result, r.HeaderOK)
		}
		if r.OversizeClose != 1009 || r.UnknownName.Status != 400 || r.UnknownName.Body.Reason != "invalid_request" ||
			!strings.Contains(r.UnknownName.Body.Message, `"cobol"`) || r.UnknownKernel != 404 || r.BadToken != 403 || r.AfterRefusals != "42" {
			t.Errorf("refusals: oversize message closed with %d, unknown name %+v, unknown kernel HTTP %d, bad token HTTP %d, then 6 * 7 = %q",
				r.OversizeClose, r.UnknownName, r.UnknownKernel, r.BadToken, r.AfterRefusals)
		}
		if !slices.Equal(r.StopOnError, []string{"error", "aborted"}) || r.AfterAbort != "42" {
			t.Errorf("stop_on_error: replies %q, then 6 * 7 = %q; want error, aborted, then 42", r.StopOnError, r.AfterAbort)
		}
		if r.SessionsMade != 256 || r.SessionsRefused != 429 {
			t.Errorf("Jupyter sessions of one tenant: %d made, then HTTP %d; want 256, then 429", r.SessionsMade, r.SessionsRefused)
		}
		if r.Died.Status != "error" || r.Died.Ename != "KernelRestarted" || !slices.Contains(r.RestartStatus, "restarting") ||
			!slices.Contains(r.RestartStatus, "starting") || r.AfterState != "idle" || r.AfterRestart != "42" || r.DeleteStatus != 204 {
			t.Errorf("a lost kernel: reply %+v, statuses %v, then state %q, 6 * 7 on the fresh kernel = %q, delete HTTP %d; want KernelRestarted, restarting and starting, idle, 42, 204",
				r.Died, r.RestartStatus, r.AfterState, r.AfterRestart, r.DeleteStatus)
		}
	})

	e.expectDoorRows(t, "jupyter", store.KindCell, "alice", "ok", "error", "interrupted")
}

// A cell that cannot be interrupted, through the real @jupyterlab/services
// client on gVisor: at its timeout the kernel is killed and replaced under
// the same kernel id; the cell's reply says KernelRestarted, iopub says
// restarting then starting, the client reconnects by itself, and the next
// cells run on a fresh kernel that has forgotten the old variables.
func TestE2EJupyterStuckCellRestarts(t *testing.T) {
	e, token := jupyterE2E(t, "--max-timeout=3s")
	for _, tt := range []struct{ kernel, errName string }{{"python3", "NameError"}, {"javascript", "ReferenceError"}} {
		t.Run(tt.kernel, func(t *testing.T) {
			type cell struct {
				Results []*string `json:"results"`
				Errors  []string  `json:"errors"`
				Reply   struct {
					Status string  `json:"status"`
					Ename  *string `json:"ename"`
					Evalue *string `json:"evalue"`
				} `json:"reply"`
			}
			var r struct {
				IDBefore string   `json:"idBefore"`
				IDAfter  string   `json:"idAfter"`
				ModelID  string   `json:"modelId"`
				Client   []string `json:"clientStatuses"`
				State    string   `json:"state"`
				Stuck    cell     `json:"stuck"`
				Next     cell     `json:"next"`
				Gone     cell     `json:"gone"`
			}
			jupyterNode(t, &r, "jupyter_restart.mjs", e.srv.URL, token, tt.kernel)
			if r.Stuck.Reply.Status != "error" || deref(r.Stuck.Reply.Ename) != "KernelRestarted" || !strings.Contains(deref(r.Stuck.Reply.Evalue), stuckWhy) {
				t.Errorf("the stuck cell's reply: %+v; want KernelRestarted naming %q", r.Stuck.Reply, stuckWhy)
			}
			// @jupyterlab/services turns the server's "restarting" into
			// its own "autorestarting" and reconnects.
			if i := slices.Index(r.Client, "autorestarting"); i < 0 || !slices.Contains(r.Client[i:], "starting") {
				t.Errorf("the client's statuses from the stuck cell on: %v; want autorestarting, then starting", r.Client)
			}
			if r.IDAfter != r.IDBefore || r.ModelID != r.IDBefore || r.State != "idle" {
				t.Errorf("kernel id %q before, %q after, %q in the model, state %q; want one id, idle", r.IDBefore, r.IDAfter, r.ModelID, r.State)
			}
			if r.Next.Reply.Status != "ok" || len(r.Next.Results) != 1 || deref(r.Next.Results[0]) != "2" {
				t.Errorf("1 + 1 on the fresh kernel: %+v", r.Next)
			}
			if deref(r.Gone.Reply.Ename) != tt.errName {
				t.Errorf("x on the fresh kernel: %+v; want %s", r.Gone, tt.errName)
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return "<none>"
	}
	return *s
}
