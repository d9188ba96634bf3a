package agent

import (
	"errors"
	"io"
	"os"
	"syscall"
	"unsafe"
)

// The agent's frames pass through non-blocking descriptors, read and
// written in system calls made raw: a Go system call made the ordinary way
// wakes the runtime's monitor thread when it sleeps, and the monitor then
// polls every 20 µs for the rest of the round trip. Under gVisor each of
// its sleeps is a system call of its own, with a switch of threads; a
// kernel cell's round trip woke it twice and paid for about ten of them.
// A raw call on a non-blocking descriptor never blocks, so nothing is lost
// without the monitor: when a call would block, the goroutine waits in Go's
// poller.

// readFD reads the non-blocking descriptor fd once.
func readFD(fd uintptr, b []byte) (int, error) { return rawIO(syscall.SYS_READ, fd, b) }

// writeFD writes to the non-blocking descriptor fd once.
func writeFD(fd uintptr, b []byte) (int, error) { return rawIO(syscall.SYS_WRITE, fd, b) }

// rawIO makes the read or write system call trap on fd and b, again if a
// signal interrupted it.
func rawIO(trap, fd uintptr, b []byte) (int, error) {
	var p unsafe.Pointer
	if len(b) > 0 {
		p = unsafe.Pointer(&b[0])
	}
	for {
		n, _, e := syscall.RawSyscall(trap, fd, uintptr(p), uintptr(len(b)))
		switch {
		case e == syscall.EINTR:
			continue
		case e != 0:
			return -1, e
		}
		return int(n), nil
	}
}

// quietFile reads and writes a non-blocking file with raw system calls,
// waiting in Go's poller when a call would block. Its deadlines are the
// file's.
type quietFile struct {
	f  *os.File
	rc syscall.RawConn
}

// Quiet returns f read and written with raw system calls when f is
// non-blocking and pollable, else f itself.
func Quiet(f *os.File) io.ReadWriter {
	rc, err := f.SyscallConn()
	if err != nil {
		return f
	}
	pollable := false
	if rc.Read(func(fd uintptr) bool {
		fl, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		pollable = e == 0 && fl&syscall.O_NONBLOCK != 0
		return true
	}) != nil || !pollable {
		return f
	}
	return &quietFile{f: f, rc: rc}
}

func (q *quietFile) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var n int
	var rerr error
	err := q.rc.Read(func(fd uintptr) bool {
		n, rerr = readFD(fd, b)
		return !errors.Is(rerr, syscall.EAGAIN)
	})
	switch {
	case err != nil:
		return 0, err
	case rerr != nil:
		return 0, &os.PathError{Op: "read", Path: q.f.Name(), Err: rerr}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (q *quietFile) Write(b []byte) (int, error) {
	done := 0
	for done < len(b) {
		var n int
		var werr error
		err := q.rc.Write(func(fd uintptr) bool {
			n, werr = writeFD(fd, b[done:])
			return !errors.Is(werr, syscall.EAGAIN)
		})
		switch {
		case err != nil:
			return done, err
		case werr != nil:
			return done, &os.PathError{Op: "write", Path: q.f.Name(), Err: werr}
		}
		done += n
	}
	return done, nil
}
