package agent

import (
	"crypto/rand"
	"crypto/subtle"
	"fmt"

	"github.com/paddock-dev/paddock/runner/wire"
)

// Questions about code (complete, inspect, is_complete) and a cell's reads
// of input: the agent passes them between the host and the interpreter.
//
// A question goes to the interpreter with a number and a key of its own;
// only an answer with both ends it (the cell's code can write on the
// report channel too, and must not answer in the interpreter's name). A
// question still open when the interpreter is replaced is answered with
// an error. An input request must carry the running cell's key, and one at
// a time is passed on.

// maxAsks bounds the questions waiting for the interpreter: a Node kernel
// answers none while a synchronous cell runs.
const maxAsks = 64

// maxPrompt bounds an input prompt passed to the host.
const maxPrompt = 64 << 10

// stdinRefused is what a read of input raises when the host does not
// allow input, in Jupyter's words.
const stdinRefused = "raw_input was called, but this frontend does not support input requests."

// ask is a question the interpreter has not answered.
type ask struct {
	id   uint64 // the host's request
	key  string
	proc *kproc
}

// ask passes the host's question in f to the interpreter.
func (k *kernel) ask(f wire.Frame) error {
	var req wire.Introspect
	if ok, err := k.decode(f, &req); !ok {
		return err
	}
	switch {
	case req.Op != wire.OpComplete && req.Op != wire.OpInspect && req.Op != wire.OpIsComplete && req.Op != wire.OpReseed:
		return k.s.ack(wire.Ack{ID: req.ID, Error: fmt.Sprintf("unknown question %q", req.Op), BadRequest: true})
	case req.CursorPos < 0 || req.DetailLevel < 0:
		return k.s.ack(wire.Ack{ID: req.ID, Error: "negative cursor position or detail level", BadRequest: true})
	}
	k.mu.Lock()
	p := k.proc
	switch {
	case k.lost || p == nil:
		k.mu.Unlock()
		return k.s.ack(wire.Ack{ID: req.ID, Error: "the kernel has no interpreter"})
	case req.Op == wire.OpReseed && p.node():
		k.mu.Unlock()
		return k.s.ack(wire.Ack{ID: req.ID, Error: "node's random generator cannot be reseeded", BadRequest: true})
	case len(k.asks) >= maxAsks:
		k.mu.Unlock()
		return k.s.ack(wire.Ack{ID: req.ID, Error: fmt.Sprintf("%d questions already wait for the interpreter", maxAsks)})
	}
	k.rid++
	rid := k.rid
	a := &ask{id: req.ID, key: rand.Text(), proc: p}
	k.asks[rid] = a
	k.mu.Unlock()
	frame, err := encodeDriverFrame(driverRequest{Op: req.Op, RID: rid, Key: a.key, Code: req.Code, CursorPos: req.CursorPos, DetailLevel: req.DetailLevel})
	if err != nil {
		k.mu.Lock()
		delete(k.asks, rid)
		k.mu.Unlock()
		return k.s.ack(wire.Ack{ID: req.ID, Error: err.Error(), BadRequest: true})
	}
	p.deliver(frame)
	return nil
}

// onAnswer hands the interpreter's answer to the host.
func (p *kproc) onAnswer(rep driverReport) {
	k := p.k
	k.mu.Lock()
	a := k.asks[rep.RID]
	if a == nil || a.proc != p || subtle.ConstantTimeCompare([]byte(rep.Key), []byte(a.key)) != 1 {
		k.mu.Unlock()
		return
	}
	delete(k.asks, rep.RID)
	k.mu.Unlock()
	ack := wire.Ack{ID: a.id, Answer: rep.Answer}
	if rep.Answer == nil {
		ack.Error = "the interpreter could not answer"
	}
	if err := k.s.ack(ack); err != nil {
		k.log.Debug("sending an answer", "err", err)
	}
}

// takeAsksLocked empties the open questions and returns them.
func (k *kernel) takeAsksLocked() map[uint64]*ask {
	asks := k.asks
	k.asks = map[uint64]*ask{}
	return asks
}

// failAsks answers every question in asks with the error why.
func (k *kernel) failAsks(asks map[uint64]*ask, why string) error {
	for _, a := range asks {
		if err := k.s.ack(wire.Ack{ID: a.id, Error: why}); err != nil {
			return err
		}
	}
	return nil
}

// onInput passes the running cell's input request to the host, or, when
// the host does not allow input, refuses it at once.
func (p *kproc) onInput(rep driverReport) {
	k := p.k
	k.fwd.Lock()
	defer k.fwd.Unlock()
	k.mu.Lock()
	c := k.cell
	if !k.ownsLocked(c, p, rep) || c.over || c.asking {
		k.mu.Unlock()
		return
	}
	if !c.stdin {
		k.mu.Unlock()
		p.replyInput(c.seq, "", stdinRefused)
		return
	}
	c.asking = true
	k.mu.Unlock()
	prompt := rep.Prompt
	if len(prompt) > maxPrompt {
		prompt = cutUTF8(prompt, maxPrompt)
	}
	if err := k.sendJSON(wire.TypeInputRequest, wire.InputRequest{ID: c.id, Prompt: prompt, Password: rep.Password}); err != nil {
		k.log.Debug("sending an input request", "err", err)
	}
}

// inputReply passes the host's answer in f to the cell that asked; an
// answer nobody waits for is dropped.
func (k *kernel) inputReply(f wire.Frame) error {
	var r wire.InputReply
	if ok, err := k.decode(f, &r); !ok {
		return err
	}
	k.mu.Lock()
	c := k.cell
	if c == nil || c.id != r.ID || !c.asking {
		k.mu.Unlock()
		return nil
	}
	c.asking = false
	p, seq := c.proc, c.seq
	k.mu.Unlock()
	if r.Error == "" && len(r.Value) > wire.MaxInput {
		r.Value, r.Error = "", fmt.Sprintf("an input of %d bytes is over the limit of %d", len(r.Value), wire.MaxInput)
	}
	p.replyInput(seq, r.Value, r.Error)
	return nil
}

// replyInput gives cell seq's read its value, or makes it fail with msg.
func (p *kproc) replyInput(seq uint64, value, msg string) {
	frame, err := encodeDriverFrame(driverRequest{Op: opInputRep, Seq: seq, Value: value, Error: msg})
	if err != nil {
		p.k.log.Warn("encoding an input reply", "err", err)
		return
	}
	p.deliver(frame)
}
