package egress

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"testing"
)

// TestServeHostRelaysByHostHeader: an origin-form request to the
// transparent HTTP listener goes to its Host header's name, decided,
// resolved and guarded as a proxy request is; what is not origin-form,
// or names another port, is refused.
func TestServeHostRelaysByHostHeader(t *testing.T) {
	seen, port := httpUpstream(t)
	ps := strconv.Itoa(port)
	res := &fakeResolver{names: map[string][]netip.Addr{
		"api.test":   {loopback},
		"local.test": {netip.MustParseAddr("10.0.0.5")},
	}}
	p, _, _ := testProxy(t, Config{Policy: policyFor(t, port, "api.test", "local.test"), Resolver: res})
	addr := serveOn(t, p, func(ln net.Listener) error { return p.ServeHost(ln, port) }, http.ErrServerClosed)

	resp, body := rawRequest(t, addr, "GET /v1/x?q=1 HTTP/1.1\r\nHost: api.test\r\nX-Keep: kept")
	if resp.StatusCode != http.StatusOK || body != "hello from upstream" {
		t.Fatalf("origin-form GET: %d %q", resp.StatusCode, body)
	}
	seen.mu.Lock()
	host, uri, keep := seen.host, seen.uri, seen.header.Get("X-Keep")
	seen.mu.Unlock()
	if host != "api.test:"+ps || uri != "/v1/x?q=1" || keep != "kept" {
		t.Errorf("upstream saw host %q uri %q X-Keep %q", host, uri, keep)
	}

	// A client that found api.test at the proxy's address (the DNS
	// responder's answer) and sends the port in the Host header.
	tr := &http.Transport{DisableKeepAlives: true, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	}}
	defer tr.CloseIdleConnections()
	r2, err := (&http.Client{Transport: tr}).Get("http://api.test:" + ps + "/two")
	if err != nil {
		t.Fatal(err)
	}
	if b := readBody(t, r2); r2.StatusCode != http.StatusOK || b != "hello from upstream" {
		t.Errorf("a plain client through the transparent listener: %d %q", r2.StatusCode, b)
	}

	tests := []struct {
		name, head string
		status     int
		reason     string
	}{
		{"not allowed", "GET / HTTP/1.1\r\nHost: evil.test", http.StatusForbidden, ReasonNotAllowed},
		{"raw address", "GET / HTTP/1.1\r\nHost: 127.0.0.1", http.StatusForbidden, ReasonRawIP},
		{"blocked address", "GET / HTTP/1.1\r\nHost: local.test", http.StatusForbidden, ReasonBlockedAddress},
		{"another port", "GET / HTTP/1.1\r\nHost: api.test:1", http.StatusBadRequest, ReasonBadPort},
		{"absolute form", "GET http://api.test:" + ps + "/ HTTP/1.1\r\nHost: api.test", http.StatusBadRequest, ReasonBadRequest},
		{"CONNECT", "CONNECT api.test:" + ps + " HTTP/1.1\r\nHost: api.test:" + ps, http.StatusBadRequest, ReasonBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := rawRequest(t, addr, tt.head)
			wantRefused(t, resp, body, tt.status, tt.reason)
		})
	}
	s := p.Stats()
	want := map[string]int64{ReasonNotAllowed: 1, ReasonRawIP: 1, ReasonBlockedAddress: 1, ReasonBadPort: 1, ReasonBadRequest: 2}
	if s.Connections != 2 || len(s.Refused) != len(want) {
		t.Errorf("stats %+v, want 2 connections and refused %v", s, want)
	}
	for k, v := range want {
		if s.Refused[k] != v {
			t.Errorf("refused[%s] = %d, want %d", k, s.Refused[k], v)
		}
	}
	if res.count() != 3 {
		t.Errorf("resolved %d times, want 3 (two allowed requests and local.test)", res.count())
	}
}
