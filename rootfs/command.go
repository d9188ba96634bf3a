package rootfs

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/paddock-dev/paddock/templates"
)

// mergedUsrHooks ship with mmdebstrap. They set up merged /usr directly,
// which keeps the usrmerge package, and the full Perl it pulls in, out of
// the image.
const mergedUsrHooks = "/usr/share/mmdebstrap/hooks/merged-usr"

// dpkgPathFilters keep documentation, manuals and translations out of the
// image. Licences stay. (Python test suites cannot go this way: the
// packages' byte-compiling postinst fails on the missing directories; see
// removePythonTests.)
var dpkgPathFilters = []string{
	"path-exclude=/usr/share/doc/*",
	"path-include=/usr/share/doc/*/copyright",
	"path-exclude=/usr/share/man/*",
	"path-exclude=/usr/share/info/*",
	"path-exclude=/usr/share/locale/*",
	"path-include=/usr/share/locale/locale.alias",
	"path-exclude=/usr/share/lintian/*",
}

// stubDebPath is where writeStubDebs puts the stub package of name.
func stubDebPath(dir, name string) string {
	return filepath.Join(dir, name+"_stub_all.deb")
}

// mmdebstrapArgs renders the arguments of the mmdebstrap run that builds t
// into target from sources. stubDir holds t's stub packages; it must be a
// directory under /tmp, because dpkg inside the chroot opens the packages
// by the same path: a setup hook copies the directory into the chroot's
// /tmp, which mmdebstrap empties when it is done.
func mmdebstrapArgs(t templates.Template, target string, sources []source, stubDir string) []string {
	pkgs := slices.Sorted(slices.Values(t.Packages))
	args := []string{
		"--variant=minbase",
		"--mode=root",
		"--format=directory",
		"--include=" + strings.Join(pkgs, ","),
	}
	if len(t.StubPackages) > 0 {
		for _, name := range slices.Sorted(slices.Values(t.StubPackages)) {
			args = append(args, "--include="+stubDebPath(stubDir, name))
		}
		args = append(args,
			`--setup-hook=mkdir -p "$1/tmp"`,
			"--setup-hook=copy-in "+stubDir+" /tmp",
		)
	}
	args = append(args,
		"--hook-dir="+mergedUsrHooks,
		`--aptopt=Acquire::Languages "none"`,
	)
	for _, f := range dpkgPathFilters {
		args = append(args, "--dpkgopt="+f)
	}
	args = append(args, "--", t.Suite, target)
	for _, s := range sources {
		args = append(args, s.line())
	}
	return args
}
