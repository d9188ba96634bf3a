package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// The Jupyter door's cell round trip (`x + 1` through @jupyterlab/services)
// against Paddock and against a native, unsandboxed Jupyter Server with
// Debian's ipykernel, driven by the same client in the same run.
const (
	modeJupyterPaddock = "jupyter paddock" // @jupyterlab/services → Paddock's Jupyter door → a gVisor session
	modeJupyterNative  = "jupyter native"  // the same client → Debian's Jupyter Server + ipykernel, no sandbox
	jupyterProbe       = "x + 1"
	// jupyterPython is the Debian Python python3-jupyter-server and
	// python3-ipykernel install into (make test-deps).
	jupyterPython = "/usr/bin/python3"
)

func init() {
	modeColors[modeJupyterPaddock] = color.RGBA{0x17, 0xbe, 0xcf, 0xff}
	modeColors[modeJupyterNative] = color.RGBA{0x9e, 0xda, 0xe5, 0xff}
}

// jupyterPhase measures both stacks, one after the other, each alone.
func jupyterPhase(ctx context.Context, o options, rep *report) error {
	s, err := startServer(ctx, o, serverConfig{name: "jupyter", templates: []string{"python"}, pool: 1, snapshots: true})
	if err != nil {
		return err
	}
	r := row{Lang: "python", Probe: jupyterProbe, Mode: modeJupyterPaddock}
	r.Samples, err = jupyterSamples(ctx, o, s.base, "", o.jupyterN)
	rep.Rows = append(rep.Rows, r)
	if err = errors.Join(err, s.finish(ctx, rep)); err != nil {
		return err
	}
	base, stop, err := nativeJupyter(ctx, "bench")
	if err != nil {
		return err
	}
	defer stop()
	r = row{Lang: "python", Probe: jupyterProbe, Mode: modeJupyterNative}
	r.Samples, err = jupyterSamples(ctx, o, base, "bench", o.jupyterN)
	rep.Rows = append(rep.Rows, r)
	return err
}

// jupyterSamples runs doors/clients/jupyter_bench.mjs against base.
func jupyterSamples(ctx context.Context, o options, base, token string, n int) ([]sample, error) {
	cmd := exec.CommandContext(ctx, "node", "jupyter_bench.mjs", base, token, strconv.Itoa(n))
	cmd.Dir = o.clients
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("node jupyter_bench.mjs %s: %w (run `make clients`)\n%s", base, err, stderr.String())
	}
	var res struct {
		Samples []float64 `json:"samples_ms"`
		Result  string    `json:"result"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("jupyter_bench.mjs printed %q: %w", out, err)
	}
	if res.Result != "42" {
		return nil, fmt.Errorf("x + 1 gave %q through %s, want 42", res.Result, base)
	}
	samples := make([]sample, 0, len(res.Samples))
	for _, ms := range res.Samples {
		samples = append(samples, sample{D: time.Duration(ms * float64(time.Millisecond)), Counted: true})
	}
	return samples, nil
}

// nativeJupyter starts Debian's Jupyter Server with its own python3
// kernel (ipykernel) on a free loopback port, and returns its URL once it
// answers, and how to stop it.
func nativeJupyter(ctx context.Context, token string) (string, func(), error) {
	if err := exec.CommandContext(ctx, jupyterPython, "-c", "import jupyter_server, ipykernel").Run(); err != nil {
		return "", nil, fmt.Errorf("Debian's python3-jupyter-server and python3-ipykernel are needed (make test-deps): %w", err)
	}
	port, err := freePort()
	if err != nil {
		return "", nil, err
	}
	home, err := os.MkdirTemp("", "paddock-bench-jupyter-")
	if err != nil {
		return "", nil, err
	}
	cmd := exec.CommandContext(ctx, jupyterPython, "-m", "jupyter_server", "--no-browser", "--ServerApp.ip=127.0.0.1",
		"--ServerApp.port="+strconv.Itoa(port), "--ServerApp.port_retries=0", "--ServerApp.token="+token,
		"--ServerApp.root_dir="+home, "--ServerApp.allow_root=True", "--log-level=WARN")
	cmd.Dir = home
	cmd.Env = append(os.Environ(), "HOME="+home, "JUPYTER_CONFIG_DIR="+filepath.Join(home, "config"),
		"JUPYTER_DATA_DIR="+filepath.Join(home, "data"), "JUPYTER_RUNTIME_DIR="+filepath.Join(home, "runtime"))
	cmd.Stderr = os.Stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(home)
		return "", nil, err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		_ = os.RemoveAll(home)
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			_ = os.RemoveAll(home)
			return "", nil, errors.New("jupyter server exited at start")
		case <-ctx.Done():
			stop()
			return "", nil, ctx.Err()
		default:
		}
		if resp, err := http.Get(base + "/api"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base, stop, nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop()
	return "", nil, errors.New("jupyter server did not answer in 3 minutes")
}

// jupyterHeadline is native p50 / Paddock p50 of the cell round trip: how
// many times faster the sandboxed stack is (the aim: at least 7).
func jupyterHeadline(rows []row) (headline, bool) {
	p, _ := findRow(rows, "python", jupyterProbe, modeJupyterPaddock)
	n, _ := findRow(rows, "python", jupyterProbe, modeJupyterNative)
	v, ok := ratio(n.p50(), p.p50())
	if !ok {
		return headline{}, false
	}
	return newHeadline(fmt.Sprintf("python `%s` Jupyter cell round trip: native Jupyter Server + ipykernel p50 / Paddock p50", jupyterProbe), v, "x", false, 7), true
}
