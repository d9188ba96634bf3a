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

func TestHeartbeat(t *testing.T) {
	var out syncBuffer
	p := newProgress(&out, "[rootfs x] ")
	stop := p.heartbeat(20*time.Millisecond, time.Now())
	// Wait for the second heartbeat, however late it comes; the bound
	// only ends a test whose heartbeat never beats.
	deadline := time.Now().Add(time.Minute)
	for strings.Count(out.String(), "[rootfs x] still building, ") < 2 {
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("fewer than 2 heartbeats in a minute at 20ms:\n%s", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	before := out.String()
	time.Sleep(50 * time.Millisecond)
	if out.String() != before {
		t.Errorf("heartbeat kept writing after stop")
	}
}

// TestHeartbeatQuietWhileOutputFlows writes a line every few milliseconds
// for three heartbeat intervals. A pause of the writer as long as an
// interval (a busy machine can make one) would rightly let a heartbeat
// through, so such an attempt is not judged and the test tries again.
func TestHeartbeatQuietWhileOutputFlows(t *testing.T) {
	const every = 100 * time.Millisecond
	for attempt := range 5 {
		var out syncBuffer
		p := newProgress(&out, "")
		start := time.Now()
		stop := p.heartbeat(every, start)
		var longest time.Duration
		last := start
		for time.Since(start) < 3*every {
			p.Write([]byte("I: working\n"))
			now := time.Now()
			longest = max(longest, now.Sub(last))
			last = now
			time.Sleep(2 * time.Millisecond)
		}
		stop()
		if longest >= every/2 {
			t.Logf("attempt %d: the writer paused %v, half an interval or more; not judged", attempt, longest)
			continue
		}
		if strings.Contains(out.String(), "still building") {
			t.Errorf("heartbeat written while output flowed (longest pause %v):\n%s", longest, out.String())
		}
		return
	}
	t.Fatal("the writer paused half a heartbeat interval in each of 5 attempts: the machine is too busy to judge")
}
