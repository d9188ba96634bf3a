package runsc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

// socketsProbe prints the sandbox's nameservers and what answers at the
// egress address over DNS's port (UDP), 80 and 443 (TCP).
const socketsProbe = `import socket
print([l.split()[1] for l in open("/etc/resolv.conf") if l.startswith("nameserver")])
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.settimeout(5)
try:
    u.sendto(b"ping", ("10.200.0.1", 53)); print("udp53", u.recv(64).decode())
except OSError as e:
    print("udp53 failed", type(e).__name__)
for port in (80, 443):
    try:
        c = socket.create_connection(("10.200.0.1", port), 5); print("tcp%d" % port, c.recv(64).decode())
    except OSError as e:
        print("tcp%d failed" % port, type(e).__name__)
`

// tagSockets answers on ls.HTTP, ls.TLS (a line, then the close) and
// ls.DNS (a datagram back) with tag, until the test ends.
func tagSockets(t *testing.T, ls runner.EgressListeners, tag string) {
	t.Helper()
	if ls.HTTP == nil || ls.TLS == nil || ls.DNS == nil {
		t.Fatalf("egress sockets %+v: want HTTP, TLS and DNS", ls)
	}
	var wg sync.WaitGroup
	for _, ln := range []net.Listener{ls.HTTP, ls.TLS} {
		wg.Go(func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				_, _ = io.WriteString(c, tag)
				_ = c.Close()
			}
		})
	}
	wg.Go(func() {
		buf := make([]byte, 64)
		for {
			_, from, err := ls.DNS.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = ls.DNS.WriteTo([]byte(tag), from)
		}
	})
	t.Cleanup(func() {
		for _, c := range []io.Closer{ls.HTTP, ls.TLS, ls.DNS} {
			if err := c.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
				t.Error(err)
			}
		}
		wg.Wait()
	})
}

// TestGVisorEgressSockets: a networked sandbox's nameserver is the
// egress address, and its DNS (UDP), HTTP and TLS sockets there answer it
// alone: two sandboxes each reach their own. A sandbox without a network
// has no nameserver and no such sockets.
func TestGVisorEgressSockets(t *testing.T) {
	e := newRealEnv(t)
	spec := e.specs["python"]

	sb, err := e.rt.Start(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if ls := sb.(runner.Egress).EgressListeners(); ls != (runner.EgressListeners{}) {
		t.Errorf("a sandbox without a network has egress sockets %+v", ls)
	}
	if out := string(runOn(t, sb, socketsProbe).Stdout); !strings.HasPrefix(out, "[]\nudp53 failed") {
		t.Errorf("a sandbox without a network printed %q, want no nameserver and nothing at the egress address", out)
	}

	networked := spec
	networked.Network = true
	var sbs []runner.Sandbox
	for _, tag := range []string{"A", "B"} {
		sb, err := e.rt.Start(t.Context(), networked)
		if err != nil {
			t.Fatal(err)
		}
		defer sb.Destroy(context.Background())
		tagSockets(t, sb.(runner.Egress).EgressListeners(), tag)
		sbs = append(sbs, sb)
	}
	for i, tag := range []string{"A", "B"} {
		res, err := sbs[i].Run(t.Context(), runner.RunRequest{Code: socketsProbe, Timeout: 30 * time.Second, MaxStdout: 1 << 20, MaxStderr: 1 << 20}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("['%s']\nudp53 %s\ntcp80 %s\ntcp443 %s\n", runner.EgressAddr, tag, tag, tag)
		if string(res.Stdout) != want {
			t.Errorf("sandbox %s printed %q (stderr %q), want %q", tag, res.Stdout, res.Stderr, want)
		}
	}
}
