package agentconn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/wire"
)

// kernel drives a sandbox whose agent runs in kernel mode. One goroutine
// (dispatch) reads every frame and routes it: acks to their waiting
// request, events and output to the running cell, a loss to everyone.
type kernel struct {
	s      *Conn
	nextID atomic.Uint64

	mu      sync.Mutex
	pending map[uint64]chan wire.Ack
	cell    *cell
	cmds    map[uint64]*command // commands in progress (kernel_command.go)

	lost     chan struct{}
	lostOnce sync.Once
	lostWhy  string
	// oom latches what the sandbox's memory cgroup said when the loss was
	// seen: it is read before anyone may release the sandbox, whose
	// deletion removes the cgroup and its counter.
	oom atomic.Bool
	// heapOOM: the agent saw the interpreter die of its heap ceiling.
	heapOOM atomic.Bool
}

// cell is the execution in progress.
type cell struct {
	id     uint64
	events func(runner.Event)
	done   chan wire.Done
	input  runner.InputFunc // nil: the cell may not read input
	ctx    context.Context  // ends when the cell does: its input requests' context
}

var (
	_ runner.KernelOpener = (*Conn)(nil)
	_ runner.Kernel       = (*kernel)(nil)
)

// requestTimeout bounds a request other than Execute; Restart starts a new
// interpreter and gets longer.
const (
	requestTimeout = 30 * time.Second
	restartTimeout = 2 * time.Minute
)

// OpenKernel turns the sandbox's pre-started interpreter into a kernel.
func (s *Conn) OpenKernel(ctx context.Context, opts runner.KernelOptions) (runner.Kernel, error) {
	k, err := s.startKernel()
	if err != nil {
		return nil, err
	}
	id := k.nextID.Add(1)
	if _, err := k.request(ctx, wire.TypeKernel, id, wire.KernelOpen{ID: id, Env: opts.Env}, requestTimeout); err != nil {
		return nil, fmt.Errorf("opening kernel in %s: %w", s.id, err)
	}
	return k, nil
}

// startKernel marks the sandbox used, gives it a live kernel's CPU
// treatment and starts routing its frames to a kernel.
func (s *Conn) startKernel() (*kernel, error) {
	if !s.used.CompareAndSwap(false, true) {
		return nil, runner.ErrUsed
	}
	if s.hooks.Interactive != nil {
		if err := s.hooks.Interactive(); err != nil {
			s.log.Warn("kernel keeps some of the batch CPU treatment", "sandbox_id", s.id, "error", err)
		}
	}
	k := &kernel{s: s, pending: map[uint64]chan wire.Ack{}, lost: make(chan struct{})}
	go k.dispatch()
	return k, nil
}

func (k *kernel) Lost() <-chan struct{} { return k.lost }

func (k *kernel) markLost(why string) {
	k.observeOOM()
	k.lostOnce.Do(func() {
		k.mu.Lock()
		k.lostWhy = why
		k.mu.Unlock()
		if k.s.destroying.Load() {
			// The session ended and its sandbox went with it.
			k.s.log.Debug("kernel ended with its sandbox", "sandbox_id", k.s.id, "why", why)
		} else {
			k.s.log.Warn("kernel lost", "sandbox_id", k.s.id, "why", why)
		}
		close(k.lost)
	})
}

// observeOOM latches whether the kernel OOM-killed in the sandbox's
// memory cgroup.
func (k *kernel) observeOOM() {
	if !k.oom.Load() && k.s.hooks.OOMKills() > 0 {
		k.oom.Store(true)
	}
}

func (k *kernel) isLost() bool {
	select {
	case <-k.lost:
		return true
	default:
		return false
	}
}

// dispatch routes frames until the agent's stdout ends.
func (k *kernel) dispatch() {
	for fr := range k.s.frames {
		switch fr.Type {
		case wire.TypeAck:
			var a wire.Ack
			if json.Unmarshal(fr.Payload, &a) != nil {
				continue
			}
			k.mu.Lock()
			ch := k.pending[a.ID]
			delete(k.pending, a.ID)
			k.mu.Unlock()
			if ch != nil {
				ch <- a
			}
		case wire.TypeEvent:
			var e wire.Event
			if json.Unmarshal(fr.Payload, &e) != nil {
				continue
			}
			k.emit(e.ID, toEvent(e))
		case wire.TypeStdout, wire.TypeStderr:
			stream := runner.Stdout
			if fr.Type == wire.TypeStderr {
				stream = runner.Stderr
			}
			k.emit(0, runner.Event{Type: runner.EventStream, Stream: stream, Text: string(fr.Payload)})
		case wire.TypeDone:
			var d wire.Done
			if json.Unmarshal(fr.Payload, &d) != nil {
				continue
			}
			if runner.Reason(d.Reason) == runner.ReasonKernelLost {
				k.observeOOM() // before the Lost frame that follows lets the sandbox go
			}
			k.mu.Lock()
			c := k.cell
			if c != nil && c.id == d.ID {
				k.cell = nil
			}
			k.mu.Unlock()
			if c != nil && c.id == d.ID {
				c.done <- d
			}
		case wire.TypeCommandOutput, wire.TypeCommandEnd:
			k.routeCommand(fr)
		case wire.TypeInputRequest:
			k.onInput(fr.Payload)
		case wire.TypeLost:
			var l wire.Lost
			_ = json.Unmarshal(fr.Payload, &l)
			k.heapOOM.Store(runner.Reason(l.Reason) == runner.ReasonOOM)
			k.markLost("interpreter died: " + l.Message)
		}
	}
	k.markLost("sandbox ended")
}

// emit hands an event to the running cell; id 0 matches any cell (raw
// output of child processes carries no ID).
func (k *kernel) emit(id uint64, e runner.Event) {
	k.mu.Lock()
	c := k.cell
	k.mu.Unlock()
	if c != nil && (id == 0 || id == c.id) && c.events != nil {
		c.events(e)
	}
}

// request sends a frame carrying id and waits for its ack.
func (k *kernel) request(ctx context.Context, t wire.Type, id uint64, msg any, timeout time.Duration) (wire.Ack, error) {
	if k.isLost() {
		return wire.Ack{}, runner.ErrKernelLost
	}
	payload, err := json.Marshal(msg)
	if err != nil {
		return wire.Ack{}, err
	}
	ch := make(chan wire.Ack, 1)
	k.mu.Lock()
	k.pending[id] = ch
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		delete(k.pending, id)
		k.mu.Unlock()
	}()
	if err := k.s.w.Write(t, payload); err != nil {
		return wire.Ack{}, fmt.Errorf("sending %c: %w", t, runner.ErrKernelLost)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case a := <-ch:
		return a, ackErr(a)
	case <-k.lost:
		return wire.Ack{}, runner.ErrKernelLost
	case <-timer.C:
		return wire.Ack{}, fmt.Errorf("agent did not answer %c in %s", t, timeout)
	case <-ctx.Done():
		return wire.Ack{}, ctx.Err()
	}
}

func ackErr(a wire.Ack) error {
	switch {
	case a.Error == "":
		return nil
	case a.Code != "":
		if kind, ok := fileErrorKind(a.Code); ok {
			return &runner.FileError{Kind: kind, Detail: a.Error}
		}
		return fmt.Errorf("agent answered with unknown file error code %q: %s", a.Code, a.Error)
	case a.BadRequest:
		return fmt.Errorf("%w: %s", runner.ErrBadRequest, a.Error)
	case a.NotFound:
		return fmt.Errorf("%w: %s", runner.ErrNotFound, a.Error)
	}
	return errors.New(a.Error)
}

func toEvent(e wire.Event) runner.Event {
	ev := runner.Event{
		Type:           runner.EventType(e.Type),
		Stream:         runner.Stream(e.Stream),
		Text:           e.Text,
		Data:           e.Data,
		Metadata:       e.Metadata,
		ExecutionCount: e.ExecutionCount,
		Transient:      e.Transient,
		Wait:           e.Wait,
	}
	if e.Error != nil {
		ev.Error = &runner.ExecError{Name: e.Error.Name, Value: e.Error.Value, Traceback: e.Error.Traceback}
	}
	return ev
}

var (
	_ runner.KernelAttacher = (*Conn)(nil)
	_ runner.Reseeder       = (*kernel)(nil)
)

// AttachKernel takes over the kernel that was open in this sandbox before
// it hibernated: the runtime restored it, and the agent still serves the
// kernel it had. The agent's answer carries the kernel's execution count.
func (s *Conn) AttachKernel(ctx context.Context) (runner.Kernel, int, error) {
	k, err := s.startKernel()
	if err != nil {
		return nil, 0, err
	}
	id := k.nextID.Add(1)
	a, err := k.request(ctx, wire.TypeKernel, id, wire.KernelOpen{ID: id, Attach: true}, requestTimeout)
	if err != nil {
		return nil, 0, fmt.Errorf("attaching to the kernel in %s: %w", s.id, err)
	}
	return k, a.Count, nil
}

// Reseed has the interpreter draw fresh random seeds.
func (k *kernel) Reseed(ctx context.Context) error {
	a, err := k.ask(ctx, wire.Introspect{Op: wire.OpReseed})
	switch {
	case errors.Is(err, runner.ErrBadRequest):
		return fmt.Errorf("%w: %w", runner.ErrCannotReseed, err)
	case err != nil:
		return err
	case a.Status != "reseeded":
		return fmt.Errorf("the interpreter did not confirm its reseed (%q)", a.Status)
	}
	return nil
}
