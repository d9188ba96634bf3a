package agentconn

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/wire"
)

// syncBuffer is a log sink the dispatch goroutine and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A kernel whose sandbox is destroyed (its session ended) is not reported
// lost at WARN; one whose agent goes away on its own is.
func TestKernelLostWarnsOnlyWhenUnexpected(t *testing.T) {
	for _, tt := range []struct {
		name string
		end  func(c *Conn, a *fakeAgent)
		warn bool
	}{
		{"destroyed", func(c *Conn, a *fakeAgent) { _ = c.Destroy(context.Background()) }, false},
		{"agent gone", func(c *Conn, a *fakeAgent) { _ = a.outW.Close() }, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, a := connect(t)
			var log syncBuffer
			c.log = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))
			opened := make(chan runner.Kernel, 1)
			go func() {
				k, err := c.OpenKernel(t.Context(), runner.KernelOptions{})
				if err != nil {
					t.Errorf("OpenKernel: %v", err)
				}
				opened <- k
			}()
			var open wire.KernelOpen
			expectJSON(a, wire.TypeKernel, &open)
			a.send(wire.TypeAck, wire.Ack{ID: open.ID})
			k := <-opened
			tt.end(c, a)
			<-k.Lost()
			if got := strings.Contains(log.String(), "kernel lost"); got != tt.warn {
				t.Errorf("warned %v, want %v; log:\n%s", got, tt.warn, log.String())
			}
		})
	}
}
