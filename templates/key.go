package templates

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
)

// RecipeVersion is the version of the way rootfs turns a template into a
// root filesystem. Bump it whenever rootfs changes what it builds (mmdebstrap
// options, users, directories, permissions) so that Key changes and every
// cached image is rebuilt.
const RecipeVersion = 2

// Key is a short, stable hex digest of everything that decides the
// template's root filesystem: RecipeVersion, the suite, and the sorted
// package and stub package lists, and for node the startup snapshot's
// entry script (startup.go). Limits, warm-up code, version commands
// and pool size do not change the image and do not change the key.
func (t Template) Key() string {
	sorted := func(names []string) string {
		names = slices.Clone(names)
		slices.Sort(names)
		return strings.Join(names, ",")
	}
	var b strings.Builder
	b.WriteString("paddock-rootfs\n")
	b.WriteString("recipe " + strconv.Itoa(RecipeVersion) + "\n")
	b.WriteString("suite " + t.Suite + "\n")
	b.WriteString("packages " + sorted(t.Packages) + "\n")
	b.WriteString("stubs " + sorted(t.StubPackages) + "\n")
	b.WriteString(t.startupKey())
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])[:16]
}
