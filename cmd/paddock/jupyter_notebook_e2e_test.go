package main

import (
	"encoding/json"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// plotNotebook is a notebook of two cells: a plot, and a line of text
// that names the sandbox's hostname.
const plotNotebook = `{
 "cells": [
  {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [],
   "source": ["import matplotlib.pyplot as plt\n", "plt.plot([1, 2, 3], [1, 4, 9])\n", "plt.show()"]},
  {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [],
   "source": ["import socket\n", "print('ran on', socket.gethostname())"]}
 ],
 "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
 "nbformat": 4, "nbformat_minor": 5
}`

// TestE2EJupyterNotebookBrowser opens a notebook in Debian's classic
// Jupyter Notebook, in gateway mode against Paddock, in headless Debian
// Chromium, runs it and finds the plot in the page. The screenshot is
// kept in cmd/paddock/testout/.
func TestE2EJupyterNotebookBrowser(t *testing.T) {
	for _, need := range []struct{ what, check string }{
		{"jupyter-notebook", "import notebook"},
	} {
		if err := exec.Command(jupyterPython, "-c", need.check).Run(); err != nil {
			jupyterMissing(t, "Debian's "+need.what)
		}
	}
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		jupyterMissing(t, "Debian's chromium")
	}
	e, token := jupyterE2E(t)
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "plot.ipynb"), []byte(plotNotebook), 0o644); err != nil {
		t.Fatal(err)
	}
	jtok := "notebook-token"
	url := jupyterApp(t, func(port int, home string) []string {
		return []string{"-m", "notebook", "--no-browser", "--NotebookApp.ip=127.0.0.1",
			"--NotebookApp.port=" + strconv.Itoa(port), "--NotebookApp.port_retries=0", "--NotebookApp.token=" + jtok,
			"--NotebookApp.notebook_dir=" + home, "--NotebookApp.allow_root=True",
			"--gateway-url=" + e.srv.URL, "--GatewayClient.auth_token=" + token}
	}, home)

	out, err := filepath.Abs("testout")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(out, "jupyter-notebook.png")
	var r struct {
		KernelID string `json:"kernelId"`
		Language string `json:"language"`
		Image    struct {
			Src           string `json:"src"`
			Width, Height int
		} `json:"image"`
		Text string `json:"text"`
	}
	jupyterNode(t, &r, "notebook_browser.mjs", url, jtok, "plot.ipynb", shot)
	if r.Language != "python" || r.Image.Src != "data:image/png;base64," || r.Image.Width < 100 || r.Image.Height < 100 {
		t.Errorf("the notebook page: %+v", r)
	}
	if r.Text != "ran on sandbox\n" {
		t.Errorf("second cell printed %q, want the sandbox's hostname", r.Text)
	}
	if st, err := os.Stat(shot); err != nil || st.Size() == 0 {
		t.Errorf("screenshot %s: %v", shot, err)
	}
	cl, err := e.st.Core.Authenticate(netip.MustParseAddr("127.0.0.1"), token, "test")
	if err != nil {
		t.Fatal(err)
	}
	s, err := e.st.Core.Session(cl, strings.ReplaceAll(r.KernelID, "-", ""))
	if err != nil || !slices.Contains(e.list(t), s.SandboxID) {
		t.Fatalf("the notebook's kernel %s is not a live Paddock sandbox: %v", r.KernelID, err)
	}
	raw, _ := json.Marshal(r)
	t.Logf("notebook ran in Paddock sandbox %s: %s; screenshot %s", s.SandboxID, raw, shot)
}

// jupyterMissing skips a test (fails it under `make test`) for a Debian
// package it needs.
func jupyterMissing(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("PADDOCK_REQUIRE_GVISOR") == "1" {
		t.Fatalf("%s is not installed (make test-deps installs it)", what)
	}
	t.Skip(what + " is not installed")
}
