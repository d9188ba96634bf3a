package rootfs

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// hostKeyringDir holds the Debian archive keyring on a host with the
// debian-archive-keyring package: on Debian always, elsewhere when
// installed.
const hostKeyringDir = "/usr/share/keyrings"

// debianKeyrings are the names of the Debian archive keyring, newest
// first. Each release's keyring also holds the keys of the release before
// it and the one after, so a trixie host verifies bookworm.
var debianKeyrings = []string{"debian-archive-keyring.pgp", "debian-archive-keyring.gpg"}

// debianReleases are the release names of Debian's archive: the codenames
// still served and the aliases that move with them. A host source whose
// suite starts with one of these is Debian's; an Ubuntu or third-party
// source never is (their suites are other codenames or their own names).
var debianReleases = map[string]bool{
	"buster": true, "bullseye": true, "bookworm": true, "trixie": true, "forky": true, "duke": true,
	"sid": true, "experimental": true,
	"oldoldstable": true, "oldstable": true, "stable": true, "testing": true, "unstable": true,
}

// plan is where a suite is built from, and why, for the progress output.
type plan struct {
	sources []source
	why     string
}

// splitSuite splits an apt suite into its release and pocket:
// "bookworm-updates" is ("bookworm", "-updates"), "buster/updates" is
// ("buster", "/updates").
func splitSuite(suite string) (release, pocket string) {
	if i := strings.IndexAny(suite, "-/"); i >= 0 {
		return suite[:i], suite[i:]
	}
	return suite, ""
}

// isDebianArchive reports whether s is a pocket of Debian's main archive
// with the main component: what a mirror for another suite can be taken
// from.
func isDebianArchive(s source) bool {
	release, pocket := splitSuite(s.suite)
	switch pocket {
	case "", "-updates", "-backports", "-proposed-updates":
	default:
		return false
	}
	return debianReleases[release] && slices.Contains(s.components, "main")
}

// isDebianSecurity reports whether s is Debian's security archive.
func isDebianSecurity(s source) bool {
	release, pocket := splitSuite(s.suite)
	return debianReleases[release] && (pocket == "-security" || pocket == "/updates")
}

// suiteSources picks from the host's sources those that serve suite with
// its main component: the suite itself, then its updates, then its
// security updates. It returns nil when nothing serves the suite itself.
func suiteSources(all []source, suite string) []source {
	var out []source
	seen := map[string]bool{}
	for _, want := range []string{suite, suite + "-updates", suite + "-security", suite + "/updates"} {
		for _, s := range all {
			id := strings.TrimSuffix(s.uri, "/") + " " + s.suite
			if s.suite != want || seen[id] || !slices.Contains(s.components, "main") {
				continue
			}
			seen[id] = true
			out = append(out, s)
		}
	}
	if len(out) == 0 || out[0].suite != suite {
		return nil
	}
	return out
}

// hostPlan builds suite from the host's apt sources: the entries for suite
// when the host lists it (a bookworm host building bookworm), else suite
// from the host's Debian mirror (a trixie host building bookworm). A host
// with no Debian mirror (Ubuntu, say) gets ErrNoMirror.
func hostPlan(host []source, suite, aptDir, keyring string) (plan, error) {
	if out := suiteSources(host, suite); out != nil {
		return plan{sources: out, why: "the host's apt sources list " + suite}, nil
	}
	i := slices.IndexFunc(host, isDebianArchive)
	if i < 0 {
		return plan{}, fmt.Errorf("%w (%s) to build %s from", ErrNoMirror, aptDir, suite)
	}
	mirror := host[i]
	release, _ := splitSuite(mirror.suite)
	return plan{
		sources: mirrorSources(mirror.uri, cmp.Or(mirror.signedBy, keyring), host, suite, keyring),
		why:     fmt.Sprintf("the host's apt sources list %s, not %s: %s from the host's Debian mirror", release, suite, suite),
	}, nil
}

// mirrorSources serves suite and its updates from mirror, checked against
// keyring, and security updates from the host's Debian security archive
// when it has one: its entry for suite when it lists one, else the same
// archive with suite's security pocket.
func mirrorSources(mirror, signedBy string, host []source, suite, keyring string) []source {
	out := []source{
		{uri: mirror, suite: suite, components: []string{"main"}, signedBy: signedBy},
		{uri: mirror, suite: suite + "-updates", components: []string{"main"}, signedBy: signedBy},
	}
	var exact []source
	seen := map[string]bool{}
	for _, s := range host {
		id := strings.TrimSuffix(s.uri, "/") + " " + s.suite
		if (s.suite == suite+"-security" || s.suite == suite+"/updates") && !seen[id] {
			seen[id] = true
			exact = append(exact, s)
		}
	}
	if len(exact) > 0 {
		return append(out, exact...)
	}
	if i := slices.IndexFunc(host, isDebianSecurity); i >= 0 {
		sec := host[i]
		out = append(out, source{uri: sec.uri, suite: suite + "-security", components: []string{"main"}, signedBy: cmp.Or(sec.signedBy, keyring)})
	}
	return out
}

// findKeyring returns the Debian archive keyring in dir, or "" when there
// is none (then apt's trusted keys decide).
func findKeyring(dir string) string {
	for _, name := range debianKeyrings {
		path := filepath.Join(dir, name)
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
			return path
		}
	}
	return ""
}

// CheckMirror accepts an http, https or file URI without spaces or
// brackets, which would break the one-line source format.
func CheckMirror(mirror string) error {
	scheme, rest, ok := strings.Cut(mirror, "://")
	if !ok || rest == "" || strings.ContainsAny(mirror, " \t\n[]") {
		return fmt.Errorf("mirror %q is not a URI", mirror)
	}
	switch scheme {
	case "http", "https", "file":
		return nil
	}
	return fmt.Errorf("mirror %q: want an http, https or file URI", mirror)
}
