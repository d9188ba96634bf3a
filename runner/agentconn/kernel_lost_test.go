package agentconn

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/wire"
)

// messages is a slog handler that keeps the message of every record.
type messages struct {
	mu  sync.Mutex
	got []string
}

func (m *messages) Enabled(context.Context, slog.Level) bool { return true }
func (m *messages) WithAttrs([]slog.Attr) slog.Handler       { return m }
func (m *messages) WithGroup(string) slog.Handler            { return m }
func (m *messages) Handle(_ context.Context, r slog.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.got = append(m.got, r.Level.String()+" "+r.Message)
	return nil
}

func (m *messages) has(msg string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Contains(m.got, msg)
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
			log := &messages{}
			c.log = slog.New(log)
			k := openKernelOn(t, c, a)
			tt.end(c, a)
			<-k.Lost()
			if got := log.has("WARN kernel lost"); got != tt.warn {
				t.Errorf("warned %v, want %v; log: %q", got, tt.warn, log.got)
			}
		})
	}
}

// A cell the agent ended by killing its interpreter says so (Lost), even
// though its reason is the timeout that began it; a cell stopped by its
// interrupt does not.
func TestDoneSaysKernelDied(t *testing.T) {
	for _, lost := range []bool{false, true} {
		k, a := openKernel(t)
		res := make(chan runner.ExecuteResult, 1)
		go func() {
			r, _ := k.Execute(t.Context(), runner.ExecuteRequest{Code: "x", Timeout: time.Minute}, nil)
			res <- r
		}()
		var ex wire.Execute
		expectJSON(a, wire.TypeExecute, &ex)
		a.send(wire.TypeDone, wire.Done{ID: ex.ID, ExecutionCount: 1, Status: "aborted", Reason: "timeout", Lost: lost})
		if r := <-res; r.Reason != runner.ReasonTimeout || r.Lost != lost {
			t.Errorf("Done with Lost %v: result %+v", lost, r)
		}
	}
}
