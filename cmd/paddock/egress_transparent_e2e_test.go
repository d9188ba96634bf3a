package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// transparentProbe is a Python program that drops every proxy variable
// and reaches out as code that knows nothing of proxies does: the
// sandbox's nameserver, getent, urllib over http and https with no
// proxy, and a TLS handshake by address with a chosen server name.
const transparentProbe = `import os, socket, ssl, subprocess, urllib.request, urllib.error
for k in list(os.environ):
    if k.lower().endswith("_proxy"):
        del os.environ[k]
print([l.split()[1] for l in open("/etc/resolv.conf") if l.startswith("nameserver")])
for n in ["web.test", "evil.test"]:
    r = subprocess.run(["getent", "hosts", n], capture_output=True, text=True)
    print("getent", n, r.returncode, r.stdout.split()[:1])
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=ctx))
for u in ["http://web.test/", "http://meta.test/", "http://loop.test/", "https://web.test/", "https://a.web.test/", "https://meta.test/"]:
    try:
        print(opener.open(u, timeout=10).read().decode())
    except urllib.error.HTTPError as e:
        print("refused", e.code, e.headers.get("X-Paddock-Egress-Refused"))
    except Exception as e:
        print("failed", type(e).__name__)
try:
    s = ctx.wrap_socket(socket.create_connection(("10.200.0.1", 443), 10), server_hostname="evil.test")
    print("TLS THROUGH", s.version())
except Exception as e:
    print("tls refused", type(e).__name__)
`

// TestE2EEgressTransparent: code that ignores the proxy variables still
// reaches what its policy allows, and only that, enforced on the host
// side: the sandbox's nameserver is the egress DNS responder, which
// gives allowed names the proxy's address and fails the rest; plain
// HTTP goes by its Host header and HTTPS by its TLS server name to the
// stand-in internet; an allowed name resolving (host side) to
// 169.254.169.254 or 127.0.0.1 is refused, and so is a server name the
// policy does not allow. The refusals are in the answer and /metrics.
func TestE2EEgressTransparent(t *testing.T) {
	if _, err := exec.LookPath("ip"); err != nil {
		t.Fatal("ip (iproute2) is needed to build the test's network namespaces: make test installs it")
	}
	e := newE2EWith(t, "--egress-allow=web.test *.web.test:443 meta.test loop.test:80 evil.test",
		"--egress-hosts=web.test="+upstreamAddr+",a.web.test="+upstreamAddr+",evil.test="+upstreamAddr+
			",meta.test=169.254.169.254,loop.test=127.0.0.1")
	ns := startInternet(t)
	web := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "http hello from %s", r.Host)
	})}
	go func() { _ = web.Serve(listenIn(t, ns, upstreamAddr+":80")) }()
	t.Cleanup(func() { _ = web.Close() })
	tlsWeb := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "tls hello from %s", r.TLS.ServerName)
	}))
	tlsWeb.Listener.Close()
	tlsWeb.Listener = listenIn(t, ns, upstreamAddr+":443")
	tlsWeb.StartTLS()
	t.Cleanup(tlsWeb.Close)

	body := map[string]any{"language": "python", "code": transparentProbe, "timeout_ms": 30000,
		"network": map[string]any{"allow": []string{"web.test", "*.web.test:443", "meta.test", "loop.test:80"}}}
	status, raw := e.do(t, "POST", "/v1/run", body, "")
	var a networkAnswer
	if status != http.StatusOK || json.Unmarshal(raw, &a) != nil || a.Network == nil {
		t.Fatalf("HTTP %d %s", status, raw)
	}
	want := strings.Join([]string{
		"['10.200.0.1']",
		"getent web.test 0 ['10.200.0.1']",
		"getent evil.test 2 []",
		"http hello from web.test",
		"refused 403 blocked_address",
		"refused 403 blocked_address",
		"tls hello from web.test",
		"tls hello from a.web.test",
		"failed URLError",
		"tls refused SSLError",
	}, "\n") + "\n"
	if a.Stdout != want {
		t.Errorf("stdout %q (stderr %q, reason %s), want %q", a.Stdout, a.Stderr, a.Reason, want)
	}
	// evil.test is the server's to give but not asked for: its name does
	// not resolve inside and its server name is refused.
	r := a.Network.Refused
	if r["dns_refused"] < 1 || r["blocked_address"] != 3 || r["not_allowed"] != 1 || a.Network.Connections != 3 {
		t.Errorf("network report %+v, want dns_refused, 3 blocked_address, 1 not_allowed, 3 connections", a.Network)
	}
	if m := e.metrics(t); strings.Contains(m, `paddock_egress_refused_total{reason="dns_refused"} 0`) ||
		!strings.Contains(m, `paddock_egress_refused_total{reason="blocked_address"} 3`) {
		t.Errorf("/metrics does not count the transparent refusals:\n%s", grepLines(m, "paddock_egress_refused"))
	}

	// A sandbox without a network keeps the root filesystem's resolv.conf.
	status, raw = e.do(t, "POST", "/v1/run", map[string]any{"language": "python",
		"code": `print([l.split()[1] for l in open("/etc/resolv.conf") if l.startswith("nameserver")])`}, "")
	if status != http.StatusOK || !strings.Contains(string(raw), `"stdout":"[]\n"`) {
		t.Errorf("a run without a network: HTTP %d %s, want no nameserver", status, raw)
	}
}
