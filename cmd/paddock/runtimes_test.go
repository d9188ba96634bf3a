package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// onRuntimes runs f once on each runtime, each on a server of its own:
// the hostile suite holds on both, except where a case says what differs
// on runc (see docs/runtimes.md).
func onRuntimes(t *testing.T, f func(t *testing.T, e *e2e)) {
	for _, rt := range []string{"runsc", "runc"} {
		t.Run(rt, func(t *testing.T) { f(t, newE2EWith(t, "--runtime="+rt)) })
	}
}

// runcContainers lists the runc runtime's containers under a server's
// state directory: those with libcontainer state or a bundle (the mounts
// of their root).
func runcContainers(t *testing.T, stateDir string) []string {
	t.Helper()
	var ids []string
	for _, dir := range []string{"containers", "bundles"} {
		ents, err := os.ReadDir(filepath.Join(stateDir, "runc", dir))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "pd-") && !slices.Contains(ids, e.Name()) {
				ids = append(ids, e.Name())
			}
		}
	}
	return ids
}

// onRunc says whether e's server runs runc, for the cases whose
// outcome differs there.
func (e *e2e) onRunc() bool { return e.cfg.Runtime == "runc" }
