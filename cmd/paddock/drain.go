package main

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paddock-dev/paddock/gateway"
)

// drainGrace is how long a node keeps answering after SIGTERM before it
// closes its listener, at the least: longer than a gateway's health
// check interval (1 s), so that every gateway has seen it draining and
// sends it nothing new by the time its idle connections close (a request
// written onto one as it closed would fail as node_lost: it might have
// started).
const drainGrace = 2 * time.Second

// drainer is the server's front while it stops: once begun, every new
// request but /health and /healthz is refused 503 draining (with
// Retry-After, which a gateway retries on another node, and Connection:
// close), /readyz answers draining, and the requests already in flight
// go on; wait returns when they have ended. A WebSocket is not counted:
// it lives as long as its session, which the shutdown hibernates.
type drainer struct {
	next     http.Handler
	draining atomic.Bool

	mu       sync.Mutex
	inflight int
	idle     chan struct{} // closed when inflight is 0 while draining
	begun    time.Time
}

func newDrainer(next http.Handler) *drainer { return &drainer{next: next} }

func (d *drainer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isUpgrade(r) {
		if d.draining.Load() {
			d.refuse(w, r)
			return
		}
		d.next.ServeHTTP(w, r)
		return
	}
	d.mu.Lock()
	if d.draining.Load() {
		d.mu.Unlock()
		d.refuse(w, r)
		return
	}
	d.inflight++
	d.mu.Unlock()
	defer d.done()
	d.next.ServeHTTP(w, r)
}

func (d *drainer) done() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.inflight--
	if d.inflight == 0 && d.idle != nil {
		close(d.idle)
		d.idle = nil
	}
}

// refuse answers a request that came after the drain began.
func (d *drainer) refuse(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Connection", "close")
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set(gateway.HeaderDraining, "true") // a gateway stops sending it work at once, not at its next check
	switch r.URL.Path {
	case "/health", "/healthz":
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"status":"draining"}` + "\n"))
	case "/readyz":
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"status":"draining","templates":[]}` + "\n"))
	default:
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"code":"draining","message":"this server is shutting down: it finishes the requests it has and takes no new one; ` +
			`retry shortly (through a gateway, new work goes to another node; this node's sessions come back when it restarts)"}` + "\n"))
	}
}

// begin starts the drain: no new request from now on.
func (d *drainer) begin() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.draining.Store(true)
	d.begun = time.Now()
	if d.inflight > 0 {
		d.idle = make(chan struct{})
	}
}

// wait returns once the requests in flight at begin have ended and at
// least grace has passed since begin, or when ctx ends.
func (d *drainer) wait(ctx context.Context, grace time.Duration) {
	d.mu.Lock()
	idle, begun := d.idle, d.begun
	d.mu.Unlock()
	if idle != nil {
		select {
		case <-idle:
		case <-ctx.Done():
			return
		}
	}
	t := time.NewTimer(time.Until(begun.Add(grace)))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}
