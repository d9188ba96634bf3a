package egress

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
)

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

func newTextLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// serveOn runs serve (one of p's Serve methods) on a new listener on
// 127.0.0.1 and returns its address; the cleanup closes p and waits for
// serve to return one of want.
func serveOn(t *testing.T, p *Proxy, serve func(net.Listener) error, want ...error) string {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- serve(ln) }()
	t.Cleanup(func() {
		_ = p.Close()
		err := <-done
		for _, w := range want {
			if errors.Is(err, w) {
				return
			}
		}
		t.Errorf("serving returned %v, want one of %v", err, want)
	})
	return ln.Addr().String()
}
