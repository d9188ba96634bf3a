package main

import (
	"fmt"
	"net/http"
	"os/exec"
	"testing"
	"time"
)

// TestE2BSDKNetwork drives the real E2B SDK's network options
// (doors/clients/e2b_network.mjs) on a real Paddock on gVisor: allowOut
// names reach their host and nothing else, allowInternetAccess gets the
// server's whole allowance, a sandbox that asks for nothing, or denies all
// traffic, has loopback only, and an address in allowOut is refused at
// create; getInfo reports what each got.
func TestE2BSDKNetwork(t *testing.T) {
	if _, err := exec.LookPath("ip"); err != nil {
		t.Fatal("ip (iproute2) is needed to build the test's network namespaces: make test installs it")
	}
	e := newE2EWith(t, "--egress-allow=upstream.test other.test",
		"--egress-hosts=upstream.test="+upstreamAddr+",other.test="+upstreamAddr)
	ns := startInternet(t)
	ln := listenIn(t, ns, upstreamAddr+":80")
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s", r.Host)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	got := nodeScript(t, "e2b_network.mjs", "E2B_API_URL="+e.srv.URL, "E2B_SANDBOX_URL="+e.srv.URL, "E2B_API_KEY=unused")
	want := `{
		"hosts": {"lines": ["['eth0', 'lo']", "hello from upstream.test", "refused 403 not_allowed"], "error": null,
			"allowInternetAccess": true, "allowOut": ["upstream.test"]},
		"update": {"seen": [["refused 403 not_allowed", "hello from other.test"], ["refused 403 not_allowed", "refused 403 not_allowed"]],
			"allowInternetAccess": false},
		"updateNone": {"threw": "SandboxError", "message": "409: this session was created without a network, and a running sandbox cannot get an interface: create it with one"},
		"internet": {"lines": ["['eth0', 'lo']", "hello from upstream.test", "hello from other.test"], "error": null,
			"allowInternetAccess": true, "allowOut": null},
		"none": {"lines": ["['lo']", "failed URLError", "failed URLError"], "error": null, "allowInternetAccess": false, "allowOut": null},
		"denyAll": {"lines": ["['lo']", "failed URLError", "failed URLError"], "error": null, "allowInternetAccess": false, "allowOut": null},
		"address": {"threw": "SandboxError",
			"message": "400: network.allowOut: \"8.8.8.8\" is an address; Paddock's egress allows host names only (and refuses raw addresses)"}
	}`
	expectReport(t, got, want)
	if left := e.st.Kernels.ListAll(); len(left) != 0 {
		t.Errorf("sessions left after kill: %+v", left)
	}
}
