package hibernate

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/paddock-dev/paddock/benchmarks/internal/server"
)

// busyCell keeps a session's interpreter on a CPU for two seconds: short,
// so that the neighbour stops soon after it is told to.
const busyCell = "import time\n_t = time.time()\nwhile time.time() - _t < 2:\n    pass\n_t"

// neighbour is a Python session on s that runs busyCell back to back.
type neighbour struct {
	s      *server.Server
	id     string
	cancel context.CancelFunc
	wg     sync.WaitGroup
	cells  atomic.Int64
	err    error
}

// startNeighbour opens the session and starts its loop.
func startNeighbour(ctx context.Context, s *server.Server) (*neighbour, error) {
	in, _, err := create(ctx, s, "python")
	if err != nil {
		return nil, err
	}
	lctx, cancel := context.WithCancel(ctx)
	n := &neighbour{s: s, id: in.ID, cancel: cancel}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		for lctx.Err() == nil {
			if _, _, err := execute(lctx, s, n.id, busyCell); err != nil {
				if lctx.Err() == nil {
					n.err = err
				}
				return
			}
			n.cells.Add(1)
		}
	}()
	return n, nil
}

// stop ends the loop and the session; it fails if a busy cell failed
// or none ran to its end while the neighbour was up.
func (n *neighbour) stop(ctx context.Context) error {
	n.cancel()
	remove(ctx, n.s, n.id)
	n.wg.Wait()
	if n.err != nil {
		return fmt.Errorf("the busy session: %w", n.err)
	}
	if n.cells.Load() == 0 {
		return errors.New("the busy session ran no cell to its end")
	}
	return nil
}
