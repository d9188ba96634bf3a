package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/paddock-dev/paddock/runner/wire"
)

// stopWait bounds each wait of stop: for the killed interpreter to be
// reaped, then for its goroutines to end.
const stopWait = 2 * time.Second

// kproc is one interpreter in kernel mode: the driver's reports, the raw
// output of its children, and how it ends. An interpreter that ends while
// it is the kernel's, without being retired, is the loss of the kernel.
type kproc struct {
	k       *kernel
	interp  *interpreter
	streams [2]*rawStream

	ctl       *ctlWriter
	ready     chan error // one value: nil once the driver is a kernel, else why not
	readyOnce sync.Once
	retired   atomic.Bool            // replaced or shut down: its end is no loss
	why       atomic.Pointer[string] // why the agent killed it
	reports   chan struct{}          // closed when the report channel has ended
	wg        sync.WaitGroup
}

// adopt takes over a pre-started interpreter and the output pipes its
// pumps read.
func (k *kernel) adopt(interp *interpreter, pumps [2]*pump) *kproc {
	p := &kproc{k: k, interp: interp, ctl: &ctlWriter{f: interp.ctl, log: k.log}, ready: make(chan error, 1), reports: make(chan struct{})}
	// A kernel reads no input: stdin is at its end.
	if err := interp.stdin.Close(); err != nil {
		k.log.Warn("closing the kernel's stdin", "err", err)
	}
	for i, pu := range pumps {
		rs := newRawStream(pu.typ, pu.f, p.forwardRaw)
		p.streams[i] = rs
		p.wg.Add(1)
		pu.handover <- func(rest []byte) {
			defer p.wg.Done()
			rs.run(rest)
		}
	}
	p.wg.Add(2)
	go func() {
		defer p.wg.Done()
		p.readReports()
	}()
	go func() {
		defer p.wg.Done()
		p.watch()
	}()
	return p
}

// open asks the driver to become a kernel and waits until it has.
func (p *kproc) open(ctx context.Context, env map[string]string, fresh bool) error {
	frame, err := encodeDriverFrame(driverRequest{Op: opKernel, Env: env, Source: kernelSource(p.k.s.agent.cfg.Language), Introspect: kernelIntrospect(p.k.s.agent.cfg.Language), Fresh: fresh})
	if err != nil {
		return fmt.Errorf("encoding kernel request: %w", err)
	}
	p.deliver(frame)
	select {
	case err := <-p.ready:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// deliver sends frame to the driver, in order, without blocking.
func (p *kproc) deliver(frame []byte) { p.ctl.deliver(frame) }

func (p *kproc) signalReady(err error) {
	p.readyOnce.Do(func() { p.ready <- err })
}

// interrupt stops cell seq. Python's kernel is told on its channel which
// cell to stop, and signals its own main thread if that cell runs, or
// stops it as it starts: a SIGINT from here could land before the
// interpreter took the cell up, and be lost. Node's kernel gets both the
// SIGINT and the frame: node's vm drops a SIGINT that comes as a script's
// synchronous part ends, and an awaited cell is past it.
func (p *kproc) interrupt(seq uint64) {
	if p.interp.hasExited() {
		return
	}
	if p.node() {
		p.sigint()
	}
	if frame, err := encodeDriverFrame(driverRequest{Op: opInterrupt, Seq: seq}); err == nil {
		p.deliver(frame)
	}
}

// node says whether the interpreter is Node's.
func (p *kproc) node() bool {
	return p.k != nil && p.k.s.agent.cfg.Language == LanguageNode
}

// sigint sends the interpreter SIGINT, unless it has exited.
func (p *kproc) sigint() {
	if p.interp.hasExited() {
		return
	}
	if err := syscall.Kill(p.interp.pid, syscall.SIGINT); err != nil && !errors.Is(err, syscall.ESRCH) {
		p.k.log.Warn("interrupting the kernel", "err", err)
	}
}

// kill kills every user process, the interpreter included.
func (p *kproc) kill() {
	if err := p.interp.kill.killAll(); err != nil {
		p.k.log.Error("killing user processes", "err", err)
	}
}

// killFor kills every user process and remembers why, for Lost.
func (p *kproc) killFor(why string) {
	p.why.CompareAndSwap(nil, &why)
	p.kill()
}

// stop retires the interpreter, kills every user process and waits, a
// bounded time, until the interpreter's goroutines are done.
func (p *kproc) stop() {
	p.retired.Store(true)
	if err := p.interp.close(); err != nil {
		p.k.log.Warn("stopping the kernel's interpreter", "err", err)
	}
	done := make(chan struct{})
	go func() {
		p.wg.Wait()
		close(done)
	}()
	timeout := time.After(stopWait)
	select {
	case <-p.interp.exited:
	case <-timeout:
	}
	select {
	case <-done:
	case <-timeout:
		p.k.log.Warn("kernel interpreter goroutines still running")
	}
}

// readReports handles the driver's reports until the channel ends, which
// ends the interpreter.
func (p *kproc) readReports() {
	defer close(p.reports)
	r := newDriverReaderSize(Quiet(p.interp.report), 64<<10)
	// Reports that arrive together (a cell's result and its end, say) have
	// their frames written to the host together: one write from the
	// sandbox and one wake of the host's reader instead of one per frame.
	// Frames are held only while the next report is already read in full,
	// so that nothing waits on the driver.
	w := p.k.s.w
	held := false
	for {
		if held && !r.ready() {
			held = false
			p.release(w)
		}
		rep, err := r.next()
		if err != nil {
			if held {
				held = false
				p.release(w)
			}
			p.end(err)
			return
		}
		if !held && r.ready() {
			held = true
			w.Hold()
		}
		switch rep.Op {
		case opReady:
			p.signalReady(nil)
		case opEvent:
			p.onEvent(rep)
		case opDone:
			p.onDone(rep)
		case opInput:
			p.onInput(rep)
		case opAnswer:
			p.onAnswer(rep)
		}
	}
}

// release writes the frames held for a burst of reports. A host that went
// away is noticed by the frame loop; here it is only logged.
func (p *kproc) release(w *wire.Writer) {
	if err := w.Release(); err != nil {
		p.k.log.Debug("forwarding held frames", "err", err)
	}
}

// watch notices the interpreter's death even while something else holds
// its report channel open: it kills every user process, then stops reading
// reports shortly after.
func (p *kproc) watch() {
	select {
	case <-p.reports:
		return
	case <-p.interp.exited:
	}
	p.kill()
	select {
	case <-p.reports:
	case <-time.After(drainGrace):
		p.interp.report.SetReadDeadline(time.Now())
	}
}

// end handles the end of the report channel: the interpreter is dead or
// killed now, and unless it was retired, the kernel is lost.
func (p *kproc) end(err error) {
	if errors.Is(err, ErrDriverProtocol) {
		p.killFor(fmt.Sprintf("the interpreter broke the kernel's channel (%v)", err))
	} else {
		p.kill()
	}
	select {
	case <-p.interp.exited:
	case <-time.After(stopWait):
	}
	lost := p.lostReport()
	p.signalReady(fmt.Errorf("%w: %s", ErrKernelLost, lost.Message))
	if !p.retired.Load() {
		p.k.lose(p, lost)
	}
}

// lostReport says how the interpreter ended.
func (p *kproc) lostReport() wire.Lost {
	var l wire.Lost
	select {
	case <-p.interp.exited:
		ws := p.interp.status
		if ws.Signaled() {
			l.Signal = int(ws.Signal())
		}
		l.Message = "the interpreter ended: " + describeStatus(ws)
		l.Reason = p.deathReason()
	default:
		l.Message = "the interpreter stopped answering"
	}
	if why := p.why.Load(); why != nil {
		l.Message = *why + "; " + l.Message
	}
	return l
}
