package runsc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/wire"
)

// destroyTimeout bounds one teardown, which runs on a context detached from
// the caller's.
const destroyTimeout = 30 * time.Second

// sandbox is one gVisor container and the host ends of its agent's stdio.
type sandbox struct {
	rt     *Runtime
	id     string
	bundle string

	toAgent    *os.File
	w          *wire.Writer
	frames     chan wire.Frame // closed when the agent's stdout ends
	logs       *tail
	done       chan struct{} // closed once Destroy has started or the agent is gone
	doneOnce   sync.Once
	destroyed  sync.Once
	destroyErr error
	used       atomic.Bool
}

var _ runner.Sandbox = (*sandbox)(nil)

func newSandbox(rt *Runtime, id, bundle string, toAgent, fromAgent, agentLog *os.File) *sandbox {
	s := &sandbox{
		rt:      rt,
		id:      id,
		bundle:  bundle,
		toAgent: toAgent,
		w:       wire.NewWriter(toAgent),
		frames:  make(chan wire.Frame, 64),
		logs:    newTail(8 << 10),
		done:    make(chan struct{}),
	}
	go s.readFrames(fromAgent)
	go s.logs.drain(agentLog)
	return s
}

func (s *sandbox) ID() string            { return s.id }
func (s *sandbox) Done() <-chan struct{} { return s.done }

func (s *sandbox) markDone() { s.doneOnce.Do(func() { close(s.done) }) }

// readFrames forwards the agent's frames until its stdout ends.
func (s *sandbox) readFrames(f *os.File) {
	defer f.Close()
	defer close(s.frames)
	r := wire.NewReader(f)
	for {
		fr, err := r.Read()
		if err != nil {
			s.markDone()
			return
		}
		select {
		case s.frames <- fr:
		case <-s.done: // destroyed: nobody reads any more
			return
		}
	}
}

// awaitHello waits for the agent's first frame.
func (s *sandbox) awaitHello(ctx context.Context, language string) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case fr, ok := <-s.frames:
		if !ok {
			return fmt.Errorf("agent exited before hello: %s", s.logs.String())
		}
		if fr.Type == wire.TypeFail {
			var f wire.Fail
			_ = json.Unmarshal(fr.Payload, &f)
			return fmt.Errorf("agent failed to start: %s", f.Message)
		}
		if fr.Type != wire.TypeHello {
			return fmt.Errorf("agent sent %c before hello", fr.Type)
		}
		var h wire.Hello
		if err := json.Unmarshal(fr.Payload, &h); err != nil {
			return fmt.Errorf("decoding hello: %w", err)
		}
		if h.Version != wire.Version || h.Language != language {
			return fmt.Errorf("agent speaks version %d for %q, want %d for %q", h.Version, h.Language, wire.Version, language)
		}
		return nil
	}
}

// ping checks that the agent answers: a restored agent says no hello, it
// was said before the checkpoint. Before answering, the agent has a Python
// driver reseed its random state: clones of one image must ping before
// their first request, or they would share it.
func (s *sandbox) ping(ctx context.Context) error {
	if err := s.w.Write(wire.TypePing, []byte(s.id)); err != nil {
		return fmt.Errorf("sending ping: %w", err)
	}
	select {
	case <-ctx.Done():
		return fmt.Errorf("%w; agent log: %s", ctx.Err(), s.logs.String())
	case fr, ok := <-s.frames:
		switch {
		case !ok:
			return fmt.Errorf("agent exited: %s", s.logs.String())
		case fr.Type != wire.TypePing || string(fr.Payload) != s.id:
			return fmt.Errorf("agent answered a ping with %c", fr.Type)
		}
		return nil
	}
}

// Destroy kills the container and removes it with its bundle.
func (s *sandbox) Destroy(ctx context.Context) error {
	s.destroyed.Do(func() {
		s.markDone()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), destroyTimeout)
		defer cancel()
		err := s.rt.runsc.Delete(ctx, s.id, DeleteOpts{Force: true})
		s.destroyErr = errors.Join(err, s.toAgent.Close(), os.RemoveAll(s.bundle))
		if err != nil {
			s.rt.log.Warn("destroying sandbox", "sandbox_id", s.id, "err", err)
		}
	})
	return s.destroyErr
}
