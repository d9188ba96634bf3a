package egress

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
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

// tlsUpstream is an HTTPS stand-in (httptest's certificate names
// example.com and 127.0.0.1) that records what it was sent and echoes
// the Authorization header back, in its own name and inside another.
func tlsUpstream(t *testing.T) (*seenRequest, *x509.CertPool, int, *int) {
	t.Helper()
	seen := &seenRequest{}
	var mu sync.Mutex
	calls := 0
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.mu.Lock()
		seen.header, seen.host, seen.uri = r.Header.Clone(), r.Host, r.RequestURI
		seen.mu.Unlock()
		mu.Lock()
		calls++
		mu.Unlock()
		w.Header().Set("Authorization", r.Header.Get("Authorization"))
		w.Header().Set("X-Echo", "got "+r.Header.Get("Authorization"))
		w.Header().Set("X-Plain", "fine")
		_, _ = w.Write([]byte("hello over tls"))
	}))
	t.Cleanup(srv.Close)
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	return seen, roots, port, &calls
}

var secretConfig = map[string]http.Header{"Example.COM": {"authorization": {"Bearer s3cret"}}}

func TestSecretHostOverTLS(t *testing.T) {
	seen, roots, port, _ := tlsUpstream(t)
	res := &fakeResolver{names: map[string][]netip.Addr{"example.com": {loopback}}}
	p, addr, _ := testProxy(t, Config{Policy: policyFor(t, port, "example.com"), Resolver: res, Secrets: secretConfig, SecretRoots: roots})

	req, _ := http.NewRequest(http.MethodGet, "http://example.com:"+strconv.Itoa(port)+"/v1/x?q=1", nil)
	req.Header.Set("Authorization", "Bearer from-the-client")
	resp, err := proxyClient(t, addr).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if body := readBody(t, resp); resp.StatusCode != 200 || body != "hello over tls" {
		t.Fatalf("answer %d %q", resp.StatusCode, body)
	}
	seen.mu.Lock()
	if got := seen.header.Get("Authorization"); got != "Bearer s3cret" {
		t.Errorf("upstream Authorization %q, want the operator's secret", got)
	}
	if want := "example.com:" + strconv.Itoa(port); seen.host != want || seen.uri != "/v1/x?q=1" {
		t.Errorf("upstream saw host %q uri %q, want %q /v1/x?q=1", seen.host, seen.uri, want)
	}
	seen.mu.Unlock()
	for _, h := range []string{"Authorization", "X-Echo"} {
		if v, ok := resp.Header[h]; ok {
			t.Errorf("client sees %s: %v", h, v)
		}
	}
	if resp.Header.Get("X-Plain") != "fine" {
		t.Errorf("client lost X-Plain: %v", resp.Header)
	}
	if s := p.Stats(); s.Connections != 1 || len(s.Refused) != 0 {
		t.Errorf("Stats = %+v", s)
	}
}

func TestSecretHostRefusals(t *testing.T) {
	_, roots, port, calls := tlsUpstream(t)
	ps := strconv.Itoa(port)
	res := &fakeResolver{names: map[string][]netip.Addr{"example.com": {loopback}}}

	t.Run("untrusted certificate", func(t *testing.T) {
		// The system's roots do not know httptest's certificate.
		_, addr, logs := testProxy(t, Config{Policy: policyFor(t, port, "example.com"), Resolver: res, Secrets: secretConfig})
		resp, body := rawRequest(t, addr, "GET http://example.com:"+ps+"/ HTTP/1.1\r\nHost: example.com")
		wantRefused(t, resp, body, 502, ReasonUpstreamFailed)
		if !strings.Contains(body, "TLS handshake with example.com failed") || !strings.Contains(logs.String(), "certificate") {
			t.Errorf("body %q, log %q: want the handshake named, the certificate error logged", body, logs.String())
		}
	})
	t.Run("CONNECT", func(t *testing.T) {
		_, addr, _ := testProxy(t, Config{Policy: policyFor(t, port, "example.com"), Resolver: res, Secrets: secretConfig, SecretRoots: roots})
		_, br, resp := connect(t, addr, "example.com:"+ps)
		b := make([]byte, 512)
		n, _ := br.Read(b)
		wantRefused(t, resp, string(b[:n]), 403, ReasonSecretHost)
		if !strings.Contains(string(b[:n]), "ask for http://example.com/") {
			t.Errorf("body %q does not say what to ask for", b[:n])
		}
	})
	t.Run("transparent TLS", func(t *testing.T) {
		p, err := New(Config{Policy: policyFor(t, port, "example.com"), Resolver: res, Secrets: secretConfig, SecretRoots: roots,
			Guard: loopbackGuard(), Logger: discard()})
		if err != nil {
			t.Fatal(err)
		}
		addr := serveOn(t, p, func(ln net.Listener) error { return p.ServeTLS(ln, port) }, net.ErrClosed)
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		err = tls.Client(c, &tls.Config{ServerName: "example.com", RootCAs: roots}).Handshake()
		if err == nil || !strings.Contains(err.Error(), "access denied") {
			t.Errorf("handshake error %v, want the proxy's access denied alert", err)
		}
		if s := p.Stats(); s.Refused[ReasonSecretHost] != 1 || s.Connections != 0 {
			t.Errorf("stats %+v, want the secret host refused and no connection", s)
		}
	})
	t.Run("policy decides the TLS port", func(t *testing.T) {
		// http://example.com/ is port 80 asked, 443 dialled: a policy of
		// port 80 alone does not let it through.
		_, addr, _ := testProxy(t, Config{Policy: mustPolicy(t, []string{"example.com:80"}, nil), Resolver: res, Secrets: secretConfig, SecretRoots: roots})
		resp, body := rawRequest(t, addr, "GET http://example.com/ HTTP/1.1\r\nHost: example.com")
		wantRefused(t, resp, body, 403, ReasonNotAllowed)
		if !strings.Contains(body, "example.com:443") {
			t.Errorf("body %q does not name port 443", body)
		}
	})
	if *calls != 0 {
		t.Errorf("the upstream answered %d requests; every one should have been refused before it", *calls)
	}
}

func TestSecretTLSPort(t *testing.T) {
	for asked, want := range map[int]int{80: 443, 443: 443, 8080: 8080, 8443: 8443} {
		if got := secretTLSPort(asked); got != want {
			t.Errorf("secretTLSPort(%d) = %d, want %d", asked, got, want)
		}
	}
}

func TestSecretHeadersChecked(t *testing.T) {
	tests := []struct {
		name    string
		secrets map[string]http.Header
		want    string // in the error; "" for none
	}{
		{"fine", map[string]http.Header{"api.test": {"X-Api-Key": {"k"}, "Authorization": {"Bearer t"}}}, ""},
		{"no header", map[string]http.Header{"api.test": {}}, "no header"},
		{"bad name", map[string]http.Header{"api.test": {"X Key": {"k"}}}, "is not a header name"},
		{"host", map[string]http.Header{"api.test": {"Host": {"evil.test"}}}, "sets Host itself"},
		{"framing", map[string]http.Header{"api.test": {"transfer-encoding": {"chunked"}}}, "sets transfer-encoding itself"},
		{"proxy header", map[string]http.Header{"api.test": {"Proxy-Authorization": {"x"}}}, "Proxy-* headers"},
		{"empty value", map[string]http.Header{"api.test": {"X-Key": {" "}}}, "empty or holds a control character"},
		{"no value", map[string]http.Header{"api.test": {"X-Key": {}}}, "has no value"},
		{"header injection", map[string]http.Header{"api.test": {"X-Key": {"k\r\nX-Evil: 1"}}}, "control character"},
		{"bad host", map[string]http.Header{"10.0.0.1": {"X-Key": {"k"}}}, "secrets"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(Config{Secrets: tc.secrets})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("New = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, want an error saying %q", err, tc.want)
			}
			if !errors.Is(err, ErrBadConfig) && !errors.Is(err, ErrBadRule) {
				t.Errorf("%v wraps neither ErrBadConfig nor ErrBadRule", err)
			}
		})
	}
}

func TestPolicyCoversHost(t *testing.T) {
	pol := mustPolicy(t, []string{"api.test:8443", "*.cdn.test", "gone.test"}, []string{"gone.test", "x.cdn.test:80"})
	for host, want := range map[string]bool{
		"api.test": true, "API.test.": true, "a.cdn.test": true, "x.cdn.test": true, // x.cdn.test keeps 443
		"cdn.test": false, "gone.test": false, "other.test": false, "10.0.0.1": false,
	} {
		if got := pol.CoversHost(host); got != want {
			t.Errorf("CoversHost(%q) = %v, want %v", host, got, want)
		}
	}
}
