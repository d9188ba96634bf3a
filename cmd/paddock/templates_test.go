package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/rootfs"
	"github.com/paddock-dev/paddock/templates"
)

func TestBuildErrorNamesTheMirrorSetting(t *testing.T) {
	err := buildError("python", fmt.Errorf("%w (/etc/apt) to build bookworm from", rootfs.ErrNoMirror))
	want := "root filesystem of python: no Debian mirror in the host's apt sources (/etc/apt) to build bookworm from: " +
		"set --mirror or PADDOCK_MIRROR to a Debian mirror, e.g. http://deb.debian.org/debian"
	if err.Error() != want {
		t.Errorf("error =\n%s\nwant\n%s", err, want)
	}
	other := buildError("node", rootfs.ErrNoMmdebstrap)
	if want := "root filesystem of node: " + rootfs.ErrNoMmdebstrap.Error(); other.Error() != want {
		t.Errorf("error = %q, want %q", other, want)
	}
}

func TestMirrorAndSuiteSettings(t *testing.T) {
	shipped, err := templates.Get("node")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("defaults: the host's mirror and each template's suite", func(t *testing.T) {
		t.Setenv("PADDOCK_MIRROR", "")
		t.Setenv("PADDOCK_SUITE", "")
		cfg, _, err := parse("rootfs", nil)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Mirror != "" || cfg.builder(nil, nil).Mirror != "" {
			t.Errorf("mirror = %q, want none", cfg.Mirror)
		}
		got, err := cfg.template("node")
		if err != nil || got.Suite != "bookworm" || got.Key() != shipped.Key() {
			t.Errorf("template = suite %q key %q (%v), want bookworm and the shipped key %s", got.Suite, got.Key(), err, shipped.Key())
		}
	})
	t.Run("environment", func(t *testing.T) {
		t.Setenv("PADDOCK_MIRROR", "http://mirror.local/debian")
		t.Setenv("PADDOCK_SUITE", "trixie")
		cfg, _, err := parse("rootfs", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.builder(nil, nil).Mirror; got != "http://mirror.local/debian" {
			t.Errorf("builder mirror = %q, want http://mirror.local/debian", got)
		}
		got, err := cfg.template("node")
		if err != nil || got.Suite != "trixie" || got.Key() == shipped.Key() {
			t.Errorf("template = suite %q key %q (%v), want trixie and a key other than %s", got.Suite, got.Key(), err, shipped.Key())
		}
	})
	t.Run("flags override the environment", func(t *testing.T) {
		t.Setenv("PADDOCK_MIRROR", "http://mirror.local/debian")
		cfg, _, err := parse("serve", []string{"--mirror=https://other.local/debian", "--suite=bookworm"})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Mirror != "https://other.local/debian" || cfg.Suite != "bookworm" {
			t.Errorf("mirror, suite = %q, %q", cfg.Mirror, cfg.Suite)
		}
	})
	t.Run("bad suite", func(t *testing.T) {
		cfg, _, err := parse("rootfs", []string{"--suite=Bookworm Updates"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = cfg.template("node")
		if want := `--suite "Bookworm Updates": `; err == nil || len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
			t.Errorf("template error = %v, want one starting %q", err, want)
		}
	})
	t.Run("bad mirror", func(t *testing.T) {
		cfg, _, err := parse("serve", []string{"--runsc=/bin/true", "--mirror=deb.debian.org/debian"})
		if err != nil {
			t.Fatal(err)
		}
		want := `--mirror: mirror "deb.debian.org/debian" is not a URI`
		if err := cfg.Validate(); err == nil || err.Error() != want {
			t.Errorf("Validate error = %v, want %q", err, want)
		}
	})
}

func TestEnsureImagesWithoutBuildingNamesEachMissingImage(t *testing.T) {
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
	_, err := ensureImages(t.Context(), &rootfs.Builder{CacheDir: cache, Progress: &progress}, tmpls, false)
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
