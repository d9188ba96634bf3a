package rootfs

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// tailLines is how many of mmdebstrap's last lines an error carries.
const tailLines = 15

// progress writes human-readable build progress, each line prefixed with
// the template's name. It is safe for concurrent use.
type progress struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	now    func() time.Time
	last   time.Time // when the last line was written
	tail   []string  // the last lines of the build tool's output
	buf    []byte    // an incomplete line of the build tool's output
}

func newProgress(w io.Writer, prefix string) *progress {
	if w == nil {
		w = io.Discard
	}
	return &progress{w: w, prefix: prefix, now: time.Now, last: time.Now()}
}

// printf writes one line of our own.
func (p *progress) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.writeLine(fmt.Sprintf(format, args...))
}

// writeLine writes one prefixed line; p.mu must be held.
func (p *progress) writeLine(s string) {
	fmt.Fprintf(p.w, "%s%s\n", p.prefix, s)
	p.last = p.now()
}

// Write takes the build tool's output and forwards it line by line. Of a
// line redrawn with carriage returns only the final text is kept.
func (p *progress) Write(data []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, data...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(data), nil
		}
		p.toolLine(string(p.buf[:i]))
		p.buf = p.buf[i+1:]
	}
}

// flush forwards an unterminated last line of the build tool's output.
func (p *progress) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.buf) > 0 {
		p.toolLine(string(p.buf))
		p.buf = nil
	}
}

// toolLine forwards one line of the build tool's output; p.mu must be held.
func (p *progress) toolLine(s string) {
	if i := strings.LastIndexByte(strings.TrimRight(s, "\r"), '\r'); i >= 0 {
		s = s[i+1:]
	}
	s = strings.TrimRight(s, " \t\r")
	if s == "" {
		return
	}
	p.writeLine(s)
	p.tail = append(p.tail, s)
	if len(p.tail) > tailLines {
		p.tail = p.tail[len(p.tail)-tailLines:]
	}
}

// toolTail is the build tool's last lines, for error messages.
func (p *progress) toolTail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.tail, "\n")
}

// heartbeat writes a line with the elapsed time whenever nothing has been
// written for every, until stop is called.
func (p *progress) heartbeat(every time.Duration, start time.Time) (stop func()) {
	tick := time.NewTicker(max(every/15, time.Millisecond))
	stopBeats := p.beatOn(tick.C, every, start)
	return func() {
		stopBeats()
		tick.Stop()
	}
}

// beatOn is heartbeat driven by ticks, each carrying the time it stands
// for, so that tests need not wait for a real clock.
func (p *progress) beatOn(ticks <-chan time.Time, every time.Duration, start time.Time) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			case now := <-ticks:
				p.mu.Lock()
				if now.Sub(p.last) >= every {
					p.writeLine(fmt.Sprintf("still building, %s elapsed", now.Sub(start).Round(time.Second)))
					p.last = now // the beat stands for the tick's moment
				}
				p.mu.Unlock()
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
