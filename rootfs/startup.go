package rootfs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/paddock-dev/paddock/templates"
)

// nodeStartupDir is where a node image keeps its startup snapshots,
// relative to the tree's root; the agent looks for them there
// (runner/ocispec.NodeStartupDir; layout_test.go binds the two).
const nodeStartupDir = "usr/lib/paddock"

// nodeStartupEntry is where the snapshots' entry script is written for the
// build, relative to the tree's root. customize empties /tmp afterwards.
const nodeStartupEntry = "tmp/paddock-node-startup.js"

// nodeStartupBlob is the name of the startup snapshot for a V8 heap
// ceiling of heapMB MiB (0: V8's default); the agent's StartupBlobName
// names it the same way (its tests start node from the built image's
// snapshots by that name).
func nodeStartupBlob(heapMB int) string {
	return "node-startup-heap" + strconv.Itoa(heapMB) + ".blob"
}

// buildStartupSnapshots builds the startup snapshots of a template whose
// language is node, one per heap ceiling it lists, with the image's own
// node: a snapshot loads only in the node, and under the V8 flags, that
// made it. Other languages have none. A failure fails the build: the
// agent would start every sandbox the slow way.
func buildStartupSnapshots(ctx context.Context, tree string, t templates.Template) error {
	if t.Language != "node" || len(t.StartupHeapsMB) == 0 {
		return nil
	}
	entry := filepath.Join(tree, nodeStartupEntry)
	if err := os.WriteFile(entry, []byte(templates.NodeStartupEntry), 0o644); err != nil {
		return fmt.Errorf("writing the startup snapshots' entry: %w", err)
	}
	defer os.Remove(entry)
	if err := os.MkdirAll(filepath.Join(tree, nodeStartupDir), 0o755); err != nil {
		return fmt.Errorf("creating the startup snapshots' directory: %w", err)
	}
	for _, mb := range t.StartupHeapsMB {
		blob := filepath.Join(nodeStartupDir, nodeStartupBlob(mb))
		argv := []string{"node"}
		if mb > 0 {
			argv = append(argv, "--max-old-space-size="+strconv.Itoa(mb))
		}
		argv = append(argv, "--snapshot-blob", "/"+blob, "--build-snapshot", "/"+nodeStartupEntry)
		if _, err := runInTree(ctx, chrootPath(), tree, argv); err != nil {
			return fmt.Errorf("building the node startup snapshot for a %d MiB heap: %w", mb, err)
		}
		if err := os.Chmod(filepath.Join(tree, blob), 0o644); err != nil {
			return fmt.Errorf("building the node startup snapshot for a %d MiB heap: %w", mb, err)
		}
	}
	return nil
}
