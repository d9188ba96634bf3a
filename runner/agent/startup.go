package agent

import (
	"os"
	"path/filepath"
	"strconv"
)

// A node image carries startup snapshots of Node's bootstrap and the
// built-in modules the drivers use, made by its own node when the image
// was built (templates/node_startup.js); started from one, node skips the
// bootstrap that Debian's build otherwise compiles from source at every
// start. V8 reseeds Math.random as it deserialises a snapshot, and
// OpenSSL's generator is outside the heap, so processes started from one
// blob share no random state. A snapshot holds none of the driver: the
// driver is passed as an argument, so a new agent never runs an old one.
//
// Node loads a snapshot only under the V8 flags it was built with, so
// there is one per heap ceiling (--max-old-space-size), named by it. The
// snapshot is only a faster way to the same start: a missing one is
// logged and node starts as before; a damaged or foreign one makes node
// exit before its driver is ready (it checks the blob's V8 version, flags
// and CPU features, and V8 its checksum), and prestart starts it again
// without.

// StartupBlobName is the name of the startup snapshot for a V8 heap
// ceiling of heapMB MiB (0: V8's default). rootfs builds them under the
// same names; TestNodeStartupSnapshot starts node from the built image's
// snapshots by this name.
func StartupBlobName(heapMB int) string {
	return "node-startup-heap" + strconv.Itoa(heapMB) + ".blob"
}

// startupBlob is the startup snapshot to start node from, or "" when there
// is none to use.
func (a *Agent) startupBlob() string {
	if a.cfg.NodeStartupDir == "" || a.cfg.Language != LanguageNode {
		return ""
	}
	blob := filepath.Join(a.cfg.NodeStartupDir, StartupBlobName(a.cfg.HeapMB))
	if _, err := os.Stat(blob); err != nil {
		a.log.Info("no node startup snapshot; starting without it", "blob", blob, "err", err)
		return ""
	}
	return blob
}
