package egressbench

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/vishvananda/netns"
)

// The stand-in internet: its namespace's end of the veth and the host's.
// They are apart from the e2e tests' 11.200.0.0/30, so that both can run
// at once, and outside every range the egress guard refuses.
const (
	standinAddr = "11.201.0.1"
	standinHost = "11.201.0.2"
	standinPort = 8080
	// standinName is the name the server pins to standinAddr.
	standinName = "upstream.bench"
	// directPort is the listener the bench opens in the egress namespace
	// for the sandbox's direct downloads, beside the proxy's port.
	directPort = 18080
)

// internet is the stand-in's network namespace and veth.
type internet struct {
	ns, hostDev string
}

// newInternet makes the stand-in's namespace, with one end of a veth in
// it at standinAddr and the other in the host's at standinHost.
func newInternet() (_ *internet, err error) {
	tag := fmt.Sprintf("%05d", os.Getpid()%100000)
	in := &internet{ns: "pdbench-inet-" + tag, hostDev: "pbi" + tag}
	nsDev := "pbo" + tag
	defer func() {
		if err != nil {
			in.close()
		}
	}()
	for _, args := range [][]string{
		{"netns", "add", in.ns},
		{"link", "add", in.hostDev, "type", "veth", "peer", "name", nsDev},
		{"link", "set", nsDev, "netns", in.ns},
		{"addr", "add", standinHost + "/30", "dev", in.hostDev},
		{"link", "set", in.hostDev, "up"},
		{"-n", in.ns, "addr", "add", standinAddr + "/30", "dev", nsDev},
		{"-n", in.ns, "link", "set", nsDev, "up"},
		{"-n", in.ns, "link", "set", "lo", "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
	}
	return in, nil
}

// close removes the veth (both ends) and the namespace.
func (in *internet) close() {
	_ = exec.Command("ip", "link", "del", in.hostDev).Run()
	_ = exec.Command("ip", "netns", "del", in.ns).Run()
}

// listenIn opens a TCP listener at addr inside the named network
// namespace; the socket stays there, served from the bench's own.
func listenIn(name, addr string) (net.Listener, error) {
	type result struct {
		ln  net.Listener
		err error
	}
	ch := make(chan result, 1)
	go func() {
		// Never unlocked: the thread ends in the namespace with its
		// goroutine, and no other goroutine runs on it.
		runtime.LockOSThread()
		ns, err := netns.GetFromName(name)
		if err == nil {
			err = netns.Set(ns)
			ns.Close()
		}
		if err != nil {
			ch <- result{err: err}
			return
		}
		ln, err := net.Listen("tcp4", addr)
		ch <- result{ln, err}
	}()
	r := <-ch
	if r.err != nil {
		return nil, fmt.Errorf("listening at %s in %s: %w", addr, name, r.err)
	}
	return r.ln, nil
}

// egressNS is the egress namespace of the server whose state directory
// is state, named as runner/runsc names it: "paddock-", the first four
// bytes of the SHA-256 of its runsc root in hex, "-egress".
func egressNS(state string) string {
	sum := sha256.Sum256([]byte(filepath.Join(state, "runsc")))
	return "paddock-" + hex.EncodeToString(sum[:4]) + "-egress"
}

// sandboxLinks counts the links in the named namespace other than
// loopback: the host ends of the sandboxes' veths.
func sandboxLinks(name string) (int, error) {
	out, err := exec.Command("ip", "-n", name, "-o", "link", "show").CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("listing the links of %s: %v: %s", name, err, strings.TrimSpace(string(out)))
	}
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" && !strings.Contains(l, ": lo:") {
			n++
		}
	}
	return n, nil
}
