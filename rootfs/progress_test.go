package rootfs

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the heartbeat goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestProgressLines(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   string
		tail   string
	}{
		{
			name:   "lines split across writes",
			writes: []string{"I: running apt", "-get update...\nI: down", "loading\n"},
			want:   "[rootfs x] I: running apt-get update...\n[rootfs x] I: downloading\n",
			tail:   "I: running apt-get update...\nI: downloading",
		},
		{
			name:   "carriage-return redraws keep the last text",
			writes: []string{"(Reading database ... 5%\r(Reading database ... 100%\r(Reading database ... 3744 files)\n"},
			want:   "[rootfs x] (Reading database ... 3744 files)\n",
			tail:   "(Reading database ... 3744 files)",
		},
		{
			name:   "blank lines dropped, last line flushed",
			writes: []string{"\n\r\n  \nE: failed"},
			want:   "[rootfs x] E: failed\n",
			tail:   "E: failed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			p := newProgress(&out, "[rootfs x] ")
			for _, w := range tt.writes {
				if _, err := p.Write([]byte(w)); err != nil {
					t.Fatal(err)
				}
			}
			p.flush()
			if out.String() != tt.want {
				t.Errorf("output = %q, want %q", out.String(), tt.want)
			}
			if got := p.toolTail(); got != tt.tail {
				t.Errorf("tail = %q, want %q", got, tt.tail)
			}
		})
	}
}

func TestProgressTailIsBounded(t *testing.T) {
	p := newProgress(nil, "")
	for i := range 100 {
		p.Write([]byte(strings.Repeat("x", i+1) + "\n"))
	}
	lines := strings.Split(p.toolTail(), "\n")
	if len(lines) != 15 || lines[14] != strings.Repeat("x", 100) {
		t.Errorf("tail has %d lines ending %q, want 15 ending with 100 x", len(lines), lines[len(lines)-1])
	}
}

// fakeClock is a progress clock the test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// beat delivers one tick at the clock's time and returns once the
// heartbeat goroutine has taken it and the next tick can be sent.
func beat(ticks chan time.Time, at time.Time) {
	ticks <- at
}

func TestHeartbeat(t *testing.T) {
	var out syncBuffer
	clock := &fakeClock{now: time.Unix(1000, 0)}
	p := newProgress(&out, "[rootfs x] ")
	p.now, p.last = clock.Now, clock.Now()
	start := clock.Now()
	ticks := make(chan time.Time) // unbuffered: a send returns once taken
	stop := p.beatOn(ticks, 20*time.Millisecond, start)
	beat(ticks, clock.advance(10*time.Millisecond)) // too early
	beat(ticks, clock.advance(10*time.Millisecond)) // 20 ms of quiet: a beat
	beat(ticks, clock.advance(5*time.Millisecond))  // 5 ms after that beat
	beat(ticks, clock.advance(15*time.Millisecond)) // 20 ms again: a beat
	beat(ticks, start)                              // waits until the last tick was handled
	stop()
	want := "[rootfs x] still building, 0s elapsed\n[rootfs x] still building, 0s elapsed\n"
	if got := out.String(); got != want {
		t.Errorf("heartbeats:\n%q\nwant\n%q", got, want)
	}
	select {
	case ticks <- clock.advance(time.Hour):
		t.Errorf("heartbeat still takes ticks after stop")
	default:
	}
}

func TestHeartbeatSaysElapsedTime(t *testing.T) {
	var out syncBuffer
	clock := &fakeClock{now: time.Unix(1000, 0)}
	p := newProgress(&out, "")
	p.now, p.last = clock.Now, clock.Now()
	ticks := make(chan time.Time)
	stop := p.beatOn(ticks, time.Minute, clock.Now().Add(-90*time.Second))
	beat(ticks, clock.advance(time.Minute))
	beat(ticks, clock.Now())
	stop()
	if got, want := out.String(), "still building, 2m30s elapsed\n"; got != want {
		t.Errorf("heartbeat = %q, want %q", got, want)
	}
}

func TestHeartbeatQuietWhileOutputFlows(t *testing.T) {
	var out syncBuffer
	clock := &fakeClock{now: time.Unix(1000, 0)}
	p := newProgress(&out, "")
	p.now, p.last = clock.Now, clock.Now()
	ticks := make(chan time.Time)
	stop := p.beatOn(ticks, 50*time.Millisecond, clock.Now())
	for range 20 {
		clock.advance(10 * time.Millisecond)
		p.Write([]byte("I: working\n"))
		beat(ticks, clock.Now())
	}
	beat(ticks, clock.Now())
	stop()
	if strings.Contains(out.String(), "still building") {
		t.Errorf("heartbeat written while output flowed:\n%s", out.String())
	}
}
