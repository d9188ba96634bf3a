package agent

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"sync"
	"time"

	"github.com/paddock-dev/paddock/runner/wire"
)

// kernel serves a sandbox in kernel mode: the pre-started interpreter,
// turned into a kernel that keeps its state between cells, and the host's
// requests for it. The frame loop calls its handlers one at a time; the
// goroutines of its interpreter (kproc) forward the running cell's output
// and end it.
//
// Locks, always taken in this order: a rawStream's mu, fwd, mu. Whoever
// forwards a frame of the running cell holds fwd while it checks the cell
// and writes, so that nothing of a cell can follow its Done.
type kernel struct {
	s   *session
	env map[string]string // KernelOpen's, for every interpreter
	log *slog.Logger

	fwd sync.Mutex
	mu  sync.Mutex
	// Guarded by mu.
	proc  *kproc              // the interpreter; nil while a restart replaces it
	cell  *cell               // the running cell
	count int                 // the execution count
	seq   uint64              // the last cell's number on the driver channel
	lost  bool                // Lost was sent; no cell runs until a restart
	cmds  map[uint64]*command // the running commands, by request ID
	asks  map[uint64]*ask     // the questions the interpreter has not answered, by number
	rid   uint64              // the last question's number
	// The cells' one deadline timer and when it fires; zero when it is
	// not armed (see armDeadlineLocked).
	deadline   *time.Timer
	deadlineAt time.Time
	// keys draws the cells' keys: seeded from crypto/rand when the kernel
	// opens (after any restore), it spares each cell a getrandom(2), which
	// would wake the Go runtime's monitor thread (see quietio.go).
	keys *mrand.ChaCha8
}

// openKernel turns the pre-started interpreter into a kernel and replies
// to the KernelOpen request in payload.
func (s *session) openKernel(ctx context.Context, payload []byte) error {
	var req wire.KernelOpen
	if err := json.Unmarshal(payload, &req); err != nil {
		return s.fail(true, fmt.Sprintf("decoding kernel request: %v", err))
	}
	if req.Attach {
		return s.ack(wire.Ack{ID: req.ID, Error: "no kernel is open in this sandbox", NotFound: true})
	}
	if s.used {
		return s.ack(wire.Ack{ID: req.ID, Error: usedMessage})
	}
	s.used = true
	if err := checkEnv(req.Env); err != nil {
		return s.ack(wire.Ack{ID: req.ID, Error: err.Error(), BadRequest: true})
	}
	var seed [32]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return s.fail(true, fmt.Sprintf("seeding the cells' keys: %v", err))
	}
	k := &kernel{s: s, env: req.Env, log: s.agent.log, cmds: map[uint64]*command{}, asks: map[uint64]*ask{}, keys: mrand.NewChaCha8(seed)}
	s.kernel = k
	if s.interp.hasExited() {
		err := fmt.Errorf("%w: the interpreter ended before the kernel opened (%s)", ErrKernelLost, describeStatus(s.interp.status))
		return k.failStart(req.ID, err)
	}
	if err := k.start(ctx, s.interp, s.pumps, s.fresh); err != nil {
		return k.failStart(req.ID, err)
	}
	k.log.Info("kernel open", "pid", s.interp.pid)
	return s.ack(wire.Ack{ID: req.ID})
}

// start adopts a pre-started interpreter and makes it the kernel's. fresh
// says the interpreter reseeded after the sandbox's last restore.
func (k *kernel) start(ctx context.Context, interp *interpreter, pumps [2]*pump, fresh bool) error {
	p := k.adopt(interp, pumps)
	k.mu.Lock()
	k.proc, k.lost, k.count = p, false, 0
	k.mu.Unlock()
	return p.open(ctx, k.env, fresh)
}

// failStart answers request id with err and, unless its interpreter's end
// already did, reports the kernel lost.
func (k *kernel) failStart(id uint64, err error) error {
	k.log.Error("kernel start failed", "err", err)
	k.mu.Lock()
	p, reported := k.proc, k.lost
	k.proc, k.lost = nil, true
	if p != nil {
		p.retired.Store(true)
	}
	k.mu.Unlock()
	if p != nil {
		p.stop()
	}
	if werr := k.s.ack(wire.Ack{ID: id, Error: err.Error()}); werr != nil {
		return werr
	}
	if reported {
		return nil
	}
	return k.sendJSON(wire.TypeLost, wire.Lost{Message: err.Error()})
}

// handle answers one frame in kernel mode; an error means the host can no
// longer be served.
func (k *kernel) handle(ctx context.Context, f wire.Frame) error {
	switch f.Type {
	case wire.TypeExecute:
		return k.execute(f)
	case wire.TypeInterrupt:
		return k.interrupt(f)
	case wire.TypeRestart:
		return k.restart(ctx, f)
	case wire.TypeFileWrite:
		return k.writeFile(f)
	case wire.TypeFileRead:
		return k.readFile(f)
	case wire.TypeFileList:
		return k.listFiles(f)
	case wire.TypeCommand:
		return k.command(f)
	case wire.TypeCommandKill:
		return k.killCommand(f)
	case wire.TypeIntrospect:
		return k.ask(f)
	case wire.TypeInputReply:
		return k.inputReply(f)
	case wire.TypeKernel:
		var req wire.KernelOpen
		if ok, err := k.decode(f, &req); !ok {
			return err
		}
		if req.Attach {
			return k.attach(req.ID)
		}
		return k.s.ack(wire.Ack{ID: req.ID, Error: "kernel already open"})
	case wire.TypeRun:
		return k.s.fail(false, usedMessage)
	}
	return k.s.fail(false, fmt.Sprintf("unexpected %c frame", f.Type))
}

// decode reads f's JSON payload into v. A payload it cannot read is
// refused with a Fail frame, as it has no ID to answer: ok is false, and err
// is set only when the Fail could not be sent.
func (k *kernel) decode(f wire.Frame, v any) (ok bool, err error) {
	if jerr := json.Unmarshal(f.Payload, v); jerr != nil {
		return false, k.s.fail(true, fmt.Sprintf("decoding %c request: %v", f.Type, jerr))
	}
	return true, nil
}

// interrupt stops the running cell, if any, with SIGINT.
func (k *kernel) interrupt(f wire.Frame) error {
	var req wire.Request
	if ok, err := k.decode(f, &req); !ok {
		return err
	}
	k.mu.Lock()
	if c := k.cell; c != nil {
		c.interrupted = true
		k.interruptLocked(c)
	}
	k.mu.Unlock()
	return k.s.ack(wire.Ack{ID: req.ID})
}

// restart kills the interpreter and every user process and starts a fresh
// interpreter in kernel mode. A running cell ends as interrupted.
func (k *kernel) restart(ctx context.Context, f wire.Frame) error {
	var req wire.Request
	if ok, err := k.decode(f, &req); !ok {
		return err
	}
	k.fwd.Lock()
	k.mu.Lock()
	old, c := k.proc, k.cell
	if old != nil {
		old.retired.Store(true)
	}
	if c != nil {
		k.endLocked(c)
	}
	k.proc = nil
	asks := k.takeAsksLocked()
	k.mu.Unlock()
	var err error
	if c != nil {
		err = k.sendJSON(wire.TypeDone, wire.Done{ID: c.id, ExecutionCount: c.count, Status: statusAborted, Reason: reasonInterrupted})
	}
	k.fwd.Unlock()
	if err != nil {
		return err
	}
	if err := k.failAsks(asks, "the interpreter restarted before it answered"); err != nil {
		return err
	}
	k.endCommands()
	if old != nil {
		old.stop()
	}
	interp, pumps, err := k.s.agent.prestart(ctx, k.s.reaper)
	if err != nil {
		return k.failStart(req.ID, err)
	}
	k.s.interp, k.s.pumps = interp, pumps
	if err := k.start(ctx, interp, pumps, false); err != nil {
		return k.failStart(req.ID, err)
	}
	k.log.Info("kernel restarted", "pid", interp.pid)
	return k.s.ack(wire.Ack{ID: req.ID})
}

// shutdown stops the interpreter and the commands for good: the host has
// gone.
func (k *kernel) shutdown() {
	k.endCommands()
	k.mu.Lock()
	p := k.proc
	if p != nil {
		p.retired.Store(true)
	}
	k.mu.Unlock()
	if p != nil {
		p.stop()
	}
}

// attach answers a host that restored this sandbox from a hibernated
// image and asks whether its kernel is still here: yes, with the
// execution count, unless the interpreter was lost. The cells' keys are
// drawn afresh, so that sandboxes forked from one image do not share them.
func (k *kernel) attach(id uint64) error {
	var seed [32]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return k.s.ack(wire.Ack{ID: id, Error: fmt.Sprintf("seeding the cells' keys: %v", err)})
	}
	k.mu.Lock()
	k.keys = mrand.NewChaCha8(seed)
	lost, noProc, count := k.lost, k.proc == nil, k.count
	k.mu.Unlock()
	if lost || noProc {
		return k.s.ack(wire.Ack{ID: id, Error: "the kernel's interpreter is gone"})
	}
	return k.s.ack(wire.Ack{ID: id, Count: count})
}

// newKeyLocked draws a cell's key, 128 bits as rand.Text spells them.
func (k *kernel) newKeyLocked() string {
	var b [16]byte
	_, _ = k.keys.Read(b[:])
	return base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:])
}

// sendJSON writes one frame to the host.
func (k *kernel) sendJSON(t wire.Type, v any) error {
	if err := writeJSON(k.s.w, t, v); err != nil {
		return fmt.Errorf("sending %c frame: %w", t, err)
	}
	return nil
}

// forward writes one frame of output to the host. The host going away is
// noticed by the frame loop; here it is only logged.
func (k *kernel) forward(t wire.Type, b []byte) {
	if err := k.s.w.Write(t, b); err != nil {
		k.log.Debug("forwarding output", "err", err)
	}
}

func (s *session) ack(a wire.Ack) error {
	if err := writeJSON(s.w, wire.TypeAck, a); err != nil {
		return fmt.Errorf("sending ack: %w", err)
	}
	return nil
}
