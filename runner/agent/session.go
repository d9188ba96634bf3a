package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/paddock-dev/paddock/runner/agent/workspace"
	"github.com/paddock-dev/paddock/runner/wire"
)

// usedMessage is the Fail message for any Run after the first.
const usedMessage = "sandbox already used"

// session serves the host's frames after Hello: one run, then refusals; or
// a kernel and its requests.
type session struct {
	agent  *Agent
	w      *wire.Writer
	files  workspace.Dir
	reaper *reaper
	interp *interpreter // the current interpreter: a kernel's restart replaces it
	pumps  [2]*pump
	used   bool
	kernel *kernel // set once the host asked for a kernel
	// fresh is set once the driver has reseeded on a ping (see refresh).
	fresh bool
}

type frameOrErr struct {
	f   wire.Frame
	err error
}

// serveFrames handles frames until in ends (nil) or fails. Each frame is
// handled on the goroutine that read it, so that a request is served on
// the thread that its read woke, with no hand-over to another: under
// gVisor every wake of another thread costs the Sentry a switch, and a
// kernel's cell pays for each one in its round trip. The end of ctx stops
// the loop between frames, as before it began.
func (s *session) serveFrames(ctx context.Context, in io.Reader) error {
	var mu sync.Mutex // held while a frame is handled
	stopped := false
	done := make(chan error, 1)
	go func() {
		r := wire.NewReader(in)
		for {
			f, err := r.Read()
			mu.Lock()
			if stopped {
				mu.Unlock()
				return
			}
			switch {
			case errors.Is(err, io.EOF):
				s.agent.log.Info("host closed the channel")
				done <- nil
			case err != nil:
				done <- fmt.Errorf("reading frame: %w", err)
			default:
				err = s.handle(ctx, f)
				if err != nil {
					done <- err
				}
			}
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		mu.Lock()
		stopped = true
		mu.Unlock()
		return ctx.Err()
	}
}

// handle answers one frame; an error means the host can no longer be served.
func (s *session) handle(ctx context.Context, f wire.Frame) error {
	if f.Type == wire.TypePing {
		if err := s.refresh(); err != nil {
			return err
		}
		if err := s.w.Write(wire.TypePing, f.Payload); err != nil {
			return fmt.Errorf("answering ping: %w", err)
		}
		return nil
	}
	if s.kernel != nil {
		return s.kernel.handle(ctx, f)
	}
	if f.Type == wire.TypeKernel {
		return s.openKernel(ctx, f.Payload)
	}
	if f.Type != wire.TypeRun {
		return s.fail(false, fmt.Sprintf("unexpected %c frame", f.Type))
	}
	if s.used {
		return s.fail(false, usedMessage)
	}
	s.used = true
	exit, err := s.run(ctx, f.Payload)
	var rf runFailure
	if errors.As(err, &rf) {
		s.agent.log.Warn("run refused", "err", rf.err, "bad_request", rf.badRequest)
		return s.failRun(rf)
	}
	if err != nil {
		return err
	}
	// The host waits for the exit frame, not for the log line: it goes first.
	if err := writeJSON(s.w, wire.TypeExit, exit); err != nil {
		return fmt.Errorf("sending exit: %w", err)
	}
	s.agent.log.Info("run ended", "reason", exit.Reason, "exit_code", exit.ExitCode, "exec_ns", exit.ExecNS)
	return nil
}

// reseedTimeout bounds the driver's answer to a reseed request.
const reseedTimeout = 5 * time.Second

// refresh has a Python driver that still waits for its first request
// reseed now. The host pings a sandbox right after restoring it from a
// snapshot and before handing it out, so a clone's reseed (4-8 ms of a
// warm run here) happens while the sandbox waits in the pool rather than on
// the request path. A restored agent may carry fresh over from before the
// checkpoint; that is harmless only because every restore pings before any
// request, and the ping's reseed precedes its answer. Node's random state
// cannot be reseeded, and Node is never snapshotted: nothing to do.
func (s *session) refresh() error {
	if s.used || s.kernel != nil || s.agent.cfg.Language != LanguagePython || s.interp.hasExited() {
		return nil
	}
	frame, err := encodeDriverFrame(driverRequest{Op: opReseed})
	if err != nil {
		return fmt.Errorf("encoding reseed request: %w", err)
	}
	if _, err := s.interp.ctl.Write(frame); err != nil {
		return fmt.Errorf("asking the driver to reseed: %w", err)
	}
	if err := s.interp.report.SetReadDeadline(time.Now().Add(reseedTimeout)); err != nil {
		return fmt.Errorf("reading the driver's reseed answer: %w", err)
	}
	rep, err := newDriverReaderSize(s.interp.report, reportBuffer).next()
	s.interp.report.SetReadDeadline(time.Time{})
	if err != nil || rep.Op != opReseeded {
		return fmt.Errorf("the driver did not confirm its reseed (op %q): %v", rep.Op, err)
	}
	s.fresh = true
	return nil
}

// close ends the kernel, if any, and kills every user process.
func (s *session) close() error {
	if s.kernel != nil {
		s.kernel.shutdown()
	}
	return s.interp.close()
}

func (s *session) fail(badRequest bool, msg string) error {
	return s.sendFail(wire.Fail{BadRequest: badRequest, Message: msg})
}

// failRun reports a refused run. A request file that could not be written
// carries its path and the reason's code; one that failed for no reason
// the request explains is the agent's own failure.
func (s *session) failRun(rf runFailure) error {
	f := wire.Fail{BadRequest: rf.badRequest, Message: rf.err.Error()}
	var ff *workspace.FileFailure
	if errors.As(rf.err, &ff) {
		f.Path, f.Code = ff.Path, fileErrCode(ff.Err)
		f.BadRequest = f.Code != ""
	}
	return s.sendFail(f)
}

func (s *session) sendFail(f wire.Fail) error {
	if err := writeJSON(s.w, wire.TypeFail, f); err != nil {
		return fmt.Errorf("sending fail: %w", err)
	}
	return nil
}

// runFailure is a run the agent refused or could not start: the host gets a
// Fail frame and the agent carries on.
type runFailure struct {
	badRequest bool
	err        error
}

func (f runFailure) Error() string { return f.err.Error() }
func (f runFailure) Unwrap() error { return f.err }
