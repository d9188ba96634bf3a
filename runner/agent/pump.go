package agent

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"

	"github.com/paddock-dev/paddock/runner/wire"
)

// chunkSize bounds one output frame.
const chunkSize = 32 << 10

// warmTail is how much warm-up output is kept to explain a failed start.
const warmTail = 4 << 10

// sink is where a pump forwards a run's output.
type sink struct {
	limit int64                    // bytes allowed on this stream
	send  func(chunk []byte) error // writes one frame; chunk is not retained
	over  func()                   // called once when the stream passes limit
}

// pumpResult is how a stream ended.
type pumpResult struct {
	truncated bool
	err       error // a failure to send; reading stops at EOF, deadline or close
}

// pump reads one output stream of the interpreter: first the warm-up
// output up to the driver's ready marker, which is dropped, then, once the
// run starts, the program's output, which is forwarded under the cap, or,
// in kernel mode, hands the stream over.
type pump struct {
	typ   wire.Type
	f     *os.File
	tail  []byte          // last warm-up bytes, for diagnostics
	ready chan error      // one value: nil at the marker, else why not
	start chan sink       // the run's sink
	done  chan pumpResult // one value once the run's stream is over
	// handover, instead of a run, gives the stream to a kernel: the pump
	// calls the function with the bytes read after the marker and is done.
	handover chan func(rest []byte)
}

func newPump(typ wire.Type, f *os.File) *pump {
	return &pump{
		typ:      typ,
		f:        f,
		ready:    make(chan error, 1),
		start:    make(chan sink, 1),
		done:     make(chan pumpResult, 1),
		handover: make(chan func([]byte), 1),
	}
}

// run is the pump's goroutine; it returns early when ctx is done.
func (p *pump) run(ctx context.Context) {
	rest, err := scanReady(p.f, p.keepTail)
	p.ready <- err
	if err != nil {
		return
	}
	var s sink
	select {
	case <-ctx.Done():
		return
	case s = <-p.start:
	case take := <-p.handover:
		take(rest)
		return
	}
	p.done <- p.forward(s, rest)
}

// keepTail remembers the last warmTail bytes of warm-up output.
func (p *pump) keepTail(b []byte) {
	p.tail = append(p.tail, b...)
	if n := len(p.tail); n > warmTail {
		p.tail = append(p.tail[:0], p.tail[n-warmTail:]...)
	}
}

// forward sends rest and then everything read until EOF, at most s.limit
// bytes in all. Past the limit it keeps reading and drops the bytes.
func (p *pump) forward(s sink, rest []byte) pumpResult {
	q := quota{limit: s.limit}
	var res pumpResult
	emit := func(b []byte) {
		keep, over := q.take(len(b))
		if keep > 0 && res.err == nil {
			res.err = s.send(b[:keep])
		}
		if over && !res.truncated {
			res.truncated = true
			s.over()
		}
	}
	if len(rest) > 0 {
		emit(rest)
	}
	buf := make([]byte, chunkSize)
	for {
		n, err := p.f.Read(buf)
		if n > 0 {
			emit(buf[:n])
		}
		if err != nil {
			if !isEndOfRead(err) && res.err == nil {
				res.err = err
			}
			return res
		}
	}
}

func isEndOfRead(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, os.ErrClosed)
}

// quota counts a stream's bytes against its limit.
type quota struct {
	limit int64
	used  int64
}

// take accounts for n more bytes and returns how many of them fit, and
// whether the stream is now over its limit.
func (q *quota) take(n int) (keep int, over bool) {
	room := q.limit - q.used
	if int64(n) <= room {
		q.used += int64(n)
		return n, false
	}
	q.used = q.limit
	return int(max(room, 0)), true
}

// scanReady reads r up to and including readyMarker, passes every byte
// before it to discard, and returns the bytes read after it. It fails when
// r ends first.
func scanReady(r io.Reader, discard func([]byte)) ([]byte, error) {
	marker := []byte(readyMarker)
	keep := len(marker) - 1 // a marker split across reads
	buf := make([]byte, 0, chunkSize+len(marker))
	tmp := make([]byte, chunkSize)
	for {
		n, err := r.Read(tmp)
		buf = append(buf, tmp[:n]...)
		if i := bytes.Index(buf, marker); i >= 0 {
			discard(buf[:i])
			return bytes.Clone(buf[i+len(marker):]), nil
		}
		if len(buf) > keep {
			discard(buf[:len(buf)-keep])
			buf = append(buf[:0], buf[len(buf)-keep:]...)
		}
		if err != nil {
			discard(buf)
			if errors.Is(err, io.EOF) {
				return nil, ErrNotReady
			}
			return nil, err
		}
	}
}
