package egressbench

import (
	"net"
	"os"
	"os/exec"
	"testing"

	"github.com/paddock-dev/paddock/benchmarks/internal/report"
)

// The client program, run by the host's Python against the stand-in on
// loopback, downloads each size whole; the first fetch is not counted.
func TestClientDownloadsFromStandin(t *testing.T) {
	if _, err := os.Stat(hostPython); err != nil {
		t.Skipf("no %s: %v", hostPython, err)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := standin()
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	addr := ln.Addr().(*net.TCPAddr)
	p := plan{Addr: [2]any{addr.IP.String(), addr.Port}, Host: "upstream.bench:8080", Sizes: []int64{1000, 3 << 20, 0}}
	out, err := exec.CommandContext(t.Context(), hostPython, "-c", program(p)).Output()
	if err != nil {
		t.Fatalf("the client: %v", err)
	}
	fs, err := parseFetches(string(out), report.EgressHost, 2)
	if err != nil || len(fs) != 3 {
		t.Fatalf("parseFetches(%q) = %+v, %v", out, fs, err)
	}
	for i, want := range []int64{1000, 3 << 20, 0} {
		f := fs[i]
		if f.Bytes != want || f.Counted != (i > 0) || f.Round != 2 || f.Path != report.EgressHost || f.FirstByte <= 0 || f.Total < f.FirstByte {
			t.Errorf("fetch %d: %+v, want %d bytes, counted %v", i, f, want, i > 0)
		}
	}
}

func TestParseFetchesRefusesShortBodies(t *testing.T) {
	for name, out := range map[string]string{
		"short":  "[1000, 0.001, 0.002, 999, 200]\n",
		"status": "[1000, 0.001, 0.002, 1000, 403]\n",
		"junk":   "Traceback\n",
	} {
		if _, err := parseFetches(out, report.EgressConnect, 0); err == nil {
			t.Errorf("%s: %q parsed without an error", name, out)
		}
	}
}
