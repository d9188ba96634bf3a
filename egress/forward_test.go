package egress

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// seenRequest is what the stand-in upstream was sent.
type seenRequest struct {
	mu     sync.Mutex
	header http.Header
	host   string
	uri    string
	body   string
}

func httpUpstream(t *testing.T) (*seenRequest, int) {
	t.Helper()
	seen := &seenRequest{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := new(strings.Builder)
		buf := make([]byte, 1024)
		for {
			n, err := r.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		seen.mu.Lock()
		seen.header, seen.host, seen.uri, seen.body = r.Header.Clone(), r.Host, r.RequestURI, b.String()
		seen.mu.Unlock()
		// An upstream that echoes what it was sent, secrets included.
		w.Header().Set("Authorization", r.Header.Get("Authorization"))
		w.Header().Set("X-Echo", "got "+r.Header.Get("Authorization"))
		w.Header().Set("X-Plain", "fine")
		w.Header().Set("Proxy-Authenticate", "Basic")
		_, _ = w.Write([]byte("hello from upstream"))
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	return seen, port
}

func proxyClient(t *testing.T, addr string) *http.Client {
	t.Helper()
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: addr}), DisableKeepAlives: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func TestForwardPlainHTTP(t *testing.T) {
	seen, port := httpUpstream(t)
	res := &fakeResolver{names: map[string][]netip.Addr{"api.test": {loopback}}}
	p, addr, _ := testProxy(t, Config{
		Policy:   policyFor(t, port, "api.test"),
		Resolver: res,
	})
	target := "http://api.test:" + strconv.Itoa(port) + "/v1/x?q=1"
	req, _ := http.NewRequest(http.MethodPost, target, strings.NewReader("request body"))
	req.Header.Set("Authorization", "Bearer from-the-client")
	req.Header.Set("Proxy-Authorization", "Basic eA==")
	req.Header.Set("Connection", "X-Drop")
	req.Header.Set("X-Drop", "1")
	req.Header.Set("X-Keep", "kept")
	resp, err := proxyClient(t, addr).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readBody(t, resp)
	if resp.StatusCode != 200 || body != "hello from upstream" {
		t.Fatalf("answer %d %q", resp.StatusCode, body)
	}

	seen.mu.Lock()
	defer seen.mu.Unlock()
	if got := seen.header.Get("Authorization"); got != "Bearer from-the-client" {
		t.Errorf("upstream Authorization %q, want the client's (no secret for api.test here: secrets_test.go)", got)
	}
	for _, h := range []string{"Proxy-Authorization", "X-Drop"} {
		if v, ok := seen.header[h]; ok {
			t.Errorf("upstream got %s: %v", h, v)
		}
	}
	if seen.header.Get("X-Keep") != "kept" || seen.body != "request body" || seen.uri != "/v1/x?q=1" || seen.host != "api.test:"+strconv.Itoa(port) {
		t.Errorf("upstream saw host %q uri %q body %q X-Keep %q", seen.host, seen.uri, seen.body, seen.header.Get("X-Keep"))
	}

	if v, ok := resp.Header["Proxy-Authenticate"]; ok {
		t.Errorf("client sees Proxy-Authenticate: %v", v)
	}
	if resp.Header.Get("X-Plain") != "fine" {
		t.Errorf("client lost X-Plain: %v", resp.Header)
	}
	if s := p.Stats(); s.Connections != 1 || s.BytesOut == 0 || s.BytesIn == 0 {
		t.Errorf("Stats = %+v", s)
	}
}

func TestForwardWithoutSecretsKeepsClientHeaders(t *testing.T) {
	seen, port := httpUpstream(t)
	res := &fakeResolver{names: map[string][]netip.Addr{"api.test": {loopback}, "other.test": {loopback}}}
	_, addr, _ := testProxy(t, Config{
		Policy:   policyFor(t, port, "api.test", "other.test"),
		Resolver: res,
		Secrets:  map[string]http.Header{"api.test": {"Authorization": {"Bearer s3cret"}}},
	})
	req, _ := http.NewRequest(http.MethodGet, "http://other.test:"+strconv.Itoa(port)+"/", nil)
	req.Header.Set("Authorization", "Bearer mine")
	resp, err := proxyClient(t, addr).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readBody(t, resp)
	seen.mu.Lock()
	defer seen.mu.Unlock()
	if got := seen.header.Get("Authorization"); got != "Bearer mine" {
		t.Errorf("other.test got Authorization %q: a secret went to the wrong host", got)
	}
	if resp.Header.Get("X-Echo") != "got Bearer mine" {
		t.Errorf("X-Echo %q: answers without secrets are not scrubbed", resp.Header.Get("X-Echo"))
	}
}

func TestForwardRefusals(t *testing.T) {
	_, port := httpUpstream(t)
	ps := strconv.Itoa(port)
	res := &fakeResolver{names: map[string][]netip.Addr{"api.test": {loopback}, "lan.test": {netip.MustParseAddr("192.168.0.10")}}}
	_, addr, _ := testProxy(t, Config{Policy: policyFor(t, port, "api.test", "lan.test"), Resolver: res})
	tests := []struct {
		name, head string
		status     int
		reason     string
	}{
		{"origin form", "GET / HTTP/1.1\r\nHost: api.test", 400, ReasonBadRequest},
		{"https absolute form", "GET https://api.test:" + ps + "/ HTTP/1.1\r\nHost: api.test", 400, ReasonBadRequest},
		{"not allowed", "GET http://other.test:" + ps + "/ HTTP/1.1\r\nHost: other.test", 403, ReasonNotAllowed},
		{"default port not allowed", "GET http://api.test/ HTTP/1.1\r\nHost: api.test", 403, ReasonNotAllowed},
		{"raw IP", "GET http://127.0.0.1:" + ps + "/ HTTP/1.1\r\nHost: 127.0.0.1", 403, ReasonRawIP},
		{"decimal IP", "GET http://2130706433:" + ps + "/ HTTP/1.1\r\nHost: x", 403, ReasonRawIP},
		{"blocked address", "GET http://lan.test:" + ps + "/ HTTP/1.1\r\nHost: lan.test", 403, ReasonBlockedAddress},
		{"bad port", "GET http://api.test:99999/ HTTP/1.1\r\nHost: api.test", 400, ReasonBadPort},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := rawRequest(t, addr, tc.head)
			wantRefused(t, resp, body, tc.status, tc.reason)
		})
	}
}

func TestForwardUpstreamFailure(t *testing.T) {
	port := tcpUpstream(t, func(c net.Conn) {
		_, _ = http.ReadRequest(bufio.NewReader(c))
		_, _ = io.WriteString(c, "SSH-2.0-not-http\r\n")
	})
	res := &fakeResolver{names: map[string][]netip.Addr{"api.test": {loopback}}}
	_, addr, _ := testProxy(t, Config{Policy: policyFor(t, port, "api.test"), Resolver: res})
	resp, body := rawRequest(t, addr, "GET http://api.test:"+strconv.Itoa(port)+"/ HTTP/1.1\r\nHost: api.test")
	wantRefused(t, resp, body, 502, ReasonUpstreamFailed)
}
