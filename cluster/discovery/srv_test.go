package discovery

import (
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"
)

// stubResolver answers LookupSRV with what the test last set, and tells
// the test of each lookup it answered.
type stubResolver struct {
	mu      sync.Mutex
	records []*net.SRV
	err     error
	asked   chan string // receives the name of each lookup
}

func (r *stubResolver) set(records []*net.SRV, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records, r.err = records, err
}

func (r *stubResolver) LookupSRV(ctx context.Context, service, proto, name string) (string, []*net.SRV, error) {
	r.mu.Lock()
	records, err := r.records, r.err
	r.mu.Unlock()
	select {
	case r.asked <- "_" + service + "._" + proto + "." + name:
	case <-ctx.Done():
		return "", nil, ctx.Err()
	}
	return name, records, err
}

func TestSRV(t *testing.T) {
	r := &stubResolver{asked: make(chan string)}
	r.set([]*net.SRV{
		{Target: "node-1.paddock.example.", Port: 8080},
		{Target: "node-0.paddock.example.", Port: 8080},
	}, nil)
	src := NewSRV(r, SRVConfig{Service: "api", Proto: "tcp", Name: "paddock.example", Interval: time.Millisecond},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx) }()
	// Lookups block until the test takes them: drain them from here on,
	// noting each.
	lookups := make(chan string, 1)
	go func() {
		for {
			select {
			case name := <-r.asked:
				select {
				case lookups <- name:
				default:
				}
			case <-ctx.Done():
				return
			}
		}
	}()

	waitNodes(t, src, []Node{
		{"node-0", "node-0.paddock.example:8080"},
		{"node-1", "node-1.paddock.example:8080"},
	})
	if name := <-lookups; name != "_api._tcp.paddock.example" {
		t.Errorf("looked up %q", name)
	}

	r.set([]*net.SRV{{Target: "node-2.paddock.example.", Port: 9000}}, nil)
	waitNodes(t, src, []Node{{"node-2", "node-2.paddock.example:9000"}})

	// A failing server keeps the last set. Lookups are strictly one after
	// another, and lookups holds at most one: of the next four noted, the
	// third began after the failure was set, and the fourth began after
	// the third's answer was handled.
	r.set(nil, &net.DNSError{Err: "server misbehaving", Name: "paddock.example", IsTemporary: true})
	for range 4 {
		<-lookups
	}
	if got, _ := src.Nodes(); len(got) != 1 || got[0].Name != "node-2" {
		t.Fatalf("after failed lookups nodes = %v, want node-2 kept", got)
	}

	// A name that does not exist has no nodes.
	r.set(nil, &net.DNSError{Err: "no such host", Name: "paddock.example", IsNotFound: true})
	waitNodes(t, src, nil)

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
}

func TestSRVNeedsInterval(t *testing.T) {
	src := NewSRV(&stubResolver{}, SRVConfig{Name: "x"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := src.Run(t.Context()); err == nil {
		t.Fatal("Run with no interval: no error")
	}
}

var _ Resolver = (*net.Resolver)(nil)
