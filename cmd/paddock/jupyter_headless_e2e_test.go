package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Headless notebook runners reach Paddock through Jupyter Server's gateway
// kernel manager in their own process (JUPYTER_GATEWAY_URL), as CI
// notebook checks do: nbclient, and nbconvert --execute on top of it.

// headlessPython is a notebook of state across cells, a rich output, an
// error (allowed) and a cell that outlives its timeout ("timeout_s", read
// by doors/clients/nbclient_run.py) and is interrupted.
const headlessPython = `{
 "cells": [
  {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": "x = 21"},
  {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": "x * 2"},
  {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [],
   "source": "from IPython.display import HTML, display\ndisplay(HTML('<b>rich</b>'))\nprint('shown')"},
  {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": "print('before the error')\n1/0"},
  {"cell_type": "code", "execution_count": null, "metadata": {"timeout_s": 3}, "outputs": [], "source": "import time\ntime.sleep(600)"},
  {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": "print('x is', x)"}
 ],
 "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
 "nbformat": 4, "nbformat_minor": 4
}`

// headlessPythonReport is what nbclient_run.py reports for headlessPython
// on a local ipykernel (Debian's 6.17) and, so, through Paddock:
// tracebacks differ in their text only.
const headlessPythonReport = `{"kernel": "python", "cells": [
 {"count": 1, "outputs": []},
 {"count": 2, "outputs": [{"type": "execute_result", "mimes": ["text/plain"], "plain": "42", "html": null, "count": 2}]},
 {"count": 3, "outputs": [
  {"type": "display_data", "mimes": ["text/html", "text/plain"], "plain": "<IPython.core.display.HTML object>", "html": "<b>rich</b>"},
  {"type": "stream", "name": "stdout", "text": "shown\n"}]},
 {"count": 4, "outputs": [
  {"type": "stream", "name": "stdout", "text": "before the error\n"},
  {"type": "error", "ename": "ZeroDivisionError", "evalue": "division by zero", "traceback": true}]},
 {"count": 5, "outputs": [{"type": "error", "ename": "KeyboardInterrupt", "evalue": "", "traceback": true}]},
 {"count": 6, "outputs": [{"type": "stream", "name": "stdout", "text": "x is 21\n"}]}
]}`

// headlessNode is headlessPython's notebook for the JavaScript kernel,
// its rich output shown with the kernel's display.html.
const headlessNode = `{
 "cells": [
  {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": "let x = 21"},
  {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": "x * 2"},
  {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": "display.html('<b>rich</b>'); console.log('shown'); ({a: [1, 2]})"},
  {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": "console.log('before the error')\nthrow new Error('boom')"},
  {"cell_type": "code", "execution_count": null, "metadata": {"timeout_s": 3}, "outputs": [], "source": "await new Promise((r) => setTimeout(r, 600000))"},
  {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": "console.log('x is', x)"}
 ],
 "metadata": {"kernelspec": {"display_name": "JavaScript", "language": "javascript", "name": "javascript"}},
 "nbformat": 4, "nbformat_minor": 4
}`

const headlessNodeReport = `{"kernel": "javascript", "cells": [
 {"count": 1, "outputs": []},
 {"count": 2, "outputs": [{"type": "execute_result", "mimes": ["text/plain"], "plain": "42", "html": null, "count": 2}]},
 {"count": 3, "outputs": [
  {"type": "display_data", "mimes": ["text/html"], "plain": null, "html": "<b>rich</b>"},
  {"type": "stream", "name": "stdout", "text": "shown\n"},
  {"type": "execute_result", "mimes": ["text/plain"], "plain": "{ a: [ 1, 2 ] }", "html": null, "count": 3}]},
 {"count": 4, "outputs": [
  {"type": "stream", "name": "stdout", "text": "before the error\n"},
  {"type": "error", "ename": "Error", "evalue": "boom", "traceback": true}]},
 {"count": 5, "outputs": [{"type": "error", "ename": "Interrupted", "evalue": "the cell was interrupted", "traceback": true}]},
 {"count": 6, "outputs": [{"type": "stream", "name": "stdout", "text": "x is 21\n"}]}
]}`

// TestE2EJupyterHeadlessRunners runs notebooks with Debian's nbclient
// (0.7) and nbconvert (6.5) through Jupyter Server 1.23's
// GatewayKernelManager against a real Paddock on gVisor: Python's
// outputs and execution counts are those of the same notebook on a local
// ipykernel, and each cell ran in a Paddock sandbox. Paddock runs
// without auth here: that gateway kernel client sends no token on its
// WebSocket (its REST calls do).
func TestE2EJupyterHeadlessRunners(t *testing.T) {
	needJupyterServer(t)
	for _, mod := range []string{"nbclient", "nbconvert", "ipykernel"} {
		if err := exec.Command(jupyterPython, "-c", "import "+mod).Run(); err != nil {
			jupyterMissing(t, "Debian's python3-"+mod)
		}
	}
	// A cell may run for two minutes: the quiet cell below runs for 45 s.
	e := newE2EWith(t, "--max-timeout=2m")
	dir := t.TempDir()
	nb := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	py, node := nb("python.ipynb", headlessPython), nb("node.ipynb", headlessNode)

	t.Run("nbclient python, as on a local ipykernel", func(t *testing.T) {
		before := jupyterExecutes(t, e)
		got := headless(t, e, "nbclient_run.py", "gateway", py, filepath.Join(dir, "python-gw.ipynb"))
		if n := jupyterExecutes(t, e) - before; n != 6 {
			t.Errorf("Paddock's Jupyter door ran %d cells, want the notebook's 6", n)
		}
		local := headless(t, e, "nbclient_run.py", "local", py, filepath.Join(dir, "python-local.ipynb"))
		sameReport(t, "through Paddock", got, headlessPythonReport)
		sameReport(t, "on a local ipykernel", local, headlessPythonReport)
	})
	t.Run("nbclient javascript", func(t *testing.T) {
		before := jupyterExecutes(t, e)
		got := headless(t, e, "nbclient_run.py", "gateway", node, filepath.Join(dir, "node-gw.ipynb"))
		if n := jupyterExecutes(t, e) - before; n != 6 {
			t.Errorf("Paddock's Jupyter door ran %d cells, want the notebook's 6", n)
		}
		sameReport(t, "through Paddock", got, headlessNodeReport)
	})
	t.Run("a quiet cell past the client's socket timeout", func(t *testing.T) {
		// The gateway kernel client reads its socket with a 40-s timeout
		// (KERNEL_LAUNCH_TIMEOUT) and gives up on a silent server: the
		// door's pings (every 30 s) keep it reading through a cell that
		// prints nothing for 45 s.
		quiet := nb("quiet.ipynb", `{"cells": [{"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [],
  "source": "import time\ntime.sleep(45)\nprint('slept')"}],
 "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}}, "nbformat": 4, "nbformat_minor": 4}`)
		got := headless(t, e, "nbclient_run.py", "gateway", quiet, filepath.Join(dir, "quiet-gw.ipynb"))
		sameReport(t, "through Paddock", got, `{"kernel": "python", "cells": [{"count": 1, "outputs": [{"type": "stream", "name": "stdout", "text": "slept\n"}]}]}`)
	})
	t.Run("nbconvert --execute", func(t *testing.T) {
		// nbconvert's timeout is one for every cell: the notebook without
		// its timeout cell.
		var n map[string]any
		_ = json.Unmarshal([]byte(headlessPython), &n)
		cells := n["cells"].([]any)
		n["cells"] = append(cells[:4:4], cells[5])
		b, _ := json.Marshal(n)
		in := nb("convert.ipynb", string(b))
		out := filepath.Join(dir, "converted.ipynb")
		before := jupyterExecutes(t, e)
		headlessRun(t, e, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", "--allow-errors",
			"--ExecutePreprocessor.kernel_manager_class=jupyter_server.gateway.managers.GatewayKernelManager",
			"--ExecutePreprocessor.timeout=300", "--output="+out, in)
		if n := jupyterExecutes(t, e) - before; n != 5 {
			t.Errorf("Paddock's Jupyter door ran %d cells, want the notebook's 5", n)
		}
		got := headless(t, e, "nbclient_run.py", "report", out, "-")
		var want map[string]any
		_ = json.Unmarshal([]byte(headlessPythonReport), &want)
		wc := want["cells"].([]any)
		six := wc[5].(map[string]any)
		six["count"] = 5.0
		want["cells"] = append(wc[:4:4], six)
		w, _ := json.Marshal(want)
		sameReport(t, "nbconvert through Paddock", got, string(w))
	})
}

// headless runs a script of doors/clients with Debian's Python, pointed
// at e by JUPYTER_GATEWAY_URL, and returns the JSON report it prints last.
func headless(t *testing.T, e *e2e, script string, args ...string) string {
	t.Helper()
	out := headlessRun(t, e, append([]string{filepath.Join(jupyterClients, script)}, args...)...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}

func headlessRun(t *testing.T, e *e2e, args ...string) string {
	t.Helper()
	// A safety net only: a runner that hangs fails the test.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	home := t.TempDir()
	cmd := exec.CommandContext(ctx, jupyterPython, args...)
	cmd.Env = append(os.Environ(), "JUPYTER_GATEWAY_URL="+e.srv.URL, "HOME="+home,
		"JUPYTER_CONFIG_DIR="+filepath.Join(home, "config"), "JUPYTER_RUNTIME_DIR="+filepath.Join(home, "runtime"),
		"PYDEVD_DISABLE_FILE_VALIDATION=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3 %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// sameReport fails unless the JSON reports got and want are equal.
func sameReport(t *testing.T, what, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("%s: the report %q: %v", what, got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, got, want)
	}
}

// jupyterExecutes counts the cells Paddock's Jupyter door has run
// (paddock_core_calls_total of door jupyter, operation execute).
func jupyterExecutes(t *testing.T, e *e2e) int {
	t.Helper()
	n := 0
	for _, l := range strings.Split(e.metrics(t), "\n") {
		if !strings.HasPrefix(l, "paddock_core_calls_total{") || !strings.Contains(l, `door="jupyter"`) || !strings.Contains(l, `operation="execute"`) {
			continue
		}
		v, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", l, err)
		}
		n += int(v)
	}
	return n
}
