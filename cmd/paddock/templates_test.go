package main

import (
	"testing"

	"github.com/paddock-dev/paddock/templates"
)

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
