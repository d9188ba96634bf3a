package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/paddock-dev/paddock/runner/agent/workspace"
	"github.com/paddock-dev/paddock/runner/wire"
)

// Agent runs one sandbox's single program, or its kernel. It assumes it owns
// its process: it reaps every child, so nothing else in the process may
// wait for one.
type Agent struct {
	cfg         Config
	interpreter string
	log         *slog.Logger
	// limits, when set, is what every limit reading returns. Only the
	// package's tests set it, to judge the drivers' hints outside a
	// sandbox.
	limits *limitState
}

// New checks cfg and resolves the interpreter.
func New(cfg Config, log *slog.Logger) (*Agent, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("agent config: %w", err)
	}
	path, err := lookInterpreter(cfg.interpreterName())
	if err != nil {
		return nil, err
	}
	return &Agent{cfg: cfg, interpreter: path, log: log}, nil
}

// Serve pre-starts the interpreter, says Hello on out, then either runs the
// first Run frame read from in, or, asked for a kernel, serves the kernel's
// requests; it refuses any other. It returns nil when in ends after a
// Hello, and an error when the sandbox could not be served. Every user
// process is dead when it returns.
func (a *Agent) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := wire.NewWriter(out)

	if os.Getpid() != 1 {
		if err := becomeSubreaper(); err != nil {
			a.log.Warn("cannot become a subreaper", "err", err)
		}
	}
	if err := closeInheritedFDs(); err != nil {
		a.log.Warn("cannot check inherited descriptors", "err", err)
	}
	root, err := openWorkdir(a.cfg)
	if err != nil {
		return a.failStart(w, err)
	}
	defer root.Close()
	files, err := workspace.Open(root, a.cfg.switchesUser(), a.cfg.UID, a.cfg.GID)
	if err != nil {
		return a.failStart(w, err)
	}

	rp := startReaper(ctx, a.log)
	interp, pumps, err := a.prestart(ctx, rp)
	if err != nil {
		return a.failStart(w, err)
	}
	s := &session{
		agent:  a,
		w:      w,
		files:  files,
		reaper: rp,
		interp: interp,
		pumps:  pumps,
	}
	defer func() {
		if err := s.close(); err != nil {
			a.log.Warn("cleaning up", "err", err)
		}
	}()
	if err := writeJSON(w, wire.TypeHello, wire.Hello{Version: wire.Version, Language: a.cfg.Language, Interpreter: interp.pid}); err != nil {
		return fmt.Errorf("sending hello: %w", err)
	}
	a.log.Info("ready", "pid", interp.pid, "language", a.cfg.Language)
	return s.serveFrames(ctx, in)
}

// prestart starts the interpreter and its output pumps and waits until the
// driver has run the warm-up code and waits for its request. A node
// interpreter that does not get there from its startup snapshot is started
// again without it (startup.go). On failure every process it started is
// dead.
func (a *Agent) prestart(ctx context.Context, rp *reaper) (*interpreter, [2]*pump, error) {
	blob := a.startupBlob()
	interp, pumps, err := a.startDriver(ctx, rp, blob)
	if err != nil && blob != "" && ctx.Err() == nil {
		a.log.Warn("node startup snapshot failed; starting without it", "blob", blob, "err", err)
		interp, pumps, err = a.startDriver(ctx, rp, "")
	}
	return interp, pumps, err
}

// startDriver starts the interpreter, from blob if that is set, and its
// output pumps and waits until the driver is ready. On failure every
// process it started is dead.
func (a *Agent) startDriver(ctx context.Context, rp *reaper, blob string) (*interpreter, [2]*pump, error) {
	interp, err := startInterpreter(rp, a.cfg, a.interpreter, blob)
	if err != nil {
		return nil, [2]*pump{}, err
	}
	pumps := [2]*pump{newPump(wire.TypeStdout, interp.stdout), newPump(wire.TypeStderr, interp.stderr)}
	for _, p := range pumps {
		go p.run(ctx)
	}
	if err := a.waitReady(ctx, interp, pumps); err != nil {
		if cerr := interp.close(); cerr != nil {
			a.log.Warn("cleaning up", "err", cerr)
		}
		return nil, [2]*pump{}, err
	}
	if a.cfg.HeapMB > 0 {
		interp.peaks.ready = residentBytes(interp.pid)
	}
	return interp, pumps, nil
}

// waitReady waits until the driver wrote its ready marker on both streams.
// When the interpreter dies first, the error says how, with the end of its
// warm-up stderr.
func (a *Agent) waitReady(ctx context.Context, interp *interpreter, pumps [2]*pump) error {
	var (
		got    [2]bool
		errs   [2]error
		exited = interp.exited
		grace  <-chan time.Time
	)
	for !got[0] || !got[1] {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case errs[0] = <-pumps[0].ready:
			got[0] = true
		case errs[1] = <-pumps[1].ready:
			got[1] = true
		case <-exited:
			exited, grace = nil, time.After(drainGrace)
		case <-grace:
			return fmt.Errorf("%w: %s during warm-up", ErrNotReady, describeStatus(interp.status))
		}
	}
	err := errs[0]
	if err == nil {
		err = errs[1]
	}
	if err == nil {
		return nil
	}
	select {
	case <-interp.exited:
		err = fmt.Errorf("%w: %s during warm-up", err, describeStatus(interp.status))
	case <-time.After(drainGrace):
	}
	return fmt.Errorf("%w; stderr: %q", err, pumps[1].tail)
}

// failStart reports a failed start to the host and returns err.
func (a *Agent) failStart(w *wire.Writer, err error) error {
	a.log.Error("start failed", "err", err)
	if werr := writeJSON(w, wire.TypeFail, wire.Fail{Message: err.Error()}); werr != nil {
		err = errors.Join(err, fmt.Errorf("sending fail: %w", werr))
	}
	return err
}

func writeJSON(w *wire.Writer, t wire.Type, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return w.Write(t, b)
}
