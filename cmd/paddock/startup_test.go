package main

import (
	"slices"
	"testing"

	"github.com/paddock-dev/paddock/runner/ocispec"
	"github.com/paddock-dev/paddock/templates"
)

// A node startup snapshot loads only under the heap ceiling it was built
// for: every built-in node template's image must carry the one its own
// memory limit gives its pooled sandboxes, or they all start the slow way.
func TestBuiltinNodeTemplatesSnapshotTheirOwnHeap(t *testing.T) {
	all, err := templates.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, tmpl := range all {
		if tmpl.Language != "node" {
			continue
		}
		heap := int(ocispec.NodeHeapMB(tmpl.Limits.MemoryBytes()))
		if !slices.Contains(tmpl.StartupHeapsMB, heap) {
			t.Errorf("template %s: memory %d MiB gives a %d MiB heap ceiling, startup_heaps_mb %v lacks it", tmpl.Name, tmpl.Limits.MemoryMB, heap, tmpl.StartupHeapsMB)
		}
	}
}
