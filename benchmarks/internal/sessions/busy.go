package sessions

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/paddock-dev/paddock/benchmarks/internal/server"
)

// busyCellFor is how long busyCell keeps a session's interpreter on its
// CPU: short, so that a loop told to stop ends soon.
const busyCellFor = 500 * time.Millisecond

var busyCell = fmt.Sprintf("import time\n_t = time.time()\nwhile time.time() - _t < %g:\n    pass\n", busyCellFor.Seconds())

// busySession is a Python session that runs busyCell back to back while
// its loop is on; between loops it is open and idle.
type busySession struct {
	s  *server.Server
	id string

	mu    sync.Mutex
	stopc chan struct{}
	done  chan struct{}
	cells int
	err   error
}

// openBusySession opens the session; its loop is off.
func openBusySession(ctx context.Context, s *server.Server) (*busySession, error) {
	id, err := openSession(ctx, s)
	if err != nil {
		return nil, err
	}
	return &busySession{s: s, id: id}, nil
}

// start begins the loop.
func (b *busySession) start(ctx context.Context) {
	b.stopc, b.done = make(chan struct{}), make(chan struct{})
	b.cells, b.err = 0, nil
	go func() {
		defer close(b.done)
		for {
			select {
			case <-b.stopc:
				return
			default:
			}
			if err := b.s.PostJSON(ctx, "/v1/sessions/"+b.id+"/execute", map[string]any{"code": busyCell}, http.StatusOK, nil); err != nil {
				b.mu.Lock()
				b.err = err
				b.mu.Unlock()
				return
			}
			b.mu.Lock()
			b.cells++
			b.mu.Unlock()
		}
	}()
}

// stop ends the loop once its current cell has answered, so that
// nothing of it runs after, and says how many cells ran to their end.
func (b *busySession) stop() (int, error) {
	close(b.stopc)
	<-b.done
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return b.cells, fmt.Errorf("the busy session: %w", b.err)
	}
	if b.cells == 0 {
		return 0, errors.New("the busy session ran no cell to its end")
	}
	return b.cells, nil
}

// close removes the session.
func (b *busySession) close(ctx context.Context) { closeSession(ctx, b.s, b.id) }

// openSession opens a Python session on s.
func openSession(ctx context.Context, s *server.Server) (string, error) {
	var created struct {
		ID string `json:"id"`
	}
	if err := s.PostJSON(ctx, "/v1/sessions", map[string]any{"language": "python"}, http.StatusCreated, &created); err != nil {
		return "", err
	}
	return created.ID, nil
}

// closeSession deletes a session, on a context of its own.
func closeSession(ctx context.Context, s *server.Server, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, s.URL()+"/v1/sessions/"+id, nil)
	if resp, err := s.Client().Do(req); err == nil {
		resp.Body.Close()
	}
}
