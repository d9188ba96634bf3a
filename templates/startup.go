package templates

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
)

// NodeStartupEntry is the script a node template's image builds its
// startup snapshots from (node --build-snapshot); see node_startup.js.
// Its digest and the heap ceilings are part of the Key of every node
// template that lists heap ceilings, so that an image never keeps a snapshot of
// another version of it.
//
//go:embed node_startup.js
var NodeStartupEntry string

// startupKey is the line Key adds for t's startup snapshots, or "".
func (t Template) startupKey() string {
	if t.Language != "node" || len(t.StartupHeapsMB) == 0 {
		return ""
	}
	sum := sha256.Sum256([]byte(NodeStartupEntry))
	heaps := make([]string, 0, len(t.StartupHeapsMB))
	for _, mb := range slices.Sorted(slices.Values(t.StartupHeapsMB)) {
		heaps = append(heaps, strconv.Itoa(mb))
	}
	return "node-startup " + hex.EncodeToString(sum[:]) + " heaps " + strings.Join(heaps, ",") + "\n"
}
