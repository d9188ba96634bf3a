package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A drain lets the request in flight finish, refuses every new one but
// the health checks, and waits for the one in flight, then the grace.
func TestDrainer(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	d := newDrainer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(entered)
			<-release
		}
		_, _ = io.WriteString(w, "served "+r.URL.Path)
	}))
	srv := httptest.NewServer(d)
	defer srv.Close()

	slow := make(chan string, 1)
	go func() {
		resp, err := http.Get(srv.URL + "/slow")
		if err != nil {
			slow <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		slow <- string(b)
	}()
	<-entered
	d.begin()

	get := func(path string) (int, http.Header, bool, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, resp.Close, string(b)
	}
	if code, h, closing, body := get("/v1/run"); code != http.StatusServiceUnavailable || !strings.Contains(body, `"code":"draining"`) ||
		h.Get("Retry-After") != "1" || h.Get("X-Paddock-Draining") != "true" || !closing {
		t.Errorf("a new request while draining: %d %v close=%v %s", code, h, closing, body)
	}
	if code, _, _, body := get("/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, `"status":"draining"`) {
		t.Errorf("/readyz while draining: %d %s", code, body)
	}
	if code, _, _, _ := get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz while draining: %d", code)
	}

	waited := make(chan struct{})
	go func() {
		d.wait(context.Background(), 0)
		close(waited)
	}()
	select {
	case <-waited:
		t.Fatal("wait returned with a request in flight")
	case <-time.After(50 * time.Millisecond): // a negative check: it must not return early
	}
	close(release)
	<-waited
	if got := <-slow; got != "served /slow" {
		t.Errorf("the request in flight at the drain: %q", got)
	}

	// With nothing in flight, wait still keeps the grace from begin.
	d2 := newDrainer(http.NotFoundHandler())
	d2.begin()
	start := time.Now()
	d2.wait(context.Background(), 100*time.Millisecond)
	if since := time.Since(start); since < 90*time.Millisecond {
		t.Errorf("wait returned after %v, before the 100 ms grace", since)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d3 := newDrainer(http.NotFoundHandler())
	d3.begin()
	d3.wait(ctx, time.Hour) // an ended ctx ends the wait
}
