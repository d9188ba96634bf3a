package egress

import (
	"context"
	"sync"
	"testing"
	"time"
)

// fakeClock moves only when a taker sleeps: it adds the wait to the
// time and to the total slept.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	slept time.Duration
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.slept += d
	return ctx.Err()
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *fakeClock) total() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.slept
}

func TestBucket(t *testing.T) {
	c := newFakeClock()
	b := newBucket(c, 1000)
	steps := []struct {
		advance time.Duration
		take    int
		slept   time.Duration // total so far
	}{
		{take: 1000, slept: 0},                                                 // the burst
		{take: 500, slept: 500 * time.Millisecond},                             // half a second's debt
		{take: 250, slept: 750 * time.Millisecond},                             // queued behind it
		{advance: 10 * time.Second, take: 1000, slept: 750 * time.Millisecond}, // refilled, capped at the burst
		{take: 1, slept: 751 * time.Millisecond},
	}
	for i, s := range steps {
		c.advance(s.advance)
		if err := b.take(t.Context(), s.take); err != nil {
			t.Fatal(err)
		}
		if got := c.total(); got != s.slept {
			t.Fatalf("step %d: slept %v, want %v", i, got, s.slept)
		}
	}
}

func TestBucketWaitEndsWithContext(t *testing.T) {
	b := newBucket(realClock{}, 1)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := b.take(ctx, 1000); err == nil {
		t.Fatal("take of 1000 s of debt on a cancelled context returned nil")
	}
}
