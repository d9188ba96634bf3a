package egress

import (
	"context"
	"sync"
	"time"
)

// clock is the time a bucket reads and waits on; tests pass a fake one.
type clock interface {
	Now() time.Time
	// Sleep waits d or until ctx ends.
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// bucket is a token bucket of bytes: rate a second, burst one second's
// worth. A taker may drive it below zero and then waits the debt out, so
// that takers queue in the order they took.
type bucket struct {
	clock clock
	rate  float64

	mu     sync.Mutex
	tokens float64
	last   time.Time
}

func newBucket(c clock, rate int64) *bucket {
	return &bucket{clock: c, rate: float64(rate), tokens: float64(rate), last: c.Now()}
}

// take spends n bytes and waits until the bucket has paid for them.
func (b *bucket) take(ctx context.Context, n int) error {
	b.mu.Lock()
	now := b.clock.Now()
	b.tokens = min(b.rate, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	b.last = now
	b.tokens -= float64(n)
	debt := -b.tokens
	b.mu.Unlock()
	if debt <= 0 {
		return nil
	}
	return b.clock.Sleep(ctx, time.Duration(debt/b.rate*float64(time.Second)))
}
