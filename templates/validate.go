package templates

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
)

var (
	// nameRE is a template name: it becomes part of directory names.
	nameRE = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)
	// suiteRE is a Debian suite or codename.
	suiteRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	// packageRE is a Debian package name (Debian Policy 5.6.7).
	packageRE = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]+$`)
	// moduleRE is a top-level module name, as an import statement names it.
	moduleRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
)

// What a template may be the default for (DefaultFor).
const (
	DefaultRuns     = "runs"
	DefaultSessions = "sessions"
)

// languages are the drivers the kernels and the agent know.
var languages = []string{"node", "python"}

// Validate reports every problem of t at once, each wrapping ErrInvalid.
func (t Template) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: template %q: %s", ErrInvalid, t.Name, fmt.Sprintf(format, args...)))
	}
	if !nameRE.MatchString(t.Name) {
		bad("name must match %s", nameRE)
	}
	if !slices.Contains(languages, t.Language) {
		bad("language %q is not one of %v", t.Language, languages)
	}
	if !suiteRE.MatchString(t.Suite) {
		bad("suite %q is not a Debian suite name", t.Suite)
	}
	if len(t.Packages) == 0 {
		bad("no packages")
	}
	seen := make(map[string]bool, len(t.Packages))
	for _, p := range t.Packages {
		switch {
		case !packageRE.MatchString(p):
			bad("package %q is not a Debian package name", p)
		case seen[p]:
			bad("package %q listed twice", p)
		}
		seen[p] = true
	}
	for _, p := range t.StubPackages {
		switch {
		case !packageRE.MatchString(p):
			bad("stub package %q is not a Debian package name", p)
		case seen[p]:
			bad("stub package %q is also listed as a package or stub", p)
		}
		seen[p] = true
	}
	for name, argv := range t.VersionCommands {
		if name == "" || len(argv) == 0 || argv[0] == "" {
			bad("version command %q has no argv", name)
		}
	}
	if len(t.WarmImports) > 0 && t.Language != "python" {
		bad("warm_imports are read from Python import statements: language %q may not have them", t.Language)
	}
	for i, m := range t.WarmImports {
		switch {
		case !moduleRE.MatchString(m):
			bad("warm import %q is not a top-level module name", m)
		case slices.Contains(t.WarmImports[:i], m):
			bad("warm import %q listed twice", m)
		}
	}
	for i, d := range t.DefaultFor {
		switch {
		case d != DefaultRuns && d != DefaultSessions:
			bad("default_for %q is not %q or %q", d, DefaultRuns, DefaultSessions)
		case slices.Contains(t.DefaultFor[:i], d):
			bad("default_for %q listed twice", d)
		}
	}
	l := t.Limits
	if l.MemoryMB <= 0 || l.Processes <= 0 || l.CPUs <= 0 || l.DiskMB <= 0 || l.OpenFiles <= 0 || l.TimeoutMS <= 0 {
		bad("limits must all be positive: %+v", l)
	}
	for _, mb := range t.StartupHeapsMB {
		if mb < 0 || t.Language != "node" {
			bad("startup heap %d MiB: only node takes startup snapshots, for ceilings of 0 and up", mb)
		}
	}
	if t.PoolMax != 0 && t.PoolMax < t.PoolSize {
		bad("pool_max %d is below pool_size %d", t.PoolMax, t.PoolSize)
	}
	if t.PoolSize < 0 {
		bad("pool_size %d is negative", t.PoolSize)
	}
	return errors.Join(errs...)
}
