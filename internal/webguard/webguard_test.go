package webguard_test

import (
	"net"
	"net/http/httptest"
	"testing"

	"github.com/paddock-dev/paddock/internal/webguard"
)

var (
	loop   = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	public = &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 8080}
)

func TestHosts(t *testing.T) {
	g, err := webguard.New([]string{"paddock.example.com"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		host  string
		local net.Addr
		want  string
	}{
		{"evil.example", loop, webguard.CodeHost},
		{"evil.example:80", loop, webguard.CodeHost},
		{"evil.example:8080", public, ""}, // rebinding reaches only loopback
		{"paddock.example.com", loop, ""},
		{"PADDOCK.example.com:443", loop, ""},
		{"localhost:8080", loop, ""},
		{"app.localhost:8080", loop, ""},
		{"127.0.0.1", loop, ""},
		{"[::1]:8080", loop, ""},
	} {
		r := httptest.NewRequest("GET", "/v1/templates", nil)
		r.Host = tc.host
		if got := code(g.Check(r, tc.local)); got != tc.want {
			t.Errorf("Host %s on %s: %q, want %q", tc.host, tc.local, got, tc.want)
		}
	}
}

func TestOrigins(t *testing.T) {
	g, err := webguard.New(nil, []string{"https://notebooks.example.com:443"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, host, origin, want string
	}{
		{"POST", "127.0.0.1:8080", "", ""}, // not a browser
		{"POST", "127.0.0.1:8080", "http://127.0.0.1:8080", ""},
		{"POST", "localhost", "http://localhost:80", ""},
		{"POST", "127.0.0.1:8080", "http://evil.example", webguard.CodeOrigin},
		{"POST", "127.0.0.1:8080", "http://127.0.0.1:9999", webguard.CodeOrigin},
		{"POST", "127.0.0.1:8080", "https://127.0.0.1:8080:x", webguard.CodeOrigin},
		{"POST", "127.0.0.1:8080", "null", webguard.CodeOrigin},
		{"DELETE", "127.0.0.1:8080", "http://evil.example", webguard.CodeOrigin},
		{"PUT", "127.0.0.1:8080", "https://notebooks.example.com", ""},
		{"GET", "127.0.0.1:8080", "http://evil.example", ""}, // reads nothing back, changes nothing
	} {
		r := httptest.NewRequest(tc.method, "/v1/run", nil)
		r.Host = tc.host
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		if got := code(g.Check(r, loop)); got != tc.want {
			t.Errorf("%s Host %s Origin %q: %q, want %q", tc.method, tc.host, tc.origin, got, tc.want)
		}
	}
}

func TestBadAllowedOrigin(t *testing.T) {
	for _, o := range []string{"notebooks.example.com", "ftp://x", "https://x/path", "https://"} {
		if _, err := webguard.New(nil, []string{o}); err == nil {
			t.Errorf("%q accepted", o)
		}
	}
}

func code(r *webguard.Refusal) string {
	if r == nil {
		return ""
	}
	return r.Code
}
