package main

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/paddock-dev/paddock/templates"
)

// lang is one language's probes and its native interpreter.
type lang struct {
	name string
	// native runs a program unsandboxed: native + [program]. The path is
	// Debian's, so it names the template's own interpreter in its root
	// filesystem (the baseline) and, on the host, whatever Debian package
	// the host has (a second row), never a version-manager shim.
	native []string
	// version is the argument list that makes native[0] print its version.
	version []string
	// inSandbox runs a program under raw runsc: inSandbox + [program].
	inSandbox []string
	// snapshotted says whether the template's pool refills from a snapshot.
	// Node is never snapshotted: V8's Math.random and OpenSSL's state can't
	// be reseeded after a restore.
	snapshotted bool
	// setup and expr are the session probe: setup once, then expr timed.
	setup, expr string
	probes      []probe
}

// probe is one program whose time to first result is measured.
type probe struct {
	name string // short label, e.g. "print(1)"
	code string
	// trivial marks the probe that measures start overhead alone; the
	// warm-pool vs native ratio uses it.
	trivial bool
	ok      func(stdout string) bool
}

// sandboxed is the argument list that runs program under raw runsc.
func (l lang) sandboxed(program string) []string {
	return append(append([]string(nil), l.inSandbox...), program)
}

var versionLine = regexp.MustCompile(`^\d+\.\d+(\.\d+)?\S*\n$`)

func prints(want string) func(string) bool {
	return func(out string) bool { return out == want }
}

var langs = []lang{
	{
		name:        "python",
		native:      []string{"/usr/bin/python3", "-c"},
		version:     []string{"-c", "import sys; print(sys.version.split()[0])"},
		inSandbox:   []string{"python3", "-c"},
		snapshotted: true,
		setup:       "x = 1",
		expr:        "x + 1",
		probes: []probe{
			{name: "print(1)", code: "print(1)", trivial: true, ok: prints("1\n")},
			{name: "import pandas", code: "import pandas; print(pandas.__version__)", ok: versionLine.MatchString},
		},
	},
	{
		name:      "node",
		native:    []string{"/usr/bin/node", "-e"},
		version:   []string{"--version"},
		inSandbox: []string{"node", "-e"},
		setup:     "var x = 1",
		expr:      "x + 1",
		probes: []probe{
			{name: "console.log(1)", code: "console.log(1)", trivial: true, ok: prints("1\n")},
			// zlib is not loaded at start: requiring it compiles and runs
			// its JavaScript and binds the native library.
			{name: "require('zlib')", code: "console.log(require('zlib').constants.Z_BEST_COMPRESSION)", ok: prints("9\n")},
		},
	},
}

// langByName returns the language called name.
// templateLang is template name and the bench's language of it.
func templateLang(name string) (templates.Template, lang, error) {
	t, err := templates.Get(name)
	if err != nil {
		return templates.Template{}, lang{}, err
	}
	l, ok := langByName(t.Language)
	if !ok {
		return t, lang{}, fmt.Errorf("template %s: no bench language %q", name, t.Language)
	}
	return t, l, nil
}

func langByName(name string) (lang, bool) {
	for _, l := range langs {
		if l.name == name {
			return l, true
		}
	}
	return lang{}, false
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
