package egress

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// sniUpstream is a TLS server on 127.0.0.1 (a self-signed certificate)
// that answers with the server name it was asked for; it returns its port.
func sniUpstream(t *testing.T) int {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "tls hello for %s", r.TLS.ServerName)
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	return port
}

// TestServeTLSSplicesBySNI: a TLS client that found its host at the
// proxy's address reaches the upstream its server name resolves to,
// end to end (the proxy decrypts nothing); a name the policy refuses, no
// name, bytes that are not TLS and a name resolving to a blocked address
// are refused with an access_denied alert, counted by reason.
func TestServeTLSSplicesBySNI(t *testing.T) {
	port := sniUpstream(t)
	res := &fakeResolver{names: map[string][]netip.Addr{
		"api.test":   {loopback},
		"local.test": {netip.MustParseAddr("169.254.169.254")},
	}}
	logs := &logBuffer{}
	p, err := New(Config{Sandbox: "sbx-tls", Policy: policyFor(t, port, "api.test", "local.test"), Resolver: res,
		Guard: loopbackGuard(), Logger: newTextLogger(logs)})
	if err != nil {
		t.Fatal(err)
	}
	addr := serveOn(t, p, func(ln net.Listener) error { return p.ServeTLS(ln, port) }, net.ErrClosed)

	tr := &http.Transport{DisableKeepAlives: true, TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	resp, err := client.Get("https://api.test:" + strconv.Itoa(port) + "/")
	if err != nil {
		t.Fatal(err)
	}
	if b := readBody(t, resp); b != "tls hello for api.test" {
		t.Errorf("through the TLS listener: %q", b)
	}
	if s := p.Stats(); s.Connections != 1 || s.BytesOut == 0 || s.BytesIn == 0 || s.Refused != nil {
		t.Errorf("stats %+v, want one connection both ways and no refusal", s)
	}

	for _, tt := range []struct{ name, sni string }{
		{"not allowed", "evil.test"}, {"blocked address", "local.test"}, {"no server name", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			err = tls.Client(c, &tls.Config{ServerName: tt.sni, InsecureSkipVerify: true}).Handshake()
			if err == nil || !strings.Contains(err.Error(), "access denied") {
				t.Errorf("handshake error %v, want the proxy's access denied alert", err)
			}
		})
	}
	t.Run("not TLS", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: api.test\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(c)
		if string(got) != string(alertAccessDenied) {
			t.Errorf("read %q, want the alert and the end", got)
		}
	})
	s := p.Stats()
	want := map[string]int64{ReasonNotAllowed: 1, ReasonBlockedAddress: 1, ReasonNoSNI: 2}
	if len(s.Refused) != len(want) || s.Connections != 1 {
		t.Errorf("stats %+v, want refused %v and still one connection", s, want)
	}
	for k, v := range want {
		if s.Refused[k] != v {
			t.Errorf("refused[%s] = %d, want %d", k, s.Refused[k], v)
		}
	}
	if l := logs.String(); !strings.Contains(l, "method=TLS") || !strings.Contains(l, "target=evil.test:"+strconv.Itoa(port)) ||
		!strings.Contains(l, "class=link_local") {
		t.Errorf("log %q, want the TLS refusals with their targets", l)
	}
}

// TestTransparentShareLimits: the TLS listener's upstreams count against
// the same MaxConns as the proxy's own: with one slot held by a tunnel,
// a transparent TLS connection is refused conn_limit.
func TestTransparentShareLimits(t *testing.T) {
	port := tcpUpstream(t, echo)
	res := &fakeResolver{names: map[string][]netip.Addr{"api.test": {loopback}}}
	p, proxy, _ := testProxy(t, Config{Policy: policyFor(t, port, "api.test"), Resolver: res, Limits: Limits{MaxConns: 1}})
	addr := serveOn(t, p, func(ln net.Listener) error { return p.ServeTLS(ln, port) }, net.ErrClosed)
	_, _, resp := connect(t, proxy, "api.test:"+strconv.Itoa(port))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT: %d", resp.StatusCode)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := tls.Client(c, &tls.Config{ServerName: "api.test", InsecureSkipVerify: true}).Handshake(); err == nil {
		t.Fatal("a second connection over MaxConns 1 went through")
	}
	if got := p.Stats().Refused[ReasonConnLimit]; got != 1 {
		t.Errorf("conn_limit %d, want 1", got)
	}
}
