package core

import (
	"sync"
	"time"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// FakeClock is fakeClock for the external tests.
type FakeClock = fakeClock

// NewFakeClock returns a fake clock reading t.
func NewFakeClock(t time.Time) *FakeClock { return &fakeClock{now: t} }
