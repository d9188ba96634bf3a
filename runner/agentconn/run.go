package agentconn

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/wire"
)

// hostGrace is how long past the wall-time limit the host waits for the
// agent's own verdict before it destroys the sandbox itself.
const hostGrace = 2 * time.Second

// Run delivers req to the agent and collects output until the exit frame,
// the sandbox's death, the host deadline or ctx's end.
func (s *Conn) Run(ctx context.Context, req runner.RunRequest, out runner.OutputFunc) (runner.RunResult, error) {
	if !s.used.CompareAndSwap(false, true) {
		return runner.RunResult{}, runner.ErrUsed
	}
	select {
	case <-s.done:
		return runner.RunResult{}, fmt.Errorf("sandbox %s: %w", s.id, runner.ErrSandboxLost)
	default:
	}
	payload, err := json.Marshal(toWire(req))
	if err != nil {
		return runner.RunResult{}, fmt.Errorf("encoding run: %w", err)
	}
	start := time.Now()
	if err := s.w.Write(wire.TypeRun, payload); err != nil {
		return runner.RunResult{}, fmt.Errorf("sending run to %s: %w (%v)", s.id, runner.ErrSandboxLost, err)
	}
	deadline := time.NewTimer(req.Timeout + hostGrace)
	defer deadline.Stop()

	c := collector{maxOut: req.MaxStdout, maxErr: req.MaxStderr, out: out, files: newOutputs(req)}
	defer func() {
		if c.files.dropped > 0 {
			s.log.Warn("agent sent output files the run did not ask for", "sandbox_id", s.id, "dropped", c.files.dropped)
		}
	}()
	for {
		select {
		case <-ctx.Done():
			_ = s.Destroy(ctx)
			return runner.RunResult{}, ctx.Err()
		case <-deadline.C:
			// The agent did not end the run in time: kill by sandbox.
			_ = s.Destroy(ctx)
			return c.result(runner.ReasonTimeout, 137, time.Since(start)), nil
		case fr, ok := <-s.frames:
			if !ok {
				return c.result(s.deathReason(), 137, time.Since(start)), nil
			}
			switch fr.Type {
			case wire.TypeStdout:
				c.add(runner.Stdout, fr.Payload)
			case wire.TypeStderr:
				c.add(runner.Stderr, fr.Payload)
			case wire.TypeOutputFile:
				// Once: the agent cannot keep the run alive.
				if !c.files.begun && time.Until(start.Add(req.Timeout+hostGrace)) < outputGrace {
					deadline.Reset(outputGrace)
				}
				c.files.entry(fr.Payload)
			case wire.TypeOutputData:
				c.files.data(fr.Payload)
			case wire.TypeExit:
				var x wire.Exit
				if err := json.Unmarshal(fr.Payload, &x); err != nil {
					return runner.RunResult{}, fmt.Errorf("decoding exit from %s: %w", s.id, err)
				}
				res := c.result(s.exitReason(runner.Reason(x.Reason)), x.ExitCode, time.Since(start))
				res.StdoutTruncated = res.StdoutTruncated || x.StdoutTruncated
				res.StderrTruncated = res.StderrTruncated || x.StderrTruncated
				res.LimitsReached = x.LimitsReached
				return res, nil
			case wire.TypeFail:
				var f wire.Fail
				_ = json.Unmarshal(fr.Payload, &f)
				if kind, ok := fileErrorKind(f.Code); ok {
					return runner.RunResult{}, &runner.FileError{Op: runner.FileRunWrite, Path: f.Path, Kind: kind, Detail: f.Message}
				}
				if f.BadRequest {
					return runner.RunResult{}, fmt.Errorf("%w: %s", runner.ErrBadRequest, f.Message)
				}
				return runner.RunResult{}, fmt.Errorf("agent in %s failed: %s", s.id, f.Message)
			}
		}
	}
}

// exitReason refines the agent's verdict. The host OOM killer may kill
// one process of the sandbox's cgroup (under gVisor a systrap stub) rather
// than the whole sandbox; the program then dies of SIGKILL and the agent
// can only say "killed". The memory cgroup knows better.
func (s *Conn) exitReason(agent runner.Reason) runner.Reason {
	switch agent {
	case runner.ReasonKilled, runner.ReasonError, runner.ReasonPidsLimit, runner.ReasonDiskLimit:
	default:
		return agent
	}
	// Running out of memory is the root cause whatever else the program
	// ran into on its way down.
	if s.hooks.OOMKills() > 0 {
		return runner.ReasonOOM
	}
	return agent
}

// deathReason says why the sandbox died mid-run: the kernel's OOM killer
// (read from the sandbox's memory cgroup before it is deleted) or else.
func (s *Conn) deathReason() runner.Reason {
	if s.hooks.OOMKills() > 0 {
		return runner.ReasonOOM
	}
	s.log.Warn("sandbox died during run", "sandbox_id", s.id, "agent_log", s.logs.String())
	return runner.ReasonSandboxError
}

func toWire(req runner.RunRequest) wire.Run {
	files := make([]wire.File, len(req.Files))
	for i, f := range req.Files {
		files[i] = wire.File{Path: f.Path, Content: f.Content}
	}
	return wire.Run{
		Code:      req.Code,
		Files:     files,
		Stdin:     req.Stdin,
		Args:      req.Args,
		Env:       req.Env,
		TimeoutMS: req.Timeout.Milliseconds(),
		MaxStdout: req.MaxStdout,
		MaxStderr: req.MaxStderr,

		Outputs:        req.Outputs,
		MaxOutputBytes: req.MaxOutputBytes,
		MaxOutputFiles: req.MaxOutputFiles,
	}
}

// collector accumulates output up to the caps; the host never trusts the
// agent to have applied them.
type collector struct {
	maxOut, maxErr int64
	out            runner.OutputFunc
	stdout, stderr []byte
	truncOut       bool
	truncErr       bool
	files          *outputs
}

func (c *collector) add(stream runner.Stream, chunk []byte) {
	buf, limit, trunc := &c.stdout, c.maxOut, &c.truncOut
	if stream == runner.Stderr {
		buf, limit, trunc = &c.stderr, c.maxErr, &c.truncErr
	}
	if room := limit - int64(len(*buf)); int64(len(chunk)) > room {
		chunk = chunk[:max(room, 0)]
		*trunc = true
	}
	if len(chunk) == 0 {
		return
	}
	*buf = append(*buf, chunk...)
	if c.out != nil {
		c.out(stream, chunk)
	}
}

func (c *collector) result(reason runner.Reason, code int, exec time.Duration) runner.RunResult {
	res := runner.RunResult{
		Stdout: c.stdout, Stderr: c.stderr,
		ExitCode: code, Reason: reason,
		StdoutTruncated: c.truncOut, StderrTruncated: c.truncErr,
		Exec: exec,
	}
	res.Outputs, res.OutputsTruncated = c.files.result()
	return res
}
