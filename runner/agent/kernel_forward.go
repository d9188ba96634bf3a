package agent

import (
	"crypto/subtle"
	"time"

	"github.com/paddock-dev/paddock/runner/wire"
)

// Forwarding the running cell's output to the host, and its end. Every
// forwarder holds the kernel's fwd while it checks the cell and writes, so
// that nothing of a cell follows its Done (see kernel).

// forwardRaw forwards what a child process wrote to the running cell. A
// rawStream calls it with its mu held.
func (p *kproc) forwardRaw(t wire.Type, b []byte) {
	k := p.k
	k.fwd.Lock()
	defer k.fwd.Unlock()
	k.mu.Lock()
	keep := 0
	if c := k.cell; c != nil && c.proc == p {
		keep = k.takeLocked(c, len(b))
	}
	k.mu.Unlock()
	if keep > 0 {
		k.forward(t, b[:keep])
	}
}

// onEvent forwards an event of the running cell.
func (p *kproc) onEvent(rep driverReport) {
	k := p.k
	k.fwd.Lock()
	defer k.fwd.Unlock()
	k.mu.Lock()
	c := k.cell
	if !k.ownsLocked(c, p, rep) || c.over {
		k.mu.Unlock()
		return
	}
	ev, ok := k.eventLocked(c, rep.Event)
	k.mu.Unlock()
	if ok {
		if err := k.sendJSON(wire.TypeEvent, ev); err != nil {
			k.log.Debug("forwarding an event", "err", err)
		}
	}
}

// onDone ends the running cell, after the raw output its processes wrote.
func (p *kproc) onDone(rep driverReport) {
	k := p.k
	p.holdStreams()
	defer p.releaseStreams()
	k.fwd.Lock()
	defer k.fwd.Unlock()
	k.mu.Lock()
	c := k.cell
	if !k.ownsLocked(c, p, rep) {
		k.mu.Unlock()
		return
	}
	k.endLocked(c)
	k.mu.Unlock()
	done := doneFrame(c, rep.Status, rep.Error)
	if err := k.sendJSON(wire.TypeDone, done); err != nil {
		k.log.Debug("sending done", "err", err)
	}
	k.log.Debug("cell ended", "id", c.id, "status", done.Status, "reason", done.Reason, "exec", time.Since(c.start))
}

// ownsLocked reports whether rep, an event or a done that p's driver
// channel carried, is of c, the running cell: of its interpreter and seq,
// with its key. Anything else is output the cell's code wrote on the
// channel, or late; it is dropped, and frames forged for c are counted.
func (k *kernel) ownsLocked(c *cell, p *kproc, rep driverReport) bool {
	if c == nil || c.proc != p || c.seq != rep.Seq {
		return false
	}
	if subtle.ConstantTimeCompare([]byte(rep.Key), []byte(c.key)) != 1 {
		c.foreign++
		if c.foreign == 1 {
			k.log.Warn("dropped a frame on the driver channel without the cell's key", "op", rep.Op, "seq", rep.Seq)
		}
		return false
	}
	return true
}

func (p *kproc) holdStreams() {
	for _, s := range p.streams {
		s.hold()
	}
}

func (p *kproc) releaseStreams() {
	for i := len(p.streams) - 1; i >= 0; i-- {
		p.streams[i].release()
	}
}

// lose reports the kernel lost: the running cell ends, then Lost.
func (k *kernel) lose(p *kproc, lost wire.Lost) {
	p.holdStreams()
	defer p.releaseStreams()
	k.fwd.Lock()
	defer k.fwd.Unlock()
	k.mu.Lock()
	if k.proc != p || p.retired.Load() {
		k.mu.Unlock()
		return
	}
	k.lost = true
	c := k.cell
	if c != nil {
		k.endLocked(c)
	}
	k.mu.Unlock()
	k.log.Warn("kernel lost", "message", lost.Message, "signal", lost.Signal)
	if c != nil {
		reason := c.abort
		if reason == "" {
			reason = lostCellReason(lost)
		}
		if err := k.sendJSON(wire.TypeDone, wire.Done{ID: c.id, ExecutionCount: c.count, Status: statusAborted, Reason: reason, Lost: true}); err != nil {
			k.log.Debug("sending done", "err", err)
		}
	}
	if err := k.sendJSON(wire.TypeLost, lost); err != nil {
		k.log.Debug("sending lost", "err", err)
	}
}
