package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/paddock-dev/paddock/rootfs"
	"github.com/paddock-dev/paddock/templates"
)

// rawRunscSamples times `runsc run` of the bare interpreter in the
// template's root filesystem: what a cold one-shot costs without Paddock
// (no agent, no HTTP, no cgroup limits). It is the cold path's baseline.
func rawRunscSamples(ctx context.Context, o options, l lang, rootfs string, n int) ([]time.Duration, error) {
	dir, err := os.MkdirTemp("", "paddock-rawrunsc-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	argv := map[string][]string{"python": {"python3", "-c", "print(1)"}, "node": {"node", "-e", "console.log(1)"}}[l.name]
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
		return nil, err
	}
	root := filepath.Join(dir, "root")
	var out []time.Duration
	for i := range n {
		id := fmt.Sprintf("raw-%d-%d", os.Getpid(), i)
		start := time.Now()
		cmd := exec.CommandContext(ctx, o.runsc, "--root="+root, "--network=none", "run", "--bundle="+dir, id)
		got, err := cmd.Output()
		el := time.Since(start)
		_ = exec.Command(o.runsc, "--root="+root, "delete", "--force", id).Run()
		if err != nil || strings.TrimSpace(string(got)) != "1" {
			return nil, fmt.Errorf("raw runsc run %s: %v: %q", l.name, err, got)
		}
		out = append(out, el)
	}
	unmountNetNS(root)
	return out, nil
}

// unmountNetNS releases the network namespace runsc pins under its root,
// so that the directory can be removed.
func unmountNetNS(root string) {
	for range 64 {
		if syscall.Unmount(filepath.Join(root, "null-netns"), syscall.MNT_DETACH) != nil {
			return
		}
	}
}

// templateRootfs finds the built root filesystem of a template.
func templateRootfs(cache, name string) (string, error) {
	t, err := templates.Get(name)
	if err != nil {
		return "", err
	}
	img, err := (&rootfs.Builder{CacheDir: cache}).Lookup(t)
	if err != nil {
		return "", err
	}
	return img.Path, nil
}
