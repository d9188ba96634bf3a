package runsc_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

// fetch is a Python program that lists the sandbox's interfaces and GETs
// url, printing the answer or the error's class.
func fetch(url string) string {
	return fmt.Sprintf(`import socket, urllib.request
print(sorted(n for _, n in socket.if_nameindex()))
try:
    print(urllib.request.urlopen(%q, timeout=5).read().decode())
except Exception as e:
    print("failed", type(e).__name__)
`, url)
}

// serveTag answers every request on ln with tag.
func serveTag(t *testing.T, ln net.Listener, tag string) {
	t.Helper()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, tag) }),
		ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
}

func egressOf(t *testing.T, sb runner.Sandbox) net.Listener {
	t.Helper()
	e, ok := sb.(runner.Egress)
	if !ok {
		t.Fatalf("%T is not a runner.Egress", sb)
	}
	return e.EgressListener()
}

// TestGVisorSandboxNetwork: a networked sandbox has lo and eth0 and
// reaches its own egress listener, and nothing else on the host side: not
// a host service bound to every address, not another sandbox's listener.
// A sandbox without a network has loopback only. A snapshot of a
// networked sandbox restores into clones that each reach their own.
func TestGVisorSandboxNetwork(t *testing.T) {
	e := newRealEnv(t)
	spec := e.specs["python"]
	egressURL := fmt.Sprintf("http://%s:%d/", runner.EgressAddr, runner.EgressPort)

	// A host service on every address: out of the sandboxes' reach.
	host, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	serveTag(t, host, "host")
	hostURL := fmt.Sprintf("http://%s:%d/", runner.EgressAddr, host.Addr().(*net.TCPAddr).Port)

	t.Run("none", func(t *testing.T) {
		sb, err := e.rt.Start(t.Context(), spec)
		if err != nil {
			t.Fatal(err)
		}
		if ln := egressOf(t, sb); ln != nil {
			t.Errorf("a sandbox without a network has an egress listener %v", ln.Addr())
		}
		out := string(runOn(t, sb, fetch(egressURL)).Stdout)
		if !strings.HasPrefix(out, "['lo']\nfailed") {
			t.Errorf("a sandbox without a network printed %q, want loopback only and a failed fetch", out)
		}
	})

	networked := spec
	networked.Network = true
	t.Run("own listener only", func(t *testing.T) {
		var sbs []runner.Sandbox
		for _, tag := range []string{"A", "B"} {
			sb, err := e.rt.Start(t.Context(), networked)
			if err != nil {
				t.Fatal(err)
			}
			ln := egressOf(t, sb)
			if ln == nil {
				t.Fatal("a networked sandbox has no egress listener")
			}
			serveTag(t, ln, tag)
			sbs = append(sbs, sb)
		}
		for i, tag := range []string{"A", "B"} {
			sb := sbs[i]
			res, err := sb.Run(t.Context(), runner.RunRequest{Code: fetch(egressURL) + "\n" + strings.ReplaceAll(fetch(hostURL), "print(sorted", "(sorted"),
				Timeout: 30 * time.Second, MaxStdout: 1 << 20, MaxStderr: 1 << 20}, nil)
			_ = sb.Destroy(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			want := "['eth0', 'lo']\n" + tag + "\nfailed "
			if !strings.HasPrefix(string(res.Stdout), want) {
				t.Errorf("sandbox %s printed %q (stderr %q), want its own listener's %q and the host service unreachable", tag, res.Stdout, res.Stderr, tag)
			}
		}
	})

	t.Run("snapshot clones", func(t *testing.T) {
		rt := snapshotRuntime(t, e, t.TempDir())
		img, err := rt.Snapshot(t.Context(), networked)
		if err != nil {
			t.Fatalf("snapshot: %v", err)
		}
		for _, tag := range []string{"C1", "C2"} {
			sb, err := rt.Restore(t.Context(), img)
			if err != nil {
				t.Fatalf("restore: %v", err)
			}
			ln := egressOf(t, sb)
			if ln == nil {
				t.Fatal("a restored networked sandbox has no egress listener")
			}
			serveTag(t, ln, tag)
			if out := string(runOn(t, sb, fetch(egressURL)).Stdout); out != "['eth0', 'lo']\n"+tag+"\n" {
				t.Errorf("clone %s printed %q, want its own listener's answer", tag, out)
			}
		}
	})
}
