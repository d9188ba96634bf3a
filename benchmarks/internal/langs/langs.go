package langs

import (
	"fmt"
	"regexp"

	"github.com/paddock-dev/paddock/templates"
)

// Lang is one language's probes and its native interpreter.
type Lang struct {
	Name string
	// Native runs a program unsandboxed: native + [program]. The path is
	// Debian's, so it names the template's own interpreter in its root
	// filesystem (the baseline) and, on the host, whatever Debian package
	// the host has (a second row), never a version-manager shim.
	Native []string
	// Version is the argument list that makes native[0] print its version.
	Version []string
	// inSandbox runs a program under raw runsc: inSandbox + [program].
	inSandbox []string
	// Snapshotted says whether the template's pool refills from a snapshot.
	// Node is never snapshotted: V8's Math.random and OpenSSL's state can't
	// be reseeded after a restore.
	Snapshotted bool
	// Setup and expr are the session probe: setup once, then expr timed.
	Setup, Expr string
	Probes      []Probe
}

// Probe is one program whose time to first result is measured.
type Probe struct {
	Name string // short label, e.g. "print(1)"
	Code string
	// Trivial marks the probe that measures start overhead alone; the
	// warm-pool vs native ratio uses it.
	Trivial bool
	OK      func(stdout string) bool
}

// Sandboxed is the argument list that runs program under raw runsc.
func (l Lang) Sandboxed(program string) []string {
	return append(append([]string(nil), l.inSandbox...), program)
}

var versionLine = regexp.MustCompile(`^\d+\.\d+(\.\d+)?\S*\n$`)

// Prints is a probe check that wants exactly want on stdout.
func Prints(want string) func(string) bool {
	return func(out string) bool { return out == want }
}

// All are the languages the bench measures, in the order of its tables.
var All = []Lang{
	{
		Name:        "python",
		Native:      []string{"/usr/bin/python3", "-c"},
		Version:     []string{"-c", "import sys; print(sys.version.split()[0])"},
		inSandbox:   []string{"python3", "-c"},
		Snapshotted: true,
		Setup:       "x = 1",
		Expr:        "x + 1",
		Probes: []Probe{
			{Name: "print(1)", Code: "print(1)", Trivial: true, OK: Prints("1\n")},
			{Name: "import pandas", Code: "import pandas; print(pandas.__version__)", OK: versionLine.MatchString},
		},
	},
	{
		Name:      "node",
		Native:    []string{"/usr/bin/node", "-e"},
		Version:   []string{"--version"},
		inSandbox: []string{"node", "-e"},
		Setup:     "var x = 1",
		Expr:      "x + 1",
		Probes: []Probe{
			{Name: "console.log(1)", Code: "console.log(1)", Trivial: true, OK: Prints("1\n")},
			// zlib is not loaded at start: requiring it compiles and runs
			// its JavaScript and binds the native library.
			{Name: "require('zlib')", Code: "console.log(require('zlib').constants.Z_BEST_COMPRESSION)", OK: Prints("9\n")},
		},
	},
}

// ForTemplate is template name and the bench's language of it.
func ForTemplate(name string) (templates.Template, Lang, error) {
	t, err := templates.Get(name)
	if err != nil {
		return templates.Template{}, Lang{}, err
	}
	l, ok := ByName(t.Language)
	if !ok {
		return t, Lang{}, fmt.Errorf("template %s: no bench language %q", name, t.Language)
	}
	return t, l, nil
}

// ByName returns the language called name.
func ByName(name string) (Lang, bool) {
	for _, l := range All {
		if l.Name == name {
			return l, true
		}
	}
	return Lang{}, false
}

// Names returns the names of ls.
func Names(ls []Lang) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Name)
	}
	return out
}

// Snapshotted returns the languages whose pools refill from a snapshot.
func Snapshotted() []Lang {
	var out []Lang
	for _, l := range All {
		if l.Snapshotted {
			out = append(out, l)
		}
	}
	return out
}
