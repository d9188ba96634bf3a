package main

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/store"
)

// consoleReport is what doors/clients/console_browser.mjs saw.
type consoleReport struct {
	URL          string   `json:"url"`
	NoTokenMsg   string   `json:"noToken"`
	BadTokenMsg  string   `json:"badToken"`
	GoodTokenMsg string   `json:"goodToken"`
	Templates    []string `json:"templates"`
	Print, Plot  pgRun
	Refused      string `json:"refused"`
	SessionID    string `json:"sessionId"`
	Sum          string `json:"sum"`
	SumPrompt    string `json:"sumPrompt"`
	HTML         struct {
		Sandbox *string `json:"sandbox"`
		Srcdoc  string  `json:"srcdoc"`
		Bold    string  `json:"bold"`
		InPage  int     `json:"inPage"`
	} `json:"html"`
	TableCells []string `json:"tableCells"`
	PlotImage  pgImage  `json:"plotImage"`
	Error      struct {
		Status, Name, Traceback string
	} `json:"error"`
	Closed string `json:"closed"`
	Pools  []struct {
		Template, Ready, Image string
	} `json:"pools"`
	Runs []struct {
		ID, Kind, Door, Tenant, Template, Reason string
		StartKind                                string `json:"startKind"`
		ExitCode                                 string `json:"exitCode"`
	} `json:"runs"`
	Bars           []string `json:"bars"`
	Viewer         string   `json:"viewer"`
	OperatorErrors []string `json:"operatorErrors"`
	AllTenants     string   `json:"allTenants"`
	ConsoleErrors  []string `json:"consoleErrors"`
	// BlockedStylesBefore counts the page's own inline styles the policy
	// refused, before any output's.
	BlockedStylesBefore int      `json:"blockedStylesBefore"`
	Requests            []string `json:"requests"`
}

type pgImage struct {
	Src   string `json:"src"`
	Width int    `json:"width"`
}

type pgRun struct {
	Stdout, Stderr, Reason, Exit string
	Timing                       map[string]string `json:"timing"`
	Images                       []pgImage         `json:"images"`
}

// TestE2EConsoleBrowser drives the web console in Debian's Chromium
// against a real Paddock on gVisor with authentication on: a 401 without
// a token and with a bad one, then the playground (a print, a plot), the
// notebook (state across cells, HTML in a sandboxed frame, a table, a
// plot, a traceback) and the operator view (pools, the runs just made,
// the latency chart). The screenshots are kept in cmd/paddock/testout/
// (docs/console/ holds copies).
func TestE2EConsoleBrowser(t *testing.T) {
	needClients(t)
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		jupyterMissing(t, "Debian's chromium")
	}
	e, token := jupyterE2E(t)

	// The API's browser guard covers the console: a DNS-rebound Host is
	// refused before any page is served.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, e.srv.URL+"/console/", nil)
	req.Host = "attacker.example"
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("the console under a foreign Host: %v %v, want 403", resp, err)
	} else {
		resp.Body.Close()
	}

	out, err := filepath.Abs("testout/console")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	var r consoleReport
	jupyterNode(t, &r, "console_browser.mjs", e.srv.URL, token, out)

	if r.URL != e.srv.URL+"/console/" {
		t.Errorf("/console led to %s", r.URL)
	}
	if !strings.HasPrefix(r.NoTokenMsg, "This server needs a token (invalid_token: ") ||
		!strings.HasPrefix(r.BadTokenMsg, "The server refused this token (invalid_token: ") || r.GoodTokenMsg != "" {
		t.Errorf("token messages: none %q, bad %q, good %q", r.NoTokenMsg, r.BadTokenMsg, r.GoodTokenMsg)
	}
	if !slices.Contains(r.Templates, "python") || !slices.Contains(r.Templates, "node") {
		t.Errorf("templates offered: %v", r.Templates)
	}
	if r.Print.Stdout != "42\n" || r.Print.Reason != "ok" || r.Print.Exit != "0" || r.Print.Stderr != "" {
		t.Errorf("print(6*7): %+v", r.Print)
	}
	for _, phase := range []string{"queue_ms", "acquire_ms", "start_ms", "exec_ms", "total_ms"} {
		if !strings.HasSuffix(r.Print.Timing[phase], " ms") {
			t.Errorf("timing %s shown as %q", phase, r.Print.Timing[phase])
		}
	}
	if r.Plot.Stdout != "plotted\n" || r.Plot.Reason != "ok" || len(r.Plot.Images) != 1 ||
		r.Plot.Images[0].Src != "data:image/png;base64," || r.Plot.Images[0].Width < 100 {
		t.Errorf("the plotting run: %+v", r.Plot)
	}
	if !strings.HasPrefix(r.Refused, "HTTP 400 ") {
		t.Errorf("a refused run shows %q, want the API's 400 verbatim", r.Refused)
	}

	if r.Sum != "42" || r.SumPrompt != "In [2]:" {
		t.Errorf("x + 1 after x = 41: %q at %q", r.Sum, r.SumPrompt)
	}
	if r.HTML.Sandbox == nil || *r.HTML.Sandbox != "" || r.HTML.Srcdoc != "<b>hi</b>" || r.HTML.Bold != "hi" || r.HTML.InPage != 0 {
		t.Errorf("HTML output: %+v", r.HTML)
	}
	if !slices.Equal(r.TableCells, []string{"1", "3", "2", "4"}) {
		t.Errorf("DataFrame cells %v, want 1 3 2 4", r.TableCells)
	}
	if r.PlotImage.Src != "data:image/png;base64," || r.PlotImage.Width < 100 {
		t.Errorf("notebook plot: %+v", r.PlotImage)
	}
	if r.Error.Status != "error" || r.Error.Name != "ZeroDivisionError: division by zero" || !strings.Contains(r.Error.Traceback, "1/0") ||
		strings.Contains(r.Error.Traceback, "\x1b[") {
		t.Errorf("1/0: %+v", r.Error)
	}
	if r.Closed != "session "+r.SessionID+" closed" {
		t.Errorf("after Close: %q", r.Closed)
	}
	cl, err := e.st.Core.Authenticate(netip.MustParseAddr("127.0.0.1"), token, "test")
	if err != nil {
		t.Fatal(err)
	}
	if s, err := e.st.Core.Session(cl, r.SessionID); err == nil {
		t.Errorf("session %s still open after Close: %+v", r.SessionID, s)
	}

	var python bool
	for _, p := range r.Pools {
		python = python || (p.Template == "python" && p.Image == "ready")
	}
	if !python {
		t.Errorf("pools table: %+v", r.Pools)
	}
	// The playground's print, as the history recorded it, is among the
	// recent runs the page shows.
	sum := sha256.Sum256([]byte("print(6*7)"))
	var want string
	for _, run := range e.history(t, store.RunFilter{Kind: store.KindRun}) {
		if run.CodeSHA256 == hex.EncodeToString(sum[:]) {
			want = strconv.FormatInt(run.ID, 10)
		}
	}
	found := false
	for _, run := range r.Runs {
		if run.ID == want {
			found = true
			if run.Kind != "RUN" || run.Door != "rest" || run.Tenant != "alice" || run.Template != "python" || run.Reason != "ok" || run.ExitCode != "0" {
				t.Errorf("the playground's run shown as %+v", run)
			}
		}
	}
	if want == "" || !found {
		t.Errorf("the playground's run (history id %q) is not among the recent runs shown: %+v", want, r.Runs)
	}
	if !slices.ContainsFunc(r.Bars, func(b string) bool { return strings.HasPrefix(b, "python/") }) {
		t.Errorf("latency chart bars %v, want python's", r.Bars)
	}
	if !strings.HasPrefix(r.Viewer, "Signed in as alice") || len(r.OperatorErrors) != 0 {
		t.Errorf("operator view: viewer %q, errors %q", r.Viewer, r.OperatorErrors)
	}
	if !strings.HasPrefix(r.AllTenants, "insufficient_scope: ") {
		t.Errorf("every tenant's runs, asked without the admin scope: %q, want GraphQL's insufficient_scope verbatim", r.AllTenants)
	}
	if len(r.ConsoleErrors) != 0 || r.BlockedStylesBefore != 0 {
		t.Errorf("browser console errors: %q; inline styles refused %d", r.ConsoleErrors, r.BlockedStylesBefore)
	}
	if !slices.Equal(r.Requests, []string{e.srv.URL}) {
		t.Errorf("the page asked %v, want only the server itself", r.Requests)
	}
	for _, name := range []string{"playground.png", "notebook.png", "operator.png"} {
		if st, err := os.Stat(filepath.Join(out, name)); err != nil || st.Size() == 0 {
			t.Errorf("screenshot %s: %v", name, err)
		}
	}
	t.Logf("screenshots in %s; runs shown %d, bars %v", out, len(r.Runs), r.Bars)
}

// On a server that keeps no history and needs no token, the operator
// view still shows the pools, and says "History off" where the runs and
// the latency chart would be.
func TestE2EConsoleHistoryOff(t *testing.T) {
	needClients(t)
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		jupyterMissing(t, "Debian's chromium")
	}
	e := newE2EWith(t, "--history-db=off")
	var r struct {
		Pools          []string `json:"pools"`
		RunsNote       string   `json:"runsNote"`
		AggregatesNote string   `json:"aggregatesNote"`
		Viewer         string   `json:"viewer"`
		Banner         string   `json:"banner"`
		RequestError   string   `json:"requestError"`
		ConsoleErrors  []string `json:"consoleErrors"`
	}
	jupyterNode(t, &r, "console_operator.mjs", e.srv.URL)
	const off = "History off: this server keeps no history of runs (--history-db off)."
	if !slices.Contains(r.Pools, "python") || r.RunsNote != off || r.AggregatesNote != off {
		t.Errorf("operator view: %+v", r)
	}
	if !strings.HasSuffix(r.Viewer, "history off.") || r.Banner != "" || r.RequestError != "" || len(r.ConsoleErrors) != 0 {
		t.Errorf("operator view: viewer %q, banner %q, request error %q, console errors %q", r.Viewer, r.Banner, r.RequestError, r.ConsoleErrors)
	}
}
