package runsc_test

import (
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/templates"
)

// nodeStartupProbe prints the startup snapshot node was started from (the
// interpreter's own command line, which the driver leaves alone), then
// one draw of each of its random generators.
const nodeStartupProbe = `const argv = require('fs').readFileSync('/proc/self/cmdline', 'utf8').split('\0');
const i = argv.indexOf('--snapshot-blob');
console.log(i < 0 ? 'no snapshot' : argv[i + 1]);
const crypto = require('crypto');
console.log(Math.random());
console.log(crypto.randomBytes(16).toString('hex'));
console.log(crypto.randomUUID());
console.log(crypto.getRandomValues(new Uint32Array(4)).join(','));`

// A Node sandbox with the template's own limits starts from the image's
// startup snapshot for its heap ceiling, and two such sandboxes share no
// random state: V8 reseeds Math.random as it deserialises the snapshot and
// OpenSSL's generator is not in it. A sandbox with a heap ceiling the
// image has no snapshot for starts without one.
func TestGVisorNodeStartupSnapshot(t *testing.T) {
	e := newRealEnv(t)
	tmpl, err := templates.Get("node")
	if err != nil {
		t.Fatal(err)
	}
	spec := e.specs["node"]
	spec.Limits.MemoryBytes = tmpl.Limits.MemoryBytes()
	e.specs["node-template"] = spec

	var draws [2][]string
	for i := range draws {
		res := e.run(t, "node-template", runner.RunRequest{Code: nodeStartupProbe})
		lines := strings.Split(strings.TrimSuffix(string(res.Stdout), "\n"), "\n")
		if res.Reason != runner.ReasonOK || len(lines) != 5 || lines[0] != "/usr/lib/paddock/node-startup-heap313.blob" {
			t.Fatalf("sandbox %d: reason %s stdout %q stderr %.300q; want ok, started from node-startup-heap313.blob, 4 draws", i, res.Reason, res.Stdout, res.Stderr)
		}
		draws[i] = lines[1:]
	}
	for j, what := range []string{"Math.random", "crypto.randomBytes", "crypto.randomUUID", "crypto.getRandomValues"} {
		if draws[0][j] == draws[1][j] {
			t.Errorf("two sandboxes from one startup snapshot drew the same %s: %s", what, draws[0][j])
		}
	}

	// The realEnv's own node spec (256 MiB) has a 134 MiB heap ceiling,
	// which the image has no snapshot for.
	res := e.run(t, "node", runner.RunRequest{Code: nodeStartupProbe})
	if first, _, _ := strings.Cut(string(res.Stdout), "\n"); res.Reason != runner.ReasonOK || first != "no snapshot" {
		t.Errorf("256 MiB sandbox: reason %s stdout %q stderr %.300q; want ok, no snapshot", res.Reason, res.Stdout, res.Stderr)
	}
}
