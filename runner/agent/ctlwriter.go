package agent

import (
	"log/slog"
	"os"
	"sync"
)

// pipeAtomic is the size up to which a pipe write is all or nothing.
const pipeAtomic = 4096

// ctlQueue bounds the requests waiting for the driver to read them.
const ctlQueue = 64

// ctlWriter writes frames to the driver's request pipe, in order, and never
// blocks its caller: a driver that does not read cannot stall the frame
// loop. A small frame with nothing ahead of it is written at once; the rest
// wait for a goroutine that writes them one after the other.
type ctlWriter struct {
	f   *os.File
	log *slog.Logger

	mu      sync.Mutex
	queue   [][]byte
	writing bool // a goroutine is writing the queue
}

func (w *ctlWriter) deliver(frame []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.writing && len(w.queue) == 0 && len(frame) <= pipeAtomic && w.tryWrite(frame) {
		return
	}
	if len(w.queue) >= ctlQueue {
		w.log.Warn("the driver does not read its requests: one dropped")
		return
	}
	w.queue = append(w.queue, frame)
	if !w.writing {
		w.writing = true
		go w.drain()
	}
}

// tryWrite writes frame, at most pipeAtomic bytes, if the pipe has room for
// it now.
func (w *ctlWriter) tryWrite(frame []byte) bool {
	rc, err := w.f.SyscallConn()
	if err != nil {
		return false
	}
	var n int
	rc.Write(func(fd uintptr) bool {
		n, err = writeFD(fd, frame)
		return true // one attempt: never wait
	})
	return n == len(frame)
}

func (w *ctlWriter) drain() {
	for {
		w.mu.Lock()
		if len(w.queue) == 0 {
			w.writing = false
			w.mu.Unlock()
			return
		}
		frame := w.queue[0]
		w.queue = w.queue[1:]
		w.mu.Unlock()
		if _, err := w.f.Write(frame); err != nil {
			w.log.Debug("writing to the driver", "err", err)
		}
	}
}
