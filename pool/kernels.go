package pool

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

// Kernel-ready sandboxes. A template with Kernels > 0 also keeps that many
// sandboxes whose interpreter has already been turned into a kernel
// (runner.KernelOpener), so that a new session skips the conversion.
// They are a list apart: one-shot runs never see them, and a session takes
// one only when it asks for nothing a kernel must know when it opens (its
// own limits or environment). Each was made for this list alone, restored
// or started and reseeded like any pooled sandbox, and is leased once.
// They count as live sandboxes in MaxSandboxes and the MemoryBudget, and
// they are refilled only while the template's ready list is at its target:
// one-shot sandboxes come first.

// StartKernel is the StartKind of a sandbox taken with its kernel open.
const StartKernel StartKind = "kernel"

// kernelRefillPause is how long the replacement of a taken kernel-ready
// sandbox waits before it starts: the session that took it is about to
// run its first cell, and a restore or boot starting beside it took most
// of the machine's two cores here (its first execute went from 12-15 ms
// to 40-47 ms p50 under load).
const kernelRefillPause = 250 * time.Millisecond

// KernelLease is a sandbox handed out by AcquireKernel, with its kernel
// already open. Its holder must Release the Sandbox.
type KernelLease struct {
	Lease
	Kernel runner.Kernel
}

// kentry is a kernel-ready sandbox; taken is closed when it leaves the
// list.
type kentry struct {
	sb    runner.Sandbox
	k     runner.Kernel
	taken chan struct{}
}

// errNoKernels says a template's sandboxes cannot open kernels.
var errNoKernels = errors.New("the runtime's sandboxes cannot open kernels")

// AcquireKernel leases a kernel-ready sandbox of the named template
// without waiting. ok is false when none is ready, or when opts change the
// template's limits (kernel-ready sandboxes carry the template's): the
// caller then acquires a sandbox (AcquireWith) and opens its kernel itself.
func (m *Manager) AcquireKernel(template string, opts RunOptions) (l KernelLease, ok bool, err error) {
	begin := time.Now()
	tp, known := m.pools[template]
	if !known {
		return KernelLease{}, false, fmt.Errorf("acquiring %q: %w", template, ErrUnknownTemplate)
	}
	if err := m.available(tp); err != nil {
		return KernelLease{}, false, err
	}
	if _, custom := tp.specFor(opts); custom {
		return KernelLease{}, false, nil
	}
	var dead []runner.Sandbox
	m.mu.Lock()
	closed := m.closed
	for !closed && len(tp.kernels) > 0 {
		e := tp.kernels[0]
		tp.kernels[0] = nil
		tp.kernels = tp.kernels[1:]
		close(e.taken)
		if isDone(e.sb) || isLost(e.k) {
			dead = append(dead, e.sb)
			continue
		}
		tp.inUse++
		tp.kernelHits++
		tp.kernelTaken = true
		m.leases[e.sb.ID()] = tp
		l, ok = KernelLease{Lease: Lease{Sandbox: e.sb, Kind: StartKernel}, Kernel: e.k}, true
		break
	}
	if !ok && !closed && tp.tmpl.Kernels > 0 {
		tp.kernelMisses++
	}
	m.mu.Unlock()

	for _, d := range dead {
		m.log.Warn("kernel-ready sandbox was dead; skipping it", keyTemplate, tp.tmpl.Name, keySandboxID, d.ID())
		m.destroy(d)
	}
	if closed {
		return KernelLease{}, false, fmt.Errorf("acquiring %s kernel: %w", tp.tmpl.Name, ErrClosed)
	}
	tp.poke()
	l.Wait = time.Since(begin)
	return l, ok, nil
}

// fillKernels keeps tp's kernel-ready list at tmpl.Kernels until Close,
// retrying failures with the fillers' backoff. It stops for good if the
// runtime's sandboxes cannot open kernels.
func (m *Manager) fillKernels(tp *tpool) {
	defer m.fillers.Done()
	log := m.log.With(keyTemplate, tp.tmpl.Name)
	streak := 0
	for {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return
		}
		need := len(tp.kernels)+tp.kernelsStarting < tp.tmpl.Kernels &&
			len(tp.ready) >= tp.target && tp.snap != snapBuilding && m.budgetAllowsLocked(tp)
		pause := need && tp.kernelTaken
		if need {
			tp.kernelsStarting++
			tp.kernelTaken = false
			m.holdLocked()
		}
		m.mu.Unlock()

		if !need {
			select {
			case <-m.ctx.Done():
				return
			case <-tp.kwake:
			}
			continue
		}
		if pause && m.wait(m.ctx, kernelRefillPause) != nil {
			m.mu.Lock()
			tp.kernelsStarting--
			m.unholdLocked()
			m.mu.Unlock()
			return
		}

		e, err := m.makeKernel(tp)
		m.mu.Lock()
		tp.kernelsStarting--
		switch {
		case err != nil:
			m.unholdLocked()
		case m.closed:
			m.mu.Unlock()
			m.destroy(e.sb)
			return
		default:
			tp.kernels = append(tp.kernels, e)
		}
		closed := m.closed
		if err != nil && !closed {
			tp.failures++
		}
		m.mu.Unlock()
		if err == nil {
			go m.watchKernel(tp, e)
			streak = 0
			continue
		}
		if closed {
			return
		}
		if errors.Is(err, errNoKernels) {
			log.Warn("not keeping kernel-ready sandboxes", "error", err)
			return
		}
		streak++
		delay := m.backoff(streak)
		if streak == 1 {
			log.Warn("opening a kernel-ready sandbox failed; retrying with backoff", "error", err, "retry_in", delay)
		}
		if m.wait(m.ctx, delay) != nil {
			return
		}
	}
}

// makeKernel makes one sandbox for tp's kernel-ready list and opens its
// kernel. On failure nothing of it is left but the live count the caller
// holds.
func (m *Manager) makeKernel(tp *tpool) (*kentry, error) {
	sb, err := m.refill(tp)
	if err != nil {
		return nil, err
	}
	opener, ok := sb.(runner.KernelOpener)
	if !ok {
		m.destroyKeepingHold(sb)
		return nil, fmt.Errorf("%s sandbox: %w", tp.tmpl.Name, errNoKernels)
	}
	ctx, cancel := context.WithTimeout(m.ctx, m.cfg.StartTimeout)
	defer cancel()
	k, err := opener.OpenKernel(ctx, runner.KernelOptions{})
	if err != nil {
		m.destroyKeepingHold(sb)
		return nil, fmt.Errorf("opening a kernel in %s sandbox %s: %w", tp.tmpl.Name, sb.ID(), err)
	}
	return &kentry{sb: sb, k: k, taken: make(chan struct{})}, nil
}

// destroyKeepingHold destroys sb in the background without dropping a live
// count: its maker drops the one it holds.
func (m *Manager) destroyKeepingHold(sb runner.Sandbox) {
	m.mu.Lock()
	m.holdLocked()
	m.mu.Unlock()
	m.destroy(sb)
}

// watchKernel removes e from tp's kernel-ready list and destroys its
// sandbox if the sandbox or its kernel dies while waiting; it returns once
// e is taken.
func (m *Manager) watchKernel(tp *tpool, e *kentry) {
	select {
	case <-e.taken:
		return
	case <-e.sb.Done():
	case <-e.k.Lost():
	}
	m.mu.Lock()
	removed := removeEntry(&tp.kernels, e)
	if removed {
		close(e.taken)
	}
	m.mu.Unlock()
	if !removed {
		return
	}
	m.log.Warn("kernel-ready sandbox died; replacing it", keyTemplate, tp.tmpl.Name, keySandboxID, e.sb.ID())
	m.destroy(e.sb)
	tp.poke()
}

// dropKernelsLocked empties tp's kernel-ready list for Close and returns
// the sandboxes to destroy.
func (tp *tpool) dropKernelsLocked() []runner.Sandbox {
	var drop []runner.Sandbox
	for _, e := range tp.kernels {
		close(e.taken)
		drop = append(drop, e.sb)
	}
	tp.kernels = nil
	return drop
}

// kernelMemoryLocked is the memory held by tp's kernel-ready sandboxes,
// made or being made.
func (tp *tpool) kernelMemoryLocked() int64 {
	return int64(len(tp.kernels)+tp.kernelsStarting) * tp.tmpl.Spec.Limits.MemoryBytes
}

// pokeKernels wakes tp's kernel filler without blocking.
func (tp *tpool) pokeKernels() {
	select {
	case tp.kwake <- struct{}{}:
	default:
	}
}

func isLost(k runner.Kernel) bool {
	select {
	case <-k.Lost():
		return true
	default:
		return false
	}
}
