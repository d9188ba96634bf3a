package runsc_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/ocispec"
	"github.com/paddock-dev/paddock/runner/runsc"
	"github.com/paddock-dev/paddock/templates"
)

// tagListener records the first line of every connection accepted on one
// sandbox's egress listener and answers with its own tag.
type tagListener struct {
	tag  string
	done chan struct{} // closed when Accept fails: the listener is closed

	mu   sync.Mutex
	seen []string
}

func serveTags(t *testing.T, ln net.Listener, tag string) *tagListener {
	t.Helper()
	l := &tagListener{tag: tag, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.SetDeadline(time.Now().Add(time.Minute)) // a safety net against a client that never writes
			line, _ := bufio.NewReader(c).ReadString('\n')
			l.mu.Lock()
			l.seen = append(l.seen, strings.TrimSpace(line))
			l.mu.Unlock()
			fmt.Fprintln(c, tag)
			_ = c.Close()
		}
	}()
	return l
}

func (l *tagListener) saw() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.seen)
}

// dial is a Python program that connects to the egress address, says
// who it is and prints the answer.
func dial(who string) string {
	return fmt.Sprintf(`import socket
s = socket.create_connection((%q, %d), timeout=20)
s.sendall(b"%s\n")
print(s.makefile().readline().strip())
`, runner.EgressAddr, runner.EgressPort, who)
}

// runKeep runs code on sb and leaves sb alive.
func runKeep(t *testing.T, sb runner.Sandbox, code string) string {
	t.Helper()
	res, err := sb.Run(t.Context(), runner.RunRequest{Code: code, Timeout: 30 * time.Second, MaxStdout: 1 << 20, MaxStderr: 1 << 20}, nil)
	if err != nil {
		t.Fatalf("run on %s: %v", sb.ID(), err)
	}
	if res.Reason != runner.ReasonOK {
		t.Fatalf("run on %s: reason %s, stderr %q", sb.ID(), res.Reason, res.Stderr)
	}
	return strings.TrimSpace(string(res.Stdout))
}

// netOf is the pinned network namespace of sandbox id, the host end of
// its veth and the egress namespace that holds it: where the runtime puts
// them (paddock-<root tag>-<id>, pe<12 digits of id>,
// paddock-<root tag>-egress).
func netOf(t *testing.T, id string) (nsPath, hostDev, egress string) {
	t.Helper()
	matches, err := filepath.Glob("/run/netns/paddock-*-" + id)
	if err != nil {
		t.Fatal(err)
	}
	if len(matches) != 1 {
		t.Fatalf("namespaces of %s: %v, want one", id, matches)
	}
	nsPath = matches[0]
	short := strings.TrimPrefix(id, "pd-")
	return nsPath, "pe" + short[:min(len(short), 12)], strings.TrimSuffix(nsPath, id) + "egress"
}

// hostEndExists reports whether a device named dev is in the namespace
// pinned at egress.
func hostEndExists(t *testing.T, egress, dev string) bool {
	t.Helper()
	ns, err := netns.GetFromPath(egress)
	if err != nil {
		t.Fatalf("the egress namespace %s: %v", egress, err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatalf("the egress namespace %s: %v", egress, err)
	}
	defer h.Close()
	_, err = h.LinkByName(dev)
	return err == nil
}

// TestGVisorNetworkedClones: two clones of one networked image, alive at
// once, each reach their own egress listener only (neither listener ever
// accepts the other's connection), and a clone's namespace, veth and
// listener are gone once it is destroyed. The template's image without a
// network stays beside the networked one. It logs how long a networked
// sandbox takes to start cold and to restore.
func TestGVisorNetworkedClones(t *testing.T) {
	e := newRealEnv(t)
	tmpl, err := templates.Get("python")
	if err != nil {
		t.Fatal(err)
	}
	spec := e.specs["python"]
	spec.Warmup = tmpl.Warmup // the pandas-ready state the pool keeps
	spec.Limits.MemoryBytes = 512 << 20
	networked := spec
	networked.Network = true
	snapDir := t.TempDir()
	rt := snapshotRuntime(t, e, snapDir)

	plain, err := rt.Snapshot(t.Context(), spec)
	if err != nil {
		t.Fatalf("snapshot without a network: %v", err)
	}
	img, err := rt.Snapshot(t.Context(), networked)
	if err != nil {
		t.Fatalf("networked snapshot: %v", err)
	}
	if img.Path == plain.Path {
		t.Fatalf("one image %s with and without a network", img.Path)
	}
	if _, err := os.Stat(plain.Path); err != nil {
		t.Fatalf("the image without a network is gone after the networked one was built: %v", err)
	}

	t.Run("own listener only", func(t *testing.T) {
		var sbs []runner.Sandbox
		var lns []*tagListener
		for _, tag := range []string{"A", "B"} {
			sb, err := rt.Restore(t.Context(), img)
			if err != nil {
				t.Fatalf("restore %s: %v", tag, err)
			}
			defer sb.Destroy(context.Background())
			ln := egressOf(t, sb)
			if ln == nil {
				t.Fatalf("clone %s has no egress listener", tag)
			}
			sbs, lns = append(sbs, sb), append(lns, serveTags(t, ln, "listener-"+tag))
		}
		// B dials first, then A, while both are alive.
		if got := runKeep(t, sbs[1], dial("B")); got != "listener-B" {
			t.Errorf("clone B was answered by %q, want listener-B", got)
		}
		if got := runKeep(t, sbs[0], dial("A")); got != "listener-A" {
			t.Errorf("clone A was answered by %q, want listener-A", got)
		}
		for i, want := range [][]string{{"A"}, {"B"}} {
			if got := lns[i].saw(); !slices.Equal(got, want) {
				t.Errorf("listener %s accepted %v, want %v", lns[i].tag, got, want)
			}
		}

		for i, sb := range sbs {
			ns, dev, egress := netOf(t, sb.ID())
			if !hostEndExists(t, egress, dev) {
				t.Fatalf("clone %d (%s): no host end %s in %s before destroy", i, sb.ID(), dev, egress)
			}
			if err := sb.Destroy(t.Context()); err != nil {
				t.Fatalf("destroy: %v", err)
			}
			select {
			case <-lns[i].done:
			case <-t.Context().Done():
				t.Fatalf("listener %s still open after its clone was destroyed", lns[i].tag)
			}
			if _, err := os.Stat(ns); !os.IsNotExist(err) {
				t.Errorf("namespace %s of a destroyed clone: %v, want it gone", ns, err)
			}
			if hostEndExists(t, egress, dev) {
				t.Errorf("host end %s of a destroyed clone is still in the egress namespace", dev)
			}
			if i == 0 {
				select {
				case <-lns[1].done:
					t.Error("destroying clone A closed clone B's listener")
				default:
				}
			}
		}
	})

	t.Run("start times", func(t *testing.T) {
		logStartTimes(t, rt, spec, networked, plain, img)
	})
}

// logStartTimes logs, not asserts, the median of three starts of each
// kind, taken in one run: a networked sandbox started cold as the pool started it before
// (no warm-up), the same with its warm-up run (the state a clone is in),
// a networked restore and a restore without a network.
func logStartTimes(t *testing.T, rt *runsc.Runtime, spec, networked runner.Spec, plain, img runner.Snapshot) {
	coldSpec := networked
	coldSpec.Warmup = ""
	kinds := []struct {
		name string
		up   func() (runner.Sandbox, error)
		// warm runs the template's warm-up code on the sandbox once up.
		warm bool
	}{
		{"cold networked start (no warm-up)", func() (runner.Sandbox, error) { return rt.Start(t.Context(), coldSpec) }, false},
		{"cold networked start + warm-up run", func() (runner.Sandbox, error) { return rt.Start(t.Context(), coldSpec) }, true},
		{"networked restore", func() (runner.Sandbox, error) { return rt.Restore(t.Context(), img) }, false},
		{"restore without a network", func() (runner.Sandbox, error) { return rt.Restore(t.Context(), plain) }, false},
	}
	// Rounds interleave the kinds, so that the machine's noise falls on
	// all of them alike.
	took := make([][]time.Duration, len(kinds))
	mem := make([][]int64, len(kinds))
	for range 3 {
		for i, k := range kinds {
			begin := time.Now()
			sb, err := k.up()
			if err != nil {
				t.Fatalf("%s: %v", k.name, err)
			}
			if k.warm {
				runKeep(t, sb, spec.Warmup)
			}
			took[i] = append(took[i], time.Since(begin))
			if !k.warm {
				mem[i] = append(mem[i], memoryOf(sb.ID()))
			}
			if err := sb.Destroy(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, k := range kinds {
		slices.Sort(took[i])
		t.Logf("%-36s median %v of %v", k.name, took[i][1].Round(time.Millisecond), took[i])
		if len(mem[i]) > 0 {
			slices.Sort(mem[i])
			t.Logf("%-36s host memory once up (cgroup usage, MiB): median %.1f of %v", k.name, float64(mem[i][1])/(1<<20), mem[i])
		}
	}
}

// memoryOf is the memory cgroup usage of sandbox id, in bytes (cgroup v1
// or v2), or -1 when it cannot be read. For the log only.
func memoryOf(id string) int64 {
	for _, f := range []string{
		filepath.Join(ocispec.CgroupRoot, "memory", ocispec.CgroupsPath(id), "memory.usage_in_bytes"),
		filepath.Join(ocispec.CgroupRoot, ocispec.CgroupsPath(id), "memory.current"),
	} {
		if b, err := os.ReadFile(f); err == nil {
			if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil {
				return n
			}
		}
	}
	return -1
}
