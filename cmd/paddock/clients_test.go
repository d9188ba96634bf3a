package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/internal/prereq"
)

// clientsDir holds the pinned npm clients the doors are tested against
// (`make clients` installs them from the committed lockfile).
const clientsDir = "../../doors/clients"

// clientTimeout is a safety net for a client script that hangs: far more
// than the few seconds each takes, even on a loaded machine. The scripts
// wait on the server's answers, never on time.
const clientTimeout = 10 * time.Minute

// needClients returns node's path, or skips (fails under make test) when
// node or the installed clients are missing.
func needClients(t *testing.T) string {
	t.Helper()
	node := prereq.Command(t, "node", "nodejs")
	if _, err := os.Stat(filepath.Join(clientsDir, "node_modules", ".package-lock.json")); err != nil {
		prereq.Missing(t, "the door clients' npm packages are not installed", "run make clients")
	}
	return node
}

// runClient runs name with args in clientsDir, env added to the test's
// environment, and returns its stdout; its stderr goes to the test log on
// failure.
func runClient(t *testing.T, env []string, name string, args ...string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = clientsDir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Logf("%s %s (the %v safety net, if its context ended) stderr:\n%s", name, strings.Join(args, " "), clientTimeout, stderr.String())
	}
	return out, err
}
