package jupyterdoor

import (
	"context"
	"sync"
	"time"

	"github.com/paddock-dev/paddock/core"
)

// A cell the door has handed to the core may not have reached the
// interpreter yet when its client asks to interrupt it (the client saw
// execute_input, sent before the core runs the cell), and an interrupt
// with no cell running is a no-op. So an interrupt is repeated, every
// interruptEvery for at most interruptFor, until one of the cells in
// flight when it was asked ends.
const (
	interruptEvery = 50 * time.Millisecond
	interruptFor   = 5 * time.Second
)

// execution is a cell the door is running; done closes when it ends.
type execution struct{ done chan struct{} }

// begin records a cell in flight on h.
func (h *hub) begin() *execution {
	x := &execution{done: make(chan struct{})}
	h.mu.Lock()
	if h.inflight == nil {
		h.inflight = map[*execution]struct{}{}
	}
	h.inflight[x] = struct{}{}
	h.mu.Unlock()
	return x
}

// end records that x ended.
func (h *hub) end(x *execution) {
	h.mu.Lock()
	delete(h.inflight, x)
	h.mu.Unlock()
	close(x.done)
}

func (h *hub) running() []*execution {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*execution, 0, len(h.inflight))
	for x := range h.inflight {
		out = append(out, x)
	}
	return out
}

// interrupt interrupts the caller's kernel id, and keeps at it (see
// above) until a cell that was in flight ends.
func (d *door) interrupt(ctx context.Context, cl core.Caller, id string) error {
	if err := d.svc.Interrupt(ctx, cl, id); err != nil {
		d.lostIf(cl, id, err)
		return err
	}
	h := d.hubs.get(cl.Tenant, id)
	if h == nil {
		return nil
	}
	xs := h.running()
	if len(xs) == 0 {
		return nil
	}
	// Any of them ending stops the repeats; each ends by its time limit.
	ended := make(chan struct{})
	var once sync.Once
	for _, x := range xs {
		go func() {
			<-x.done
			once.Do(func() { close(ended) })
		}()
	}
	go func() {
		tick := time.NewTicker(interruptEvery)
		defer tick.Stop()
		stop := time.After(interruptFor)
		for {
			select {
			case <-ended:
				return
			case <-stop:
				return
			case <-tick.C:
			}
			if d.svc.Interrupt(context.WithoutCancel(ctx), cl, id) != nil {
				return
			}
		}
	}()
	return nil
}
