package rootfs

import (
	"context"
	"fmt"
)

// flight is one build in progress that several callers wait for.
type flight struct {
	done chan struct{}
	img  Image
	err  error
}

// once runs fn for name unless a call for name is already running, in which
// case it waits for that call's result. A waiter whose ctx ends stops
// waiting; the build goes on for the caller that started it.
func (b *Builder) once(ctx context.Context, name string, fn func() (Image, error)) (Image, error) {
	b.mu.Lock()
	if f, ok := b.flights[name]; ok {
		b.mu.Unlock()
		select {
		case <-f.done:
			return f.img, f.err
		case <-ctx.Done():
			return Image{}, fmt.Errorf("waiting for rootfs %s: %w", name, ctx.Err())
		}
	}
	if b.flights == nil {
		b.flights = map[string]*flight{}
	}
	f := &flight{done: make(chan struct{})}
	b.flights[name] = f
	b.mu.Unlock()

	f.img, f.err = fn()

	b.mu.Lock()
	delete(b.flights, name)
	b.mu.Unlock()
	close(f.done)
	return f.img, f.err
}
