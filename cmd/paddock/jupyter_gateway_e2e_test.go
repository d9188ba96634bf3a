package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// jupyterPython is the Debian Python that python3-jupyter-server (and
// python3-ipykernel) install into; `make test` installs them.
const jupyterPython = "/usr/bin/python3"

// needJupyterServer skips (fails under `make test`) without Debian's
// Jupyter Server.
func needJupyterServer(t *testing.T) {
	t.Helper()
	if err := exec.Command(jupyterPython, "-c", "import jupyter_server").Run(); err != nil {
		if os.Getenv("PADDOCK_REQUIRE_GVISOR") == "1" {
			t.Fatalf("Debian's python3-jupyter-server is not installed (make test-deps installs it): %v", err)
		}
		t.Skip("python3-jupyter-server is not installed")
	}
}

// jupyterServer starts Debian's Jupyter Server on a free loopback port
// with token jtok and the extra flags, and returns its URL once it
// answers. It is killed when the test ends.
func jupyterServer(t *testing.T, jtok string, flags ...string) string {
	t.Helper()
	return jupyterApp(t, func(port int, home string) []string {
		return append([]string{"-m", "jupyter_server", "--no-browser", "--ServerApp.ip=127.0.0.1",
			"--ServerApp.port=" + strconv.Itoa(port), "--ServerApp.port_retries=0", "--ServerApp.token=" + jtok,
			"--ServerApp.root_dir=" + home, "--ServerApp.allow_root=True"}, flags...)
	}, "")
}

// jupyterApp runs Debian's Python with the arguments args gives for a
// free port and the app's home directory (home; "" is a fresh one), and
// returns the app's URL once GET /api answers.
func jupyterApp(t *testing.T, args func(port int, home string) []string, home string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	if home == "" {
		home = t.TempDir()
	}
	cmd := exec.Command(jupyterPython, args(port, home)...)
	cmd.Dir = home
	cmd.Env = append(os.Environ(), "HOME="+home, "JUPYTER_CONFIG_DIR="+filepath.Join(home, "config"),
		"JUPYTER_DATA_DIR="+filepath.Join(home, "data"), "JUPYTER_RUNTIME_DIR="+filepath.Join(home, "runtime"))
	logf, err := os.Create(filepath.Join(home, "jupyter-server.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("jupyter server log:\n%s", b)
		}
	})
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	// Wait for it to answer; the deadline is only a safety net for a
	// server that never comes up (start-up takes seconds on a busy host).
	deadline := time.Now().Add(3 * time.Minute)
	for {
		select {
		case err := <-exited:
			b, _ := os.ReadFile(logf.Name())
			t.Fatalf("jupyter server exited: %v\n%s", err, b)
		default:
		}
		resp, err := http.Get(url + "/api")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("jupyter server did not answer within 3 minutes")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestE2EJupyterGateway runs an unmodified Jupyter Server (Debian's) in
// gateway mode against Paddock and drives it with @jupyterlab/services:
// its cells run in Paddock's gVisor sandboxes.
func TestE2EJupyterGateway(t *testing.T) {
	needJupyterServer(t)
	e, token := jupyterE2E(t)
	jtok := "jupyter-server-token"
	url := jupyterServer(t, jtok, "--gateway-url="+e.srv.URL, "--GatewayClient.auth_token="+token)

	var r jupyterReport
	jupyterNode(t, &r, "jupyter_client.mjs", url, jtok, "python3", "keep")
	jupyterCheckKernel(t, r, "python", "")
	if len(r.Plot.Displays) != 1 || !slices.Contains(r.Plot.Displays[0], "image/png") {
		t.Errorf("plot: %+v", r.Plot)
	}
	if r.Proof.Reply.Status != "ok" {
		t.Fatalf("proof cell: %+v", r.Proof)
	}
	// The kernel Jupyter Server runs is a Paddock session of alice's: its
	// sandbox is a live gVisor sandbox, and the file the cell wrote is in
	// it, read back through Paddock's own API.
	cl, err := e.st.Core.Authenticate(netip.MustParseAddr("127.0.0.1"), token, "test")
	if err != nil {
		t.Fatal(err)
	}
	// Jupyter ids are UUIDs: the same 32 hex digits as Paddock's session id.
	sid := strings.ReplaceAll(r.KernelID, "-", "")
	s, err := e.st.Core.Session(cl, sid)
	if err != nil {
		t.Fatalf("Jupyter Server's kernel %s is not a Paddock session of alice's: %v", r.KernelID, err)
	}
	if s.SandboxID == "" || !slices.Contains(e.list(t), s.SandboxID) {
		t.Errorf("sandbox %q of kernel %s is not among runsc's: %v", s.SandboxID, r.KernelID, e.list(t))
	}
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/v1/sessions/"+sid+"/files?path=paddock-proof.txt", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "written by kernel "+r.KernelID {
		t.Errorf("the proof file through Paddock's API: HTTP %d %q", resp.StatusCode, body)
	}
	t.Logf("Jupyter Server kernel %s ran in Paddock sandbox %s", r.KernelID, s.SandboxID)

	// Shutting the kernel down in Jupyter Server ends the Paddock session.
	req, _ = http.NewRequest(http.MethodDelete, url+"/api/kernels/"+r.KernelID, nil)
	req.Header.Set("Authorization", "token "+jtok)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := e.st.Core.Session(cl, sid); resp.StatusCode != http.StatusNoContent || err == nil {
		t.Errorf("delete through Jupyter Server: HTTP %d, Paddock session after: %v", resp.StatusCode, err)
	}
}
