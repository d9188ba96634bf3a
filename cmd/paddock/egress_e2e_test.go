package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netns"
)

// internet is a stand-in for the internet in a network namespace the test
// makes: an HTTP server at upstreamAddr, reachable from the host over a
// veth and from nowhere else; no packet of the test leaves the host.
const (
	upstreamAddr = "11.200.0.1"
	upstreamHost = "11.200.0.2"
)

// startInternet makes the stand-in and returns its namespace's name, for
// more listeners in it.
func startInternet(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("pdtest-inet-%d", time.Now().UnixNano()%1_000_000)
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v\n%s", args, err, out)
		}
	}
	hostDev, nsDev := "pdti"+name[len(name)-6:], "pdto"+name[len(name)-6:]
	ip("netns", "add", name)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	ip("link", "add", hostDev, "type", "veth", "peer", "name", nsDev)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", hostDev).Run() })
	ip("link", "set", nsDev, "netns", name)
	ip("addr", "add", upstreamHost+"/30", "dev", hostDev)
	ip("link", "set", hostDev, "up")
	ip("-n", name, "addr", "add", upstreamAddr+"/30", "dev", nsDev)
	ip("-n", name, "link", "set", nsDev, "up")

	ln := listenIn(t, name, upstreamAddr+":8080")
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" { // 2 MiB, over the test server's --egress-max-mb
			_, _ = w.Write(make([]byte, 2<<20))
			return
		}
		fmt.Fprintf(w, "hello from %s", r.Host)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return name
}

// listenIn opens a TCP listener at addr inside network namespace name.
func listenIn(t *testing.T, name, addr string) net.Listener {
	t.Helper()
	ch := make(chan any, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends in the namespace with its goroutine
		ns, err := netns.GetFromName(name)
		if err == nil {
			err = netns.Set(ns)
			ns.Close()
		}
		if err != nil {
			ch <- err
			return
		}
		ln, err := net.Listen("tcp4", addr)
		if err != nil {
			ch <- err
			return
		}
		ch <- ln
	}()
	switch v := (<-ch).(type) {
	case net.Listener:
		return v
	default:
		t.Fatalf("listening in %s: %v", name, v)
		return nil
	}
}

type networkAnswer struct {
	Stdout  string `json:"stdout"`
	Stderr  string `json:"stderr"`
	Reason  string `json:"reason"`
	Network *struct {
		Policy struct {
			Mode  string   `json:"mode"`
			Allow []string `json:"allow"`
		} `json:"policy"`
		Connections int64            `json:"connections"`
		BytesIn     int64            `json:"bytes_in"`
		Refused     map[string]int64 `json:"refused"`
	} `json:"network"`
}

// fetchAll is a Python program that lists its interfaces and GETs each
// URL through whatever proxy its environment names.
func fetchAll(urls ...string) string {
	list, _ := json.Marshal(urls)
	return fmt.Sprintf(`import socket, urllib.request, urllib.error
print(sorted(n for _, n in socket.if_nameindex()))
for u in %s:
    try:
        print(urllib.request.urlopen(u, timeout=10).read().decode())
    except urllib.error.HTTPError as e:
        print("refused", e.code, e.headers.get("X-Paddock-Egress-Refused"))
    except Exception as e:
        print("failed", type(e).__name__)
`, list)
}

// TestE2EEgress: a run that asks for a network reaches what the server
// allows and it asked for, through the host-side proxy, and nothing else:
// not a host the server does not allow, not an allowed name that resolves
// to loopback, not a raw address; a run that asks for more than the
// server allows gets only the overlap, one that asks for nothing allowed
// is refused, and one that asks for no network has loopback only.
// Refusals are in the answer and in /metrics.
func TestE2EEgress(t *testing.T) {
	if _, err := exec.LookPath("ip"); err != nil {
		t.Fatal("ip (iproute2) is needed to build the test's network namespaces: make test installs it")
	}
	secret := newSecretHost(t)
	e := newE2EWith(t, append([]string{"--egress-allow=upstream.test:8080 local.test:8080 *.allowed.test:8080 secret.test:8443", "--egress-max-mb=1",
		"--egress-hosts=upstream.test=" + upstreamAddr + ",other.test=" + upstreamAddr + ",local.test=127.0.0.1,a.allowed.test=" + upstreamAddr +
			",secret.test=" + upstreamAddr}, secret.flags...)...)
	secret.serve(t, startInternet(t))

	run := func(t *testing.T, code string, network any) (int, networkAnswer, string) {
		t.Helper()
		body := map[string]any{"language": "python", "code": code, "timeout_ms": 20000}
		if network != nil {
			body["network"] = network
		}
		status, raw := e.do(t, "POST", "/v1/run", body, "")
		var a networkAnswer
		if status == http.StatusOK {
			if err := json.Unmarshal(raw, &a); err != nil {
				t.Fatalf("decoding %s: %v", raw, err)
			}
		}
		return status, a, string(raw)
	}

	t.Run("allowed and refused", func(t *testing.T) {
		status, a, raw := run(t, fetchAll("http://upstream.test:8080/", "http://other.test:8080/", "http://local.test:8080/",
			"http://"+upstreamAddr+":8080/", "http://a.allowed.test:8080/"),
			map[string]any{"allow": []string{"upstream.test:8080", "local.test:8080", "other.test:8080"}})
		if status != http.StatusOK || a.Network == nil {
			t.Fatalf("HTTP %d %s", status, raw)
		}
		want := strings.Join([]string{"['eth0', 'lo']", "hello from upstream.test:8080", "refused 403 not_allowed",
			"refused 403 blocked_address", "refused 403 raw_ip", "refused 403 not_allowed"}, "\n") + "\n"
		if a.Stdout != want {
			t.Errorf("stdout %q (stderr %q, reason %s), want %q", a.Stdout, a.Stderr, a.Reason, want)
		}
		// other.test is not the server's to give: narrowed away.
		got := slices.Sorted(slices.Values(a.Network.Policy.Allow))
		if a.Network.Policy.Mode != "allowlist" || !slices.Equal(got, []string{"local.test:8080", "upstream.test:8080"}) {
			t.Errorf("policy %+v, want upstream.test and local.test only", a.Network.Policy)
		}
		if a.Network.Connections < 1 || a.Network.BytesIn <= 0 || a.Network.Refused["not_allowed"] != 2 ||
			a.Network.Refused["blocked_address"] != 1 || a.Network.Refused["raw_ip"] != 1 {
			t.Errorf("network report %+v", a.Network)
		}
	})

	t.Run("templates list the allowance", func(t *testing.T) {
		var tl struct {
			Templates []struct {
				Name    string `json:"name"`
				Network struct {
					Mode  string   `json:"mode"`
					Allow []string `json:"allow"`
				} `json:"network"`
			} `json:"templates"`
		}
		if status := getJSON(t, e.srv.URL+"/v1/templates", &tl); status != http.StatusOK || len(tl.Templates) == 0 {
			t.Fatalf("GET /v1/templates: HTTP %d, %d templates", status, len(tl.Templates))
		}
		want := []string{"*.allowed.test:8080", "local.test:8080", "secret.test:8443", "upstream.test:8080"}
		for _, tpl := range tl.Templates {
			if got := slices.Sorted(slices.Values(tpl.Network.Allow)); tpl.Network.Mode != "allowlist" || !slices.Equal(got, want) {
				t.Errorf("template %s: network %+v, want an allowlist of %v", tpl.Name, tpl.Network, want)
			}
		}
	})

	t.Run("secret header", func(t *testing.T) { testEgressSecrets(t, secret, run) })

	t.Run("byte limit", func(t *testing.T) {
		code := `import urllib.request
try:
    print(len(urllib.request.urlopen("http://upstream.test:8080/big", timeout=10).read()))
except Exception as e:
    print("cut", type(e).__name__)
`
		status, a, raw := run(t, code, map[string]any{"allow": []string{"upstream.test:8080"}})
		if status != http.StatusOK || a.Network == nil || !strings.HasPrefix(a.Stdout, "cut ") || a.Network.Refused["byte_limit"] != 1 ||
			a.Network.BytesIn != 1<<20 {
			t.Errorf("a 2 MiB download under --egress-max-mb=1: HTTP %d %s; want it cut at 1 MiB, byte_limit counted", status, raw)
		}
	})

	t.Run("nothing allowed", func(t *testing.T) {
		status, _, raw := run(t, "print(1)", map[string]any{"allow": []string{"evil.test"}})
		if status != http.StatusForbidden || !strings.Contains(raw, `"network_not_allowed"`) {
			t.Errorf("asking only for a host the server does not allow: HTTP %d %s, want 403 network_not_allowed", status, raw)
		}
		status, _, raw = run(t, "print(1)", map[string]any{"allow": []string{"10.0.0.1"}})
		if status != http.StatusBadRequest || !strings.Contains(raw, "network") {
			t.Errorf("a raw address as a rule: HTTP %d %s, want 400", status, raw)
		}
	})

	t.Run("no network asked", func(t *testing.T) {
		status, a, raw := run(t, fetchAll("http://upstream.test:8080/"), nil)
		if status != http.StatusOK || a.Network != nil || a.Stdout != "['lo']\nfailed URLError\n" {
			t.Errorf("HTTP %d %s, want loopback only, a failed fetch and no network report", status, raw)
		}
	})

	// The hostile cases about the network (H41, H43), with a policy on:
	// the host's API and addresses, the gateway on other ports, the
	// stand-in internet directly, DNS and packet sockets all fail.
	t.Run("hostile with a policy on", func(t *testing.T) {
		targets := []string{e.srv.Listener.Addr().String(), "10.200.0.1:" + strings.Split(e.srv.Listener.Addr().String(), ":")[1],
			"10.200.0.1:22", upstreamAddr + ":8080", upstreamHost + ":8080"}
		addrs, _ := net.InterfaceAddrs()
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil {
				targets = append(targets, net.JoinHostPort(ipn.IP.String(), strings.Split(e.srv.Listener.Addr().String(), ":")[1]))
			}
		}
		list, _ := json.Marshal(targets)
		code := fmt.Sprintf(`import socket
for t in %s:
    h, p = t.rsplit(":", 1)
    try:
        socket.create_connection((h, int(p)), 3).close(); print("CONNECTED", t)
    except OSError as e:
        print("no", type(e).__name__)
try:
    socket.getaddrinfo("exfil.sbx.invalid", 80); print("RESOLVED")
except OSError as e:
    print("dns", type(e).__name__)
try:
    socket.socket(socket.AF_PACKET, socket.SOCK_RAW); print("PACKET")
except OSError as e:
    print("packet", type(e).__name__)
`, list)
		status, a, raw := run(t, code, map[string]any{"allow": []string{"upstream.test:8080"}})
		if status != http.StatusOK {
			t.Fatalf("HTTP %d %s", status, raw)
		}
		for _, bad := range []string{"CONNECTED", "RESOLVED", "PACKET"} {
			if strings.Contains(a.Stdout, bad) {
				t.Errorf("a networked sandbox got out: %s", a.Stdout)
			}
		}
		lines := strings.Split(strings.TrimSpace(a.Stdout), "\n")
		failed := 0
		for _, l := range lines {
			if strings.HasPrefix(l, "no ") {
				failed++
			}
		}
		if failed != len(targets) || !slices.Contains(lines, "packet PermissionError") || !strings.HasPrefix(lines[len(lines)-2], "dns ") {
			t.Errorf("stdout %q (stderr %q), want every connection, the lookup and the packet socket to fail", a.Stdout, a.Stderr)
		}
	})

	if m := e.metrics(t); !strings.Contains(m, `paddock_egress_refused_total{reason="not_allowed"} 2`) ||
		!strings.Contains(m, `paddock_egress_refused_total{reason="raw_ip"} 1`) {
		t.Errorf("/metrics does not count the refusals by reason:\n%s", grepLines(m, "paddock_egress"))
	}
}
