package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/paddock-dev/paddock/rootfs"
	"github.com/paddock-dev/paddock/templates"
)

// rawBundle is an OCI bundle that runs one program in a template's root
// filesystem under runsc, without Paddock: no agent, no HTTP, no cgroup
// limits. It is the baseline of the cold path and of the throughput.
type rawBundle struct {
	runsc string
	dir   string // the bundle, holding config.json
	root  string // runsc's --root
}

func newRawBundle(runsc, rootfs string, argv []string) (*rawBundle, error) {
	dir, err := os.MkdirTemp("", "paddock-rawrunsc-")
	if err != nil {
		return nil, err
	}
	spec := map[string]any{
		"ociVersion": "1.0.0",
		"process": map[string]any{
			"user": map[string]any{"uid": 1000, "gid": 1000},
			"args": argv, "cwd": "/workspace",
			"env": []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/workspace"},
		},
		"root":   map[string]any{"path": rootfs, "readonly": false},
		"mounts": []map[string]any{{"destination": "/proc", "type": "proc", "source": "proc"}},
		"linux": map[string]any{"namespaces": []map[string]string{
			{"type": "pid"}, {"type": "ipc"}, {"type": "uts"}, {"type": "mount"}, {"type": "network"}}},
	}
	b, _ := json.Marshal(spec)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return &rawBundle{runsc: runsc, dir: dir, root: filepath.Join(dir, "root")}, nil
}

// run does `runsc run` (create, start, wait) and then `runsc delete`. It
// returns the program's stdout and the time of `runsc run` alone.
func (b *rawBundle) run(ctx context.Context) (string, time.Duration, error) {
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	// Fixed length: no ID is a prefix of another running one.
	id := "raw-" + hex.EncodeToString(rnd[:])
	start := time.Now()
	out, err := exec.CommandContext(ctx, b.runsc, "--root="+b.root, "--network=none", "run", "--bundle="+b.dir, id).Output()
	d := time.Since(start)
	delErr := exec.Command(b.runsc, "--root="+b.root, "delete", "--force", id).Run()
	if err != nil {
		return string(out), d, fmt.Errorf("runsc run %s: %w", id, err)
	}
	if delErr != nil {
		return string(out), d, fmt.Errorf("runsc delete %s: %w", id, delErr)
	}
	return string(out), d, nil
}

// close releases the network namespace runsc pins under its root and
// removes the bundle.
func (b *rawBundle) close() {
	for range 64 {
		if syscall.Unmount(filepath.Join(b.root, "null-netns"), syscall.MNT_DETACH) != nil {
			break
		}
	}
	_ = os.RemoveAll(b.dir)
}

// rawRow times n raw `runsc run`s of p.
func rawRow(ctx context.Context, o options, l lang, p probe, fs string, n int) (row, error) {
	r := row{Lang: l.name, Probe: p.name, Mode: modeRaw}
	b, err := newRawBundle(o.runsc, fs, append(append([]string(nil), l.inSandbox...), p.code))
	if err != nil {
		return r, err
	}
	defer b.close()
	for range n {
		out, d, err := b.run(ctx)
		if err != nil {
			return r, err
		}
		if !p.ok(out) {
			return r, fmt.Errorf("raw runsc %s %s: stdout %q", l.name, p.name, out)
		}
		r.Samples = append(r.Samples, sample{D: d, Counted: true})
	}
	return r, nil
}

// templateRootfs finds the built root filesystem of a template.
func templateRootfs(cache, name string) (string, error) {
	t, err := templates.Get(name)
	if err != nil {
		return "", err
	}
	img, err := (&rootfs.Builder{CacheDir: cache}).Lookup(t)
	if err != nil {
		return "", fmt.Errorf("root filesystem of %s: %w (run `make rootfs`)", name, err)
	}
	return img.Path, nil
}
