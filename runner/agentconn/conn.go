package agentconn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/wire"
)

// destroyTimeout bounds one teardown, which runs on a context detached from
// the caller's.
const destroyTimeout = 30 * time.Second

// Hooks are what a Conn needs of the runtime that made its sandbox.
type Hooks struct {
	// Destroy (required) kills everything in the sandbox and removes it.
	// The Conn calls it once, on a context detached from the caller's and
	// bounded by destroyTimeout.
	Destroy func(ctx context.Context) error
	// OOMKills says how many times the kernel OOM-killed inside the
	// sandbox's memory cgroup, 0 when it cannot tell. It is called before
	// Destroy, while the cgroup exists. Nil means never.
	OOMKills func() int
	// Interactive gives the sandbox the host CPU treatment of a live
	// kernel (see ocispec.Interactive). OpenKernel calls it before the
	// kernel opens; a failure is logged, not fatal. Nil means nothing to do.
	Interactive func() error
	Logger      *slog.Logger
	// Egress are the sandbox's egress sockets (runner.Egress); all nil
	// when it has no network.
	Egress runner.EgressListeners
}

// Conn is the host end of one sandbox's agent: the frame channel to it,
// its diagnostic log and the runtime's hooks. It is the runner.Sandbox
// (and runner.KernelOpener) a runtime hands out.
type Conn struct {
	id    string
	hooks Hooks
	log   *slog.Logger

	toAgent    io.Closer
	w          *wire.Writer
	frames     chan wire.Frame // closed when the agent's stdout ends
	logs       *tail
	done       chan struct{} // closed once Destroy has started or the agent is gone
	doneOnce   sync.Once
	destroyed  sync.Once
	destroying atomic.Bool // Destroy was called: a kernel's end is expected
	destroyErr error
	used       atomic.Bool
}

var _ runner.Sandbox = (*Conn)(nil)

// New connects to the agent of sandbox id: toAgent carries frames to it,
// fromAgent its frames back, agentLog its diagnostic log (the agent's
// stdin, stdout and stderr). The Conn owns all three from now on.
func New(id string, toAgent io.WriteCloser, fromAgent, agentLog io.ReadCloser, h Hooks) *Conn {
	if h.Logger == nil {
		h.Logger = slog.New(slog.DiscardHandler)
	}
	if h.OOMKills == nil {
		h.OOMKills = func() int { return 0 }
	}
	s := &Conn{
		id:      id,
		hooks:   h,
		log:     h.Logger,
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

func (s *Conn) ID() string            { return s.id }
func (s *Conn) Done() <-chan struct{} { return s.done }

func (s *Conn) markDone() { s.doneOnce.Do(func() { close(s.done) }) }

// readFrames forwards the agent's frames until its stdout ends.
func (s *Conn) readFrames(f io.ReadCloser) {
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

// Handshake waits for a freshly started agent's hello, then pings it. The
// ping has a Python driver take its pre-run reseed now, as after a
// restore, so that the run skips it.
func (s *Conn) Handshake(ctx context.Context, language string) error {
	if err := s.awaitHello(ctx, language); err != nil {
		return fmt.Errorf("waiting for agent in %s: %w", s.id, err)
	}
	if err := s.Ping(ctx); err != nil {
		return fmt.Errorf("pinging agent in %s: %w", s.id, err)
	}
	return nil
}

// awaitHello waits for the agent's first frame.
func (s *Conn) awaitHello(ctx context.Context, language string) error {
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

// Ping checks that the agent answers: a restored agent says no hello, it
// was said before the checkpoint. Before answering, the agent has a Python
// driver reseed its random state: clones of one image must ping before
// their first request, or they would share it.
func (s *Conn) Ping(ctx context.Context) error {
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

// AgentLog is the end of the agent's diagnostic log, for errors.
func (s *Conn) AgentLog() string { return s.logs.String() }

// Destroy has the runtime kill and remove the sandbox, and closes the
// channel to its agent.
func (s *Conn) Destroy(ctx context.Context) error {
	s.destroyed.Do(func() {
		s.destroying.Store(true)
		s.markDone()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), destroyTimeout)
		defer cancel()
		err := s.hooks.Destroy(ctx)
		s.destroyErr = errors.Join(err, s.toAgent.Close())
		if err != nil {
			s.log.Warn("destroying sandbox", "sandbox_id", s.id, "err", err)
		}
	})
	return s.destroyErr
}

// EgressListener is the sandbox's egress proxy listener (runner.Egress);
// nil when it has no network.
func (c *Conn) EgressListener() net.Listener { return c.hooks.Egress.Proxy }

// EgressListeners are the sandbox's egress sockets (runner.Egress); all
// nil when it has no network.
func (c *Conn) EgressListeners() runner.EgressListeners { return c.hooks.Egress }

var _ runner.Egress = (*Conn)(nil)

// ExpectEnd says that the sandbox is about to stop on purpose (a
// checkpoint that stops it), so that its kernel's end is no loss to warn
// of; false takes that back when it did not stop.
func (c *Conn) ExpectEnd(on bool) { c.destroying.Store(on) }
