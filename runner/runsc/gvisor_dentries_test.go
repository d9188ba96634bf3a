package runsc_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/internal/prereq"
	"github.com/paddock-dev/paddock/runner/runsc"
)

// walkUsr stats every file under /usr and prints how many it saw:
// thousands of EROFS lookups, each leaving a dentry that nothing holds
// once the walk is over.
const walkUsr = `import os
n = 0
for d, _, files in os.walk('/usr'):
    for f in files:
        os.lstat(os.path.join(d, f))
        n += 1
print(n)`

// erofsDentriesDecoded matches the row of runsc's "Kernel load stats"
// table that counts the EROFS dentries a restore decoded.
var erofsDentriesDecoded = regexp.MustCompile(`\|\s*(\d+)\s*\|[^|]*\|\s*pkg/sentry/fsimpl/erofs\.dentry\s*$`)

// TestGVisorCheckpointLeavesUnusedDentriesOut checks the runsc that `make
// runsc` builds (deploy/runsc/erofsevict.go): a checkpoint empties the
// EROFS filesystems' caches of dentries nothing uses, so a restore does
// not decode them. The snapshot's warm-up walks /usr, which fills the
// cache (1,000 dentries); the restore must decode far fewer, and the
// restored sandbox must still walk /usr, its files looked up again from
// the image. The runsc of a plain `go install` saves the full cache and
// fails here.
func TestGVisorCheckpointLeavesUnusedDentriesOut(t *testing.T) {
	prereq.Command(t, "mkfs.erofs", "erofs-utils")
	e := newRealEnv(t)
	logs := t.TempDir()
	rt := ownRuntime(t, e, runsc.Config{SnapshotDir: t.TempDir(), DebugLog: logs})
	if !rt.GoferFree() {
		t.Fatal("the runtime fell back to a gofer although mkfs.erofs is installed")
	}
	spec := e.specs["python"]
	spec.Warmup = walkUsr

	restored := snapshotAndRestore(t, rt, spec)
	decoded := waitDecodedDentries(t, logs, restored.ID())
	res := runOn(t, restored, walkUsr)
	walked, err := strconv.Atoi(strings.TrimSpace(string(res.Stdout)))
	if err != nil || walked < 2000 {
		t.Fatalf("the restored sandbox walked %q files under /usr; want a count of at least 2000", res.Stdout)
	}
	// What a restored interpreter holds open or mapped (its binary, its
	// libraries, its directories) is a few hundred dentries at most.
	if decoded >= 500 {
		t.Fatalf("the restore decoded %d EROFS dentries after a warm-up that walked %d files: the checkpoint saved the dentry cache (runsc not built by deploy/runsc/build.sh?)", decoded, walked)
	}
	t.Logf("restore decoded %d EROFS dentries; the warm-up and the run walked %d files", decoded, walked)
}

// waitDecodedDentries waits for the restore's boot log to hold runsc's
// "Kernel load stats" table and returns its count of EROFS dentries. The
// table is written before the restored sandbox answers, so the wait is
// for the log file to reach disk.
func waitDecodedDentries(t *testing.T, dir, id string) int {
	t.Helper()
	n := -1
	_, ok := pollBootLog(t, dir, id, func(text string) bool {
		i := strings.Index(text, "Kernel load stats")
		if i < 0 {
			return false
		}
		for _, line := range strings.Split(text[i:], "\n") {
			if m := erofsDentriesDecoded.FindStringSubmatch(line); m != nil {
				n, _ = strconv.Atoi(m[1])
				return true
			}
		}
		return false
	})
	if !ok {
		t.Fatalf("the boot log of restored sandbox %s in %s has no EROFS dentry row in its Kernel load stats", id, dir)
	}
	return n
}
