package agent

import (
	"errors"
	"os"
	"sync"
	"syscall"

	"github.com/paddock-dev/paddock/runner/wire"
)

// drainLimit bounds what hold forwards: a child that never stops writing
// cannot keep a cell from ending.
const drainLimit = 1 << 20

// rawStream reads one output pipe of a kernel's interpreter for as long as
// the interpreter lives: what child processes write there goes to emit.
// Reading and emitting happen under mu, so that hold can forward what the
// pipe already holds and keep the stream quiet while a cell's Done goes
// out: output written before the cell ended always precedes its Done.
type rawStream struct {
	typ  wire.Type
	f    *os.File
	emit func(t wire.Type, b []byte) // called with mu held; b is not retained
	mu   sync.Mutex
	buf  []byte
}

func newRawStream(typ wire.Type, f *os.File, emit func(wire.Type, []byte)) *rawStream {
	return &rawStream{typ: typ, f: f, emit: emit, buf: make([]byte, chunkSize)}
}

// run emits rest, then everything read until the pipe ends or is closed.
func (r *rawStream) run(rest []byte) {
	rc, err := r.f.SyscallConn()
	if err != nil {
		return
	}
	if len(rest) > 0 {
		r.mu.Lock()
		r.emit(r.typ, rest)
		r.mu.Unlock()
	}
	for {
		end := false
		err := rc.Read(func(fd uintptr) bool {
			r.mu.Lock()
			defer r.mu.Unlock()
			n, err := readFD(fd, r.buf)
			switch {
			case n > 0:
				r.emit(r.typ, r.buf[:n])
			case errors.Is(err, syscall.EAGAIN):
				return false // wait until the pipe is readable
			default:
				end = true // EOF or a failure
			}
			return true
		})
		if err != nil || end {
			return
		}
	}
}

// hold emits what the pipe already holds, at most drainLimit bytes, and
// keeps the stream from emitting anything more until release.
func (r *rawStream) hold() {
	r.mu.Lock()
	rc, err := r.f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		for total := 0; total < drainLimit; {
			n, _ := readFD(fd, r.buf)
			if n <= 0 {
				return
			}
			r.emit(r.typ, r.buf[:n])
			total += n
		}
	})
}

func (r *rawStream) release() { r.mu.Unlock() }
