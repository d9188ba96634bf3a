package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/paddock-dev/paddock/runner/wire"
)

// DefaultMaxOutput caps a stream whose cap the request leaves at zero.
const DefaultMaxOutput = 1 << 20

// drainGrace is how long the agent waits, once the program has exited, for
// its output pipes to reach EOF before it kills whatever still holds them
// (a grandchild left running in the background).
const drainGrace = 250 * time.Millisecond

// stopGrace is how long the agent keeps reading after that kill.
const stopGrace = 100 * time.Millisecond

// run executes the request in payload and describes how it ended. A
// runFailure error means no program ran.
func (s *session) run(ctx context.Context, payload []byte) (wire.Exit, error) {
	var req wire.Run
	if err := json.Unmarshal(payload, &req); err != nil {
		return wire.Exit{}, runFailure{badRequest: true, err: fmt.Errorf("decoding run request: %w", err)}
	}
	if err := checkRun(req); err != nil {
		return wire.Exit{}, runFailure{badRequest: true, err: err}
	}
	if err := s.files.Write(req.Files); err != nil {
		return wire.Exit{}, runFailure{badRequest: true, err: err}
	}
	if s.interp.hasExited() {
		return wire.Exit{}, runFailure{err: fmt.Errorf("%w: %s", ErrInterpreterGone, describeStatus(s.interp.status))}
	}
	// Files written just now need the import system's caches dropped, which
	// the driver does along with its reseed.
	fresh := s.fresh && len(req.Files) == 0
	body, err := encodeDriverFrame(driverRequest{Op: opRun, Code: req.Code, Args: req.Args, Env: req.Env, Fresh: fresh})
	if err != nil {
		return wire.Exit{}, runFailure{err: fmt.Errorf("encoding driver request: %w", err)}
	}

	end := &ender{kill: s.killAll}
	probe := s.agent.limitProbe(s.reaper, s.interp.pid)
	limits := [2]int64{outputLimit(req.MaxStdout), outputLimit(req.MaxStderr)}
	for i, p := range s.pumps {
		p.start <- sink{
			limit: limits[i],
			send:  func(b []byte) error { return s.w.Write(p.typ, b) },
			over: func() {
				probe.take() // before the kill, as the program left the limits
				end.end(reasonOutputLimit)
			},
		}
	}
	start := time.Now()
	// fd 3 stays open after the request: the agent acknowledges each hint
	// on it once it has read the limits, and the driver waits for that, so
	// that the program's end does not change the limits before they are
	// read (see interpreter.hints). It is closed when the program is over.
	delivered := soon(len(body), func() { s.interp.ctl.Write(body) })
	defer s.interp.ctl.Close()
	hints := s.interp.hints(probe.read, func() {
		<-delivered
		s.interp.ctl.Write([]byte{1})
	})
	soon(len(req.Stdin), func() { deliver(s.interp.stdin, req.Stdin) })
	stopTimer := func() bool { return false }
	if req.TimeoutMS > 0 {
		timer := time.AfterFunc(time.Duration(req.TimeoutMS)*time.Millisecond, func() {
			probe.take() // before the kill: a fork bomb still forks
			end.end(reasonTimeout)
		})
		stopTimer = timer.Stop
	}
	defer stopTimer()
	// The program's end is the interpreter's own: the agent reaps it and
	// its wait status alone gives the exit code and the reason. Nothing
	// the program writes, on fd 4 or elsewhere, can change them.
	select {
	case <-ctx.Done():
		return wire.Exit{}, ctx.Err()
	case <-s.interp.exited:
	}
	status := s.interp.status
	exec := time.Since(start)
	stopTimer() // the program is over: from here on only output can end it
	s.interp.ctl.Close()
	// The limit state only explains a failure; reading it costs several
	// milliseconds under gVisor, so a clean exit skips it.
	ended, hint, atHint := unknownState, "", unknownState
	if status.Signaled() || status.ExitStatus() != 0 || end.why() != "" {
		ended = probe.take()
		hint, atHint = hints.first(lateHintGrace)
	}

	res := s.drain()
	s.interp.stdin.Close()
	for _, r := range res {
		if r.err != nil {
			return wire.Exit{}, fmt.Errorf("forwarding output: %w", r.err)
		}
	}
	// Every user process is dead by now: the files stay as they are.
	if err := s.sendOutputs(req); err != nil {
		return wire.Exit{}, err
	}
	e := exitFrame(status, end.why(), res[0], res[1], exec)
	e.Reason = s.heapReason(e.Reason)
	seen := mergeStates(ended, atHint)
	e.Reason = limitReason(e.Reason, hint, seen)
	e.LimitsReached = seen.reached()
	return e, nil
}

// lateHintGrace bounds the wait for fd 4 to end once a failed program is
// seen to have exited. The wait ends at once when fd 4 closes; only a
// forked child still holding it open makes it last.
const lateHintGrace = 100 * time.Millisecond

// drain waits for the output streams to end, kills every remaining user
// process, and stops reading shortly after.
func (s *session) drain() [2]pumpResult {
	return drainStreams([2]*os.File{s.interp.stdout, s.interp.stderr},
		[2]<-chan pumpResult{s.pumps[0].done, s.pumps[1].done}, s.killAll)
}

// drainStreams waits, at most drainGrace, for the pumps reading streams to
// end with their results on done, then calls kill, and stops the reads
// stopGrace later, for a process kill did not reach that holds a stream.
func drainStreams(streams [2]*os.File, done [2]<-chan pumpResult, kill func()) [2]pumpResult {
	var res [2]pumpResult
	// Most programs have closed their streams by the time their exit is
	// seen (the drivers close them before they exit): then no goroutine
	// nor timer is needed to wait for them. Each pump sends its one result
	// on a buffered channel that nothing else reads.
	if len(done[0]) == 1 && len(done[1]) == 1 {
		res[0], res[1] = <-done[0], <-done[1]
		kill()
		return res
	}
	all := make(chan struct{})
	go func() {
		for i := range done {
			res[i] = <-done[i]
		}
		close(all)
	}()
	select {
	case <-all:
	case <-time.After(drainGrace):
	}
	kill()
	select {
	case <-all:
	case <-time.After(stopGrace):
		now := time.Now()
		for _, f := range streams {
			f.SetReadDeadline(now)
		}
		<-all
	}
	return res
}

func (s *session) killAll() {
	if err := s.interp.kill.killAll(); err != nil {
		s.agent.log.Error("killing user processes", "err", err)
	}
}

// soon runs write, which writes n bytes to a fresh pipe, and returns a
// channel closed once it is done. Bytes that fit the empty pipe whole
// (pipeAtomic) are written before it returns, as such a write never waits
// on the reader: under gVisor a goroutine started for it costs a thread
// wake, a few hundred microseconds of a warm run. More are written by a
// goroutine, as the reader may take them in pieces.
func soon(n int, write func()) <-chan struct{} {
	done := make(chan struct{})
	if n <= pipeAtomic {
		write()
		close(done)
		return done
	}
	go func() {
		defer close(done)
		write()
	}()
	return done
}

// deliver writes b to f and closes it. A reader that went away is not an
// error: the program just did not read.
func deliver(f *os.File, b []byte) {
	if len(b) > 0 {
		f.Write(b)
	}
	f.Close()
}

func outputLimit(n int64) int64 {
	if n == 0 {
		return DefaultMaxOutput
	}
	return n
}

// checkRun rejects limits and strings the interpreter cannot take.
func checkRun(req wire.Run) error {
	if req.TimeoutMS < 0 || req.MaxStdout < 0 || req.MaxStderr < 0 || req.MaxOutputBytes < 0 || req.MaxOutputFiles < 0 {
		return fmt.Errorf("negative timeout or output cap: %w", ErrBadRequest)
	}
	for _, p := range req.Outputs {
		if err := checkPattern(p); err != nil {
			return fmt.Errorf("output %w", err)
		}
	}
	for _, a := range req.Args {
		if strings.ContainsRune(a, 0) {
			return fmt.Errorf("argument %q contains NUL: %w", a, ErrBadRequest)
		}
	}
	return checkEnv(req.Env)
}

// checkEnv rejects variables the interpreter's environment cannot hold.
func checkEnv(env map[string]string) error {
	for k, v := range env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
			return fmt.Errorf("environment variable %q: %w", k, ErrBadRequest)
		}
	}
	return nil
}
