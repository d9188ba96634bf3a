package agent

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/paddock-dev/paddock/runner/wire"
)

// Cell statuses and the reasons a kernel adds to the run's, spelled as
// runner spells them.
const (
	statusOK          = "ok"
	statusError       = "error"
	statusAborted     = "aborted"
	reasonInterrupted = "interrupted"
	reasonKernelLost  = "kernel_lost"
)

// Event types, as in Jupyter's messages.
const (
	eventStream        = "stream"
	eventDisplayData   = "display_data"
	eventExecuteResult = "execute_result"
	eventError         = "error"
	eventUpdateDisplay = "update_display_data"
	eventClearOutput   = "clear_output"
)

// Statuses the driver ends a cell with.
const (
	driverOK          = "ok"
	driverError       = "error"
	driverInterrupted = "interrupted"
)

// cell is the running cell. Its fields are guarded by the kernel's mu.
//
// What the agent reports of a cell is what it kept or saw itself: the
// count, the timers and why it stopped the cell (abort), whether anyone
// interrupted it, the interpreter's death. The driver's frames run in the
// same process as the user's code, which can write frames of its own on
// the report channel: they are output, and only an event or a done that
// carries the cell's key (sent to the driver with the cell, new for each)
// belongs to the cell. A done can still say ok or error, which the cell's
// code decides anyway (it can catch its own exception); it cannot say
// timeout, output_limit, oom or kernel_lost, nor change the count, nor
// claim an interrupt nobody sent.
type cell struct {
	id          uint64 // the host's Execute ID
	seq         uint64 // its number on the driver channel
	key         string // what the driver's frames of this cell carry
	count       int    // its execution count
	proc        *kproc // the interpreter it runs in
	quota       quota  // stream bytes, events and raw output together
	over        bool   // past the quota: nothing more is forwarded
	abort       string // why the agent stopped it (timeout, output_limit); the first wins
	interrupted bool   // the host interrupted it
	foreign     int    // frames dropped for want of the cell's key
	timers      []*time.Timer
	deadline    time.Time // its time limit; zero for none (see armDeadlineLocked)
	start       time.Time // when the Execute frame was read
	stdin       bool      // the host answers input requests
	asking      bool      // an input request waits for the host's reply
}

// execute starts the cell in f, or refuses it with an error event and a
// Done.
func (k *kernel) execute(f wire.Frame) error {
	start := time.Now()
	var req wire.Execute
	if ok, err := k.decode(f, &req); !ok {
		return err
	}
	k.mu.Lock()
	count := k.count
	switch {
	case k.lost || k.proc == nil:
		k.mu.Unlock()
		return k.refuse(req.ID, count, reasonKernelLost, nil)
	case k.cell != nil:
		k.mu.Unlock()
		return k.refuse(req.ID, count, reasonError, &wire.ExecError{Name: "Busy", Value: "another cell is running", Traceback: []string{}})
	}
	if err := checkExecute(req); err != nil {
		k.mu.Unlock()
		return k.refuse(req.ID, count, reasonError, &wire.ExecError{Name: "BadRequest", Value: err.Error(), Traceback: []string{}})
	}
	if strings.TrimSpace(req.Code) == "" {
		// As in Jupyter, an empty cell runs nothing and counts nothing.
		k.mu.Unlock()
		return k.sendJSON(wire.TypeDone, wire.Done{ID: req.ID, ExecutionCount: count, Status: statusOK, Reason: reasonOK})
	}
	k.count++
	k.seq++
	c := &cell{id: req.ID, seq: k.seq, key: k.newKeyLocked(), count: k.count, proc: k.proc, quota: quota{limit: outputLimit(req.MaxOutput)}, start: start, stdin: req.Stdin}
	k.cell = c
	if req.TimeoutMS > 0 {
		k.armDeadlineLocked(c, time.Duration(req.TimeoutMS)*time.Millisecond)
	}
	k.mu.Unlock()
	frame, err := encodeDriverFrame(driverRequest{Op: opExecute, Seq: c.seq, Key: c.key, Count: c.count, Code: req.Code, Env: req.Env, Stdin: req.Stdin})
	if err != nil {
		k.mu.Lock()
		k.endLocked(c)
		k.mu.Unlock()
		return k.refuse(req.ID, c.count, reasonError, &wire.ExecError{Name: "BadRequest", Value: err.Error(), Traceback: []string{}})
	}
	c.proc.deliver(frame)
	return nil
}

// refuse answers an Execute that does not run: an error event when e is
// set, then Done.
func (k *kernel) refuse(id uint64, count int, reason string, e *wire.ExecError) error {
	if e != nil {
		if err := k.sendJSON(wire.TypeEvent, wire.Event{ID: id, Type: eventError, Error: e}); err != nil {
			return err
		}
	}
	return k.sendJSON(wire.TypeDone, wire.Done{ID: id, ExecutionCount: count, Status: statusAborted, Reason: reason, Error: e})
}

func checkExecute(req wire.Execute) error {
	if req.TimeoutMS < 0 || req.MaxOutput < 0 {
		return fmt.Errorf("negative timeout or output cap: %w", ErrBadRequest)
	}
	return checkEnv(req.Env)
}

// armDeadlineLocked sets c's time limit to d from now. The kernel has one
// deadline timer for all its cells, which is left running when a cell
// ends: a later cell whose limit falls after it only notes its own, and
// the timer, when it fires, ends the running cell if its limit has passed
// or waits again for the rest. Arming a timer on every cell would have the
// Go runtime wake its network poller thread to re-sleep on the earlier
// deadline (under gVisor, a thread woken and put back to sleep on every
// cell's round trip); back-to-back cells arm it about once per limit.
func (k *kernel) armDeadlineLocked(c *cell, d time.Duration) {
	c.deadline = time.Now().Add(d)
	if k.deadlineAt.IsZero() || k.deadlineAt.After(c.deadline) {
		if k.deadline == nil {
			k.deadline = time.AfterFunc(d, k.onDeadline)
		} else {
			k.deadline.Reset(d)
		}
		k.deadlineAt = c.deadline
	}
}

// onDeadline is the deadline timer's firing: it stops the running cell if
// its limit has passed, and otherwise waits for what is left of it.
func (k *kernel) onDeadline() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.deadlineAt = time.Time{}
	c := k.cell
	if c == nil || c.deadline.IsZero() {
		return
	}
	if left := time.Until(c.deadline); left > 0 {
		k.deadline.Reset(left)
		k.deadlineAt = c.deadline
		return
	}
	k.abortLocked(c, reasonTimeout)
}

// abortLocked interrupts c for reason and kills the interpreter if the cell
// has not ended InterruptGraceMS later.
func (k *kernel) abortLocked(c *cell, reason string) {
	if c.abort != "" {
		return
	}
	c.abort = reason
	k.interruptLocked(c)
	c.timers = append(c.timers, time.AfterFunc(wire.InterruptGraceMS*time.Millisecond, func() { k.overdue(c) }))
}

// sigintRepeat is how often a Node cell that has not stopped is sent
// SIGINT again after an interrupt.
const sigintRepeat = 50 * time.Millisecond

// interruptLocked asks c's interpreter to stop c. Node's vm drops a SIGINT
// that lands after the driver took the cell up but before the cell's
// script armed its watchdog, and a synchronous loop never lets the driver
// read the interrupt frame; so Node is sent the signal again every
// sigintRepeat while c runs, for at most InterruptGraceMS. Between cells
// the signal is dropped, and the next cell cannot start before c's end
// is seen here.
func (k *kernel) interruptLocked(c *cell) {
	c.proc.interrupt(c.seq)
	if !c.proc.node() {
		return
	}
	until := time.Now().Add(wire.InterruptGraceMS * time.Millisecond)
	var again func()
	again = func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.cell != c || time.Now().After(until) {
			return
		}
		c.proc.sigint()
		c.timers = append(c.timers, time.AfterFunc(sigintRepeat, again))
	}
	c.timers = append(c.timers, time.AfterFunc(sigintRepeat, again))
}

// overdue kills the interpreter of a cell that outlived its interrupt.
func (k *kernel) overdue(c *cell) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cell == c {
		c.proc.killFor(fmt.Sprintf("the cell did not stop within %d ms of its %s interrupt", wire.InterruptGraceMS, c.abort))
	}
}

// endLocked makes c no longer the running cell.
func (k *kernel) endLocked(c *cell) {
	k.cell = nil
	for _, t := range c.timers {
		t.Stop()
	}
}

// takeLocked counts n more output bytes of c and returns how many of them
// may be forwarded. Past the quota the cell is stopped.
func (k *kernel) takeLocked(c *cell, n int) int {
	if c.over {
		return 0
	}
	keep, over := c.quota.take(n)
	if over {
		c.over = true
		k.abortLocked(c, reasonOutputLimit)
	}
	return keep
}

// eventLocked turns the driver's event ev of cell c into the host's, and
// reports whether it is forwarded.
func (k *kernel) eventLocked(c *cell, ev wire.Event) (wire.Event, bool) {
	ev.ID = c.id
	ev.ExecutionCount = 0
	switch ev.Type {
	case eventStream:
		if ev.Stream != "stdout" && ev.Stream != "stderr" {
			return ev, false
		}
		if keep := k.takeLocked(c, len(ev.Text)); keep < len(ev.Text) {
			ev.Text = cutUTF8(ev.Text, keep)
		}
		return ev, ev.Text != ""
	case eventExecuteResult:
		ev.ExecutionCount = c.count
		ev.Transient, ev.Wait = nil, false
	case eventDisplayData, eventUpdateDisplay:
		ev.Wait = false
		if ev.Type == eventUpdateDisplay && displayID(ev.Transient) == "" {
			return ev, false
		}
	case eventError:
		ev.Transient, ev.Wait = nil, false
	case eventClearOutput:
		ev.Transient, ev.Data, ev.Metadata = nil, nil, nil
	default:
		return ev, false
	}
	return ev, true
}

// displayID is the display_id of an event's transient dict, or "".
func displayID(transient map[string]any) string {
	id, _ := transient["display_id"].(string)
	return id
}

// cutUTF8 returns s cut to at most n bytes, at a character boundary.
func cutUTF8(s string, n int) string {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// doneFrame says how cell c ended: the driver's status, unless the agent
// stopped the cell itself (abort). The driver says "interrupted" for a
// cell stopped by SIGINT; unless the host interrupted it, the cell's own
// code did that, which is an error.
func doneFrame(c *cell, driverStatus string, e *wire.ExecError) wire.Done {
	d := wire.Done{ID: c.id, ExecutionCount: c.count}
	switch {
	case c.abort != "":
		d.Status, d.Reason = statusAborted, c.abort
	case driverStatus == driverOK:
		d.Status, d.Reason = statusOK, reasonOK
	case driverStatus == driverError:
		d.Status, d.Reason, d.Error = statusError, reasonError, e
	case driverStatus == driverInterrupted && c.interrupted:
		d.Status, d.Reason = statusAborted, reasonInterrupted
	case driverStatus == driverInterrupted:
		d.Status, d.Reason = statusError, reasonError
		d.Error = &wire.ExecError{Name: "KeyboardInterrupt", Value: "the cell interrupted itself (no interrupt was sent)", Traceback: []string{}}
	default:
		d.Status, d.Reason = statusAborted, reasonError
	}
	return d
}
