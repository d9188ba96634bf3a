package runsc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/paddock-dev/paddock/runner"
)

// Sandbox networks (runner.Spec.Network). Every networked sandbox has the
// same inside shape, so that a snapshot taken in one restores into any
// other (gVisor's netstack keeps its interfaces in the image): one
// interface, eth0, runner.SandboxAddr/30, default route via
// runner.EgressAddr. Its peer is the host end of a veth that lives in one
// namespace of the runtime's own, the egress namespace, where nothing but
// the sandboxes' egress listeners is bound (the host's services, bound in
// the host's namespace, are out of reach) and nothing is forwarded (a
// fresh namespace forwards nothing). All host ends carry the same
// address; each sandbox's listener is bound to its own device
// (SO_BINDTODEVICE), which keeps every reply on the device it came from
// and sandboxes apart.

const (
	egressPort  = runner.EgressPort
	insideIf    = "eth0"
	netnsPrefix = "paddock-"
	prefixBits  = 30
)

// sandboxNet is one sandbox's network: its namespace and its sockets.
type sandboxNet struct {
	ns      string // name under /run/netns
	hostDev string // the host end's device, in the egress namespace
	ls      runner.EgressListeners
}

// nets are a runtime's sandbox networks, by container id.
type nets struct {
	mu     sync.Mutex
	egress string // the egress namespace's name; "" until first used
	byID   map[string]*sandboxNet
}

// networkMode is runsc's --network for a sandbox of spec: gVisor's
// netstack on the sandbox's namespace, or none.
func networkMode(spec runner.Spec) string {
	if spec.Network {
		return "sandbox"
	}
	return "none"
}

// egressOf is container id's egress sockets; all nil without a network.
func (rt *Runtime) egressOf(id string) runner.EgressListeners {
	rt.nets.mu.Lock()
	defer rt.nets.mu.Unlock()
	if n := rt.nets.byID[id]; n != nil {
		return n.ls
	}
	return runner.EgressListeners{}
}

// egressName is the egress namespace of the runtime whose runsc root is
// root: one per state directory, so that servers on one host keep apart.
func egressName(root string) string { return netnsPrefix + rootTag(root) + "-egress" }

// rootTag names a runsc root in the namespaces of its sandboxes.
func rootTag(root string) string {
	sum := sha256.Sum256([]byte(root))
	return hex.EncodeToString(sum[:4])
}

// reapNets removes the namespaces this runtime's root named that no
// sandbox of it uses: those of a server that died without removing them.
// It returns how many it removed.
func (rt *Runtime) reapNets() (int, error) {
	entries, err := os.ReadDir(netnsDir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, nil
		}
		return 0, err
	}
	prefix := netnsPrefix + rootTag(rt.runsc.Root) + "-pd-"
	rt.nets.mu.Lock()
	defer rt.nets.mu.Unlock()
	n := 0
	var errs []error
	for _, e := range entries {
		id, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || rt.nets.byID["pd-"+id] != nil {
			continue
		}
		errs = append(errs, netns.DeleteNamed(e.Name()))
		n++
	}
	return n, errors.Join(errs...)
}

// newNet makes container id's network: its namespace, the veth, the
// addresses and the listener. The namespace's path goes into the
// container's spec.
func (rt *Runtime) newNet(id string) (_ *sandboxNet, err error) {
	rt.nets.mu.Lock()
	defer rt.nets.mu.Unlock()
	if rt.nets.byID == nil {
		rt.nets.byID = map[string]*sandboxNet{}
	}
	if rt.nets.egress == "" {
		name := egressName(rt.runsc.Root)
		if _, err := os.Stat(filepath.Join(netnsDir, name)); err != nil {
			if err := makeNamedNS(name); err != nil {
				return nil, fmt.Errorf("making the egress network namespace: %w", err)
			}
		}
		rt.nets.egress = name
	}
	short := strings.TrimPrefix(id, "pd-")
	n := &sandboxNet{ns: netnsPrefix + rootTag(rt.runsc.Root) + "-" + id, hostDev: "pe" + short[:min(len(short), 12)]}
	defer func() {
		if err != nil {
			err = errors.Join(err, n.close(rt.nets.egress))
		}
	}()
	if err := makeNamedNS(n.ns); err != nil {
		return nil, fmt.Errorf("making the network namespace of %s: %w", id, err)
	}
	if err := plumb(rt.nets.egress, n); err != nil {
		return nil, fmt.Errorf("wiring the network of %s: %w", id, err)
	}
	if n.ls, err = listenOn(rt.nets.egress, n.hostDev); err != nil {
		return nil, fmt.Errorf("listening for the egress of %s: %w", id, err)
	}
	rt.nets.byID[id] = n
	return n, nil
}

// dropNet closes container id's listener and removes its network, if it
// has one.
func (rt *Runtime) dropNet(id string) error {
	rt.nets.mu.Lock()
	n := rt.nets.byID[id]
	delete(rt.nets.byID, id)
	egress := rt.nets.egress
	rt.nets.mu.Unlock()
	if n == nil {
		return nil
	}
	return n.close(egress)
}

// closeNets removes the egress namespace, once every sandbox is gone.
func (rt *Runtime) closeNets() error {
	rt.nets.mu.Lock()
	defer rt.nets.mu.Unlock()
	var errs []error
	for id, n := range rt.nets.byID {
		errs = append(errs, n.close(rt.nets.egress))
		delete(rt.nets.byID, id)
	}
	if rt.nets.egress != "" {
		errs = append(errs, netns.DeleteNamed(rt.nets.egress))
		rt.nets.egress = ""
	}
	return errors.Join(errs...)
}

func (n *sandboxNet) close(egress string) error {
	var errs []error
	// The proxy served on the sockets may have closed them first.
	for _, c := range closersOf(n.ls) {
		if err := c.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	// Removing the host end removes its peer with it.
	if h, err := handleAt(egress); err == nil {
		if l, err := h.LinkByName(n.hostDev); err == nil {
			errs = append(errs, h.LinkDel(l))
		}
		h.Close()
	}
	if _, err := os.Stat(filepath.Join(netnsDir, n.ns)); err == nil {
		errs = append(errs, netns.DeleteNamed(n.ns))
	}
	return errors.Join(errs...)
}

// netnsDir is where named network namespaces are pinned (as `ip netns`
// does), so that operators can list them.
const netnsDir = "/run/netns"

// path is the namespace's file, for the container's spec.
func (n *sandboxNet) path() string { return filepath.Join(netnsDir, n.ns) }

// makeNamedNS makes and pins a network namespace without leaving the
// calling thread in it.
func makeNamedNS(name string) error {
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer orig.Close()
	ns, err := netns.NewNamed(name)
	if err == nil {
		ns.Close()
	}
	if serr := netns.Set(orig); serr != nil {
		// This thread is in the wrong namespace: leave it locked, and it
		// ends with its goroutine.
		return errors.Join(err, serr)
	}
	runtime.UnlockOSThread()
	if err == nil {
		err = loUp(name)
	}
	return err
}

func loUp(name string) error {
	h, err := handleAt(name)
	if err != nil {
		return err
	}
	defer h.Close()
	lo, err := h.LinkByName("lo")
	if err != nil {
		return err
	}
	return h.LinkSetUp(lo)
}

func handleAt(name string) (*netlink.Handle, error) {
	ns, err := netns.GetFromName(name)
	if err != nil {
		return nil, err
	}
	defer ns.Close()
	return netlink.NewHandleAt(ns)
}

// plumb makes n's veth: the host end in the egress namespace, the other
// as eth0 in n's, both addressed and up, the sandbox's default route via
// the host end.
func plumb(egress string, n *sandboxNet) error {
	eh, err := handleAt(egress)
	if err != nil {
		return err
	}
	defer eh.Close()
	sbNS, err := netns.GetFromName(n.ns)
	if err != nil {
		return err
	}
	defer sbNS.Close()
	sh, err := netlink.NewHandleAt(sbNS)
	if err != nil {
		return err
	}
	defer sh.Close()

	attrs := netlink.NewLinkAttrs()
	attrs.Name = n.hostDev
	veth := &netlink.Veth{LinkAttrs: attrs, PeerName: insideIf, PeerNamespace: netlink.NsFd(int(sbNS))}
	if err := eh.LinkAdd(veth); err != nil {
		return fmt.Errorf("adding the veth: %w", err)
	}
	host, err := eh.LinkByName(n.hostDev)
	if err != nil {
		return err
	}
	if err := eh.AddrAdd(host, &netlink.Addr{IPNet: ipNet(runner.EgressAddr)}); err != nil {
		return fmt.Errorf("addressing the host end: %w", err)
	}
	if err := eh.LinkSetUp(host); err != nil {
		return err
	}
	inside, err := sh.LinkByName(insideIf)
	if err != nil {
		return err
	}
	if err := sh.AddrAdd(inside, &netlink.Addr{IPNet: ipNet(runner.SandboxAddr)}); err != nil {
		return fmt.Errorf("addressing the sandbox end: %w", err)
	}
	if err := sh.LinkSetUp(inside); err != nil {
		return err
	}
	gw := net.ParseIP(runner.EgressAddr)
	if err := sh.RouteAdd(&netlink.Route{LinkIndex: inside.Attrs().Index, Gw: gw}); err != nil {
		return fmt.Errorf("routing the sandbox: %w", err)
	}
	return nil
}

func ipNet(addr string) *net.IPNet {
	return &net.IPNet{IP: net.ParseIP(addr).To4(), Mask: net.CIDRMask(prefixBits, 32)}
}

// listenOn opens the sandbox's egress sockets at runner.EgressAddr in the
// egress namespace, each bound to dev: only its sandbox reaches them.
// On failure it closes what it opened.
func listenOn(egress, dev string) (ls runner.EgressListeners, err error) {
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return ls, err
	}
	defer orig.Close()
	target, err := netns.GetFromName(egress)
	if err != nil {
		runtime.UnlockOSThread()
		return ls, err
	}
	defer target.Close()
	if err := netns.Set(target); err != nil {
		runtime.UnlockOSThread()
		return ls, err
	}
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptString(int(fd), syscall.SOL_SOCKET, syscall.SO_BINDTODEVICE, dev)
			if serr == nil {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
			}
		}); err != nil {
			return err
		}
		return serr
	}}
	at := func(port int) string { return net.JoinHostPort(runner.EgressAddr, strconv.Itoa(port)) }
	// A socket stays in the namespace it was made in.
	ctx := context.Background()
	ls.Proxy, err = lc.Listen(ctx, "tcp4", at(egressPort))
	if err == nil {
		ls.HTTP, err = lc.Listen(ctx, "tcp4", at(runner.HTTPPort))
	}
	if err == nil {
		ls.TLS, err = lc.Listen(ctx, "tcp4", at(runner.TLSPort))
	}
	if err == nil {
		ls.DNS, err = lc.ListenPacket(ctx, "udp4", at(runner.DNSPort))
	}
	if serr := netns.Set(orig); serr != nil {
		err = errors.Join(err, serr) // the thread stays locked and ends with its goroutine
	} else {
		runtime.UnlockOSThread()
	}
	if err != nil {
		for _, c := range closersOf(ls) {
			_ = c.Close()
		}
		return runner.EgressListeners{}, err
	}
	return ls, nil
}

// closersOf lists the sockets ls holds.
func closersOf(ls runner.EgressListeners) []io.Closer {
	var out []io.Closer
	for _, ln := range []net.Listener{ls.Proxy, ls.HTTP, ls.TLS} {
		if ln != nil {
			out = append(out, ln)
		}
	}
	if ls.DNS != nil {
		out = append(out, ls.DNS)
	}
	return out
}
