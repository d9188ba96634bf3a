package rootfs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/templates"
)

func TestBuildErrorNamesTheMirrorSetting(t *testing.T) {
	err := BuildError("python", fmt.Errorf("%w (/etc/apt) to build bookworm from", ErrNoMirror))
	want := "root filesystem of python: no Debian mirror in the host's apt sources (/etc/apt) to build bookworm from: " +
		"set --mirror or PADDOCK_MIRROR to a Debian mirror, e.g. http://deb.debian.org/debian"
	if err.Error() != want {
		t.Errorf("error =\n%s\nwant\n%s", err, want)
	}
	other := BuildError("node", ErrNoMmdebstrap)
	if want := "root filesystem of node: " + ErrNoMmdebstrap.Error(); other.Error() != want {
		t.Errorf("error = %q, want %q", other, want)
	}
}

func TestEnsureAllWithoutBuildingNamesEachMissingImage(t *testing.T) {
	var tmpls []templates.Template
	for _, name := range []string{"node", "python", "python-slim"} {
		tm, err := templates.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		tmpls = append(tmpls, tm)
	}
	cache := t.TempDir()
	var progress strings.Builder
	_, err := EnsureAll(t.Context(), &Builder{CacheDir: cache, Progress: &progress}, tmpls, false)
	want := "root filesystem of node: rootfs image not built: node (key " + tmpls[0].Key() + "): no image at " + cache + "/rootfs/node-" + tmpls[0].Key() + "\n" +
		"root filesystem of python: rootfs image not built: python (key " + tmpls[1].Key() + "): no image at " + cache + "/rootfs/python-" + tmpls[1].Key() + "\n" +
		"root filesystem of python-slim: rootfs image not built: python-slim (key " + tmpls[2].Key() + "): no image at " + cache + "/rootfs/python-" + tmpls[1].Key()
	if err == nil || err.Error() != want {
		t.Errorf("error =\n%v\nwant\n%s", err, want)
	}
	if progress.Len() != 0 {
		t.Errorf("progress = %q, want nothing when nothing is built", progress.String())
	}
}
