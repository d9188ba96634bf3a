package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/runner/wire"
)

// imageStartupDir is where the node image keeps its startup snapshots
// (runner/ocispec.NodeStartupDir), which include ones for V8's default
// heap and for a 313 MiB ceiling (templates/node.json).
const imageStartupDir = "/usr/lib/paddock"

// showArgv prints the options of the interpreter's own command line,
// which the driver does not rewrite.
const showArgv = "console.log(require('fs').readFileSync('/proc/self/cmdline', 'utf8').split('\\0').filter(a => a.startsWith('-')).join(' '))"

// Node starts from its image's startup snapshot, or, told of none, without
// one; a missing or damaged snapshot is logged and node starts without
// it, and the run is the same either way.
func TestNodeStartupSnapshot(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		dir      func(dir string) string
		heapMB   int
		wantArgv string
		wantLog  string
	}{
		{name: "from the image's snapshot", dir: func(string) string { return imageStartupDir }, heapMB: 313,
			wantArgv: "--max-old-space-size=313 --expose-internals --v8-pool-size=1 --snapshot-blob --"},
		{name: "from the image's snapshot for V8's default heap", dir: func(string) string { return imageStartupDir },
			wantArgv: "--expose-internals --v8-pool-size=1 --snapshot-blob --"},
		{name: "told of none", dir: func(string) string { return "" }, heapMB: 313,
			wantArgv: "--max-old-space-size=313 --expose-internals --v8-pool-size=1 -e --"},
		{name: "none for this heap ceiling", dir: func(string) string { return imageStartupDir }, heapMB: 100,
			wantArgv: "--max-old-space-size=100 --expose-internals --v8-pool-size=1 -e --", wantLog: "no node startup snapshot; starting without it"},
		{name: "missing", dir: func(dir string) string { return dir }, heapMB: 313,
			wantArgv: "--max-old-space-size=313 --expose-internals --v8-pool-size=1 -e --", wantLog: "no node startup snapshot; starting without it"},
		{name: "garbage", dir: func(dir string) string { return writeBlob(t, dir, 313, []byte("not a snapshot")) }, heapMB: 313,
			wantArgv: "--max-old-space-size=313 --expose-internals --v8-pool-size=1 -e --", wantLog: "node startup snapshot failed; starting without it"},
		{name: "truncated", dir: func(dir string) string { return writeBlob(t, dir, 313, imageBlob(t, 313)[:1<<20]) }, heapMB: 313,
			wantArgv: "--max-old-space-size=313 --expose-internals --v8-pool-size=1 -e --", wantLog: "node startup snapshot failed; starting without it"},
		{name: "bytes flipped", dir: func(dir string) string { return writeBlob(t, dir, 313, flipped(imageBlob(t, 313))) }, heapMB: 313,
			wantArgv: "--max-old-space-size=313 --expose-internals --v8-pool-size=1 -e --", wantLog: "node startup snapshot failed; starting without it"},
		{name: "built for another heap ceiling", dir: func(dir string) string { return writeBlob(t, dir, 313, imageBlob(t, 0)) }, heapMB: 313,
			wantArgv: "--max-old-space-size=313 --expose-internals --v8-pool-size=1 -e --", wantLog: "node startup snapshot failed; starting without it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(t, LanguageNode)
			cfg.HeapMB = tt.heapMB
			cfg.NodeStartupDir = tt.dir(t.TempDir())
			c := startAgent(t, cfg)
			c.hello()
			res := c.run(wire.Run{Code: showArgv + "; console.log(6 * 7, process.argv.length, process.execArgv.length, typeof require, __filename, typeof fs.readFileSync, typeof new console.Console(process.stdout).log)"})
			want := tt.wantArgv + "\n42 1 0 function [eval] function function\n"
			if string(res.stdout) != want || res.exit.Reason != "ok" {
				t.Errorf("stdout %q, exit %+v, stderr %q; want %q, ok", res.stdout, res.exit, res.stderr, want)
			}
			if log := c.log.String(); tt.wantLog == "" && strings.Contains(log, "startup snapshot") || !strings.Contains(log, tt.wantLog) {
				t.Errorf("agent log %q, want %q", log, tt.wantLog)
			}
		})
	}
}

// imageBlob is the node image's startup snapshot for a heap ceiling of
// heapMB, read from the host.
func imageBlob(t *testing.T, heapMB int) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(templateImage(t, LanguageNode).Path, imageStartupDir, StartupBlobName(heapMB)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// flipped is b with a run of bytes in its middle inverted.
func flipped(b []byte) []byte {
	b = append([]byte(nil), b...)
	for i := len(b) / 2; i < len(b)/2+64; i++ {
		b[i] ^= 0xff
	}
	return b
}

// writeBlob writes b into dir, which the agent under test sees at the same
// path, as the snapshot for heapMB, and returns dir.
func writeBlob(t *testing.T, dir string, heapMB int, b []byte) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, StartupBlobName(heapMB)), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
