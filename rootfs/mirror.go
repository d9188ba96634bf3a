package rootfs

import (
	"fmt"
	"strings"
)

// suiteSources picks from the host's sources those that serve suite: the
// suite itself, then its updates, then its security updates. It fails with
// ErrNoSource when nothing serves the suite itself.
func suiteSources(all []source, suite string) ([]source, error) {
	var out []source
	seen := map[string]bool{}
	for _, want := range []string{suite, suite + "-updates", suite + "-security", suite + "/updates"} {
		for _, s := range all {
			id := strings.TrimSuffix(s.uri, "/") + " " + s.suite
			if s.suite != want || seen[id] {
				continue
			}
			seen[id] = true
			out = append(out, s)
		}
	}
	if len(out) == 0 || out[0].suite != suite {
		return nil, fmt.Errorf("%w %s in the host's apt configuration (set the builder's mirror)", ErrNoSource, suite)
	}
	return out, nil
}

// mirrorSources serves suite and its updates from mirror, and security
// updates from the host's sources when it has any.
func mirrorSources(mirror string, host []source, suite string) []source {
	out := []source{
		{uri: mirror, suite: suite, components: []string{"main"}},
		{uri: mirror, suite: suite + "-updates", components: []string{"main"}},
	}
	seen := map[string]bool{}
	for _, s := range host {
		id := strings.TrimSuffix(s.uri, "/") + " " + s.suite
		if (s.suite == suite+"-security" || s.suite == suite+"/updates") && !seen[id] {
			seen[id] = true
			out = append(out, s)
		}
	}
	return out
}
