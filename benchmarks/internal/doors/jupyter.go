package doors

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/bench"
	"github.com/paddock-dev/paddock/benchmarks/internal/report"
	"github.com/paddock-dev/paddock/benchmarks/internal/server"
	"github.com/paddock-dev/paddock/benchmarks/internal/stats"
)

// jupyterPython is the Debian Python python3-jupyter-server and
// python3-ipykernel install into (make test-deps).
const jupyterPython = "/usr/bin/python3"

// jupyterNoDelayLauncher starts Debian's Jupyter Server with tornado
// patched in its own process to keep TCP_NODELAY on; it prints
// jupyterNoDelayCheck once it has read the option back from a kernel
// WebSocket's socket.
//
//go:embed jupyter_nodelay.py
var jupyterNoDelayLauncher []byte

const jupyterNoDelayCheck = "paddock-bench: kernel WebSocket TCP_NODELAY=1"

// JupyterPhase measures both stacks, one after the other, each alone.
func JupyterPhase(ctx context.Context, o bench.Options, rep *report.Report) error {
	s, err := server.Start(ctx, o, server.Config{Name: "jupyter", Templates: []string{"python"}, Pool: 1, Snapshots: true})
	if err != nil {
		return err
	}
	r := stats.Row{Lang: "python", Probe: stats.JupyterProbe, Mode: stats.ModeJupyterPaddock}
	r.Samples, err = jupyterSamples(ctx, o, s.URL(), "", o.JupyterN)
	rep.Rows = append(rep.Rows, r)
	if err = errors.Join(err, s.Finish(ctx, rep)); err != nil {
		return err
	}
	for _, mode := range []string{stats.ModeJupyterNative, stats.ModeJupyterNoDelay} {
		if err := nativeJupyterRow(ctx, o, rep, mode); err != nil {
			return err
		}
	}
	return nil
}

// nativeJupyterRow measures one native Jupyter Server, started for it
// alone. With Nagle off, the row counts only once the launcher has shown
// TCP_NODELAY set on the kernel WebSocket's socket.
func nativeJupyterRow(ctx context.Context, o bench.Options, rep *report.Report, mode string) error {
	nodelay := mode == stats.ModeJupyterNoDelay
	base, stderr, stop, err := nativeJupyter(ctx, "bench", nodelay)
	if err != nil {
		return err
	}
	defer stop()
	r := stats.Row{Lang: "python", Probe: stats.JupyterProbe, Mode: mode}
	r.Samples, err = jupyterSamples(ctx, o, base, "bench", o.JupyterN)
	if err == nil && nodelay && !strings.Contains(stderr.String(), jupyterNoDelayCheck) {
		err = fmt.Errorf("jupyter_nodelay.py did not report %q", jupyterNoDelayCheck)
	}
	if err != nil {
		return err
	}
	rep.Rows = append(rep.Rows, r)
	return nil
}

// lockedBuffer is a copy of a server's stderr, written by exec's copier
// and read by the bench.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// jupyterSamples runs doors/clients/jupyter_bench.mjs against base.
func jupyterSamples(ctx context.Context, o bench.Options, base, token string, n int) ([]stats.Sample, error) {
	cmd := exec.CommandContext(ctx, "node", "jupyter_bench.mjs", base, token, strconv.Itoa(n))
	cmd.Dir = o.Clients
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
	samples := make([]stats.Sample, 0, len(res.Samples))
	for _, ms := range res.Samples {
		samples = append(samples, stats.Sample{D: time.Duration(ms * float64(time.Millisecond)), Counted: true})
	}
	return samples, nil
}

// nativeJupyter starts Debian's Jupyter Server with its own python3
// kernel (ipykernel) on a free loopback port, through
// jupyter_nodelay.py if nodelay, and returns its URL once it answers, a
// copy of its stderr, and how to stop it.
func nativeJupyter(ctx context.Context, token string, nodelay bool) (string, *lockedBuffer, func(), error) {
	if err := exec.CommandContext(ctx, jupyterPython, "-c", "import jupyter_server, ipykernel").Run(); err != nil {
		return "", nil, nil, fmt.Errorf("Debian's python3-jupyter-server and python3-ipykernel are needed (make test-deps): %w", err)
	}
	port, err := server.FreePort()
	if err != nil {
		return "", nil, nil, err
	}
	home, err := os.MkdirTemp("", "paddock-bench-jupyter-")
	if err != nil {
		return "", nil, nil, err
	}
	start := []string{"-m", "jupyter_server"}
	if nodelay {
		launcher := filepath.Join(home, "jupyter_nodelay.py")
		if err := os.WriteFile(launcher, jupyterNoDelayLauncher, 0o644); err != nil {
			_ = os.RemoveAll(home)
			return "", nil, nil, err
		}
		start = []string{launcher}
	}
	cmd := exec.CommandContext(ctx, jupyterPython, append(start, "--no-browser", "--ServerApp.ip=127.0.0.1",
		"--ServerApp.port="+strconv.Itoa(port), "--ServerApp.port_retries=0", "--ServerApp.token="+token,
		"--ServerApp.root_dir="+home, "--ServerApp.allow_root=True", "--log-level=WARN")...)
	cmd.Dir = home
	cmd.Env = append(os.Environ(), "HOME="+home, "JUPYTER_CONFIG_DIR="+filepath.Join(home, "config"),
		"JUPYTER_DATA_DIR="+filepath.Join(home, "data"), "JUPYTER_RUNTIME_DIR="+filepath.Join(home, "runtime"))
	stderr := &lockedBuffer{}
	cmd.Stderr = io.MultiWriter(os.Stderr, stderr)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(home)
		return "", nil, nil, err
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
			return "", nil, nil, errors.New("jupyter server exited at start")
		case <-ctx.Done():
			stop()
			return "", nil, nil, ctx.Err()
		default:
		}
		if resp, err := http.Get(base + "/api"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base, stderr, stop, nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop()
	return "", nil, nil, errors.New("jupyter server did not answer in 3 minutes")
}
