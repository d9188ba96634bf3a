package rootfs

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func lines(sources []source) []string {
	var out []string
	for _, s := range sources {
		out = append(out, s.line())
	}
	return out
}

func TestReadAptSources(t *testing.T) {
	tests := []struct {
		name string
		dir  string
		want []string
	}{
		{
			name: "deb822 as on the CI host",
			dir:  "testdata/apt-deb822",
			want: []string{
				"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main",
				"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm-updates main",
				"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security bookworm-security main",
				"deb https://mirror.example.org/debian/ trixie main contrib",
				"deb https://mirror2.example.org/debian trixie main contrib",
			},
		},
		{
			name: "one-line with options and comments",
			dir:  "testdata/apt-oneline",
			want: []string{
				"deb http://ftp.example.org/debian bookworm main contrib non-free-firmware",
				"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://ftp.example.org/debian bookworm-updates main",
				"deb http://security.example.org/debian-security bookworm-security main",
				"deb http://ftp.example.org/debian bookworm main contrib non-free-firmware",
				"deb https://packages.example.com/apt cloud-sdk-bookworm main",
			},
		},
		{
			name: "Debian 13 deb822 after a one-line third-party list",
			dir:  "testdata/apt-trixie",
			want: []string{
				"deb [signed-by=/etc/apt/keyrings/docker.asc] https://download.example.com/linux/debian trixie stable",
				"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.pgp] http://mirror.example.net/debian trixie main non-free-firmware",
				"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.pgp] http://mirror.example.net/debian trixie-updates main non-free-firmware",
				"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.pgp] http://security.example.net/debian-security trixie-security main non-free-firmware",
			},
		},
		{
			name: "Ubuntu 24.04 deb822",
			dir:  "testdata/apt-noble",
			want: []string{
				"deb [signed-by=/usr/share/keyrings/ubuntu-archive-keyring.gpg] http://archive.ubuntu.com/ubuntu/ noble main restricted universe multiverse",
				"deb [signed-by=/usr/share/keyrings/ubuntu-archive-keyring.gpg] http://archive.ubuntu.com/ubuntu/ noble-updates main restricted universe multiverse",
				"deb [signed-by=/usr/share/keyrings/ubuntu-archive-keyring.gpg] http://archive.ubuntu.com/ubuntu/ noble-backports main restricted universe multiverse",
				"deb [signed-by=/usr/share/keyrings/ubuntu-archive-keyring.gpg] http://security.ubuntu.com/ubuntu/ noble-security main restricted universe multiverse",
			},
		},
		{
			name: "no apt configuration",
			dir:  t.TempDir(),
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAptSources(tt.dir)
			if err != nil {
				t.Fatalf("readAptSources: %v", err)
			}
			if !slices.Equal(lines(got), tt.want) {
				t.Errorf("sources =\n%s\nwant\n%s", strings.Join(lines(got), "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name  string
		parse func(string) error
		text  string
		want  string
	}{
		{name: "one-line unclosed options", text: "deb [arch=amd64 http://x bookworm main\n", want: "line 1: unclosed option list",
			parse: func(s string) error { _, err := parseOneLine(strings.NewReader(s)); return err }},
		{name: "one-line without suite", text: "# x\ndeb http://x\n", want: "line 2: want a URI and a suite",
			parse: func(s string) error { _, err := parseOneLine(strings.NewReader(s)); return err }},
		{name: "deb822 stray continuation", text: " main\n", want: "line 1: continuation line outside a field",
			parse: func(s string) error { _, err := parseDeb822(strings.NewReader(s)); return err }},
		{name: "deb822 line without colon", text: "Types: deb\nURIs deb.debian.org\n", want: `line 2: want "Field: value"`,
			parse: func(s string) error { _, err := parseDeb822(strings.NewReader(s)); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.parse(tt.text)
			if err == nil || err.Error() != tt.want {
				t.Errorf("error = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestPlan checks where each kind of host builds a suite from: the
// mirror and suite chosen, the keyring, and the exact error when there is
// no Debian mirror to take.
func TestPlan(t *testing.T) {
	const (
		fakeKeyring = "testdata/keyrings/debian-archive-keyring.gpg"
		trixieKey   = "[signed-by=/usr/share/keyrings/debian-archive-keyring.pgp] "
	)
	tests := []struct {
		name       string
		dir        string
		keyringDir string // "": a directory without a keyring
		suite      string
		mirror     string
		want       []string
		why        string
		err        string
	}{
		{
			name:  "bookworm host builds bookworm from its own entries",
			dir:   "testdata/apt-deb822",
			suite: "bookworm",
			want: []string{
				"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main",
				"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm-updates main",
				"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security bookworm-security main",
			},
			why: "the host's apt sources list bookworm",
		},
		{
			name:  "trixie listed by a mirror without updates",
			dir:   "testdata/apt-deb822",
			suite: "trixie",
			want: []string{
				"deb https://mirror.example.org/debian/ trixie main contrib",
				"deb https://mirror2.example.org/debian trixie main contrib",
			},
			why: "the host's apt sources list trixie",
		},
		{
			name:  "one-line duplicates dropped, options kept",
			dir:   "testdata/apt-oneline",
			suite: "bookworm",
			want: []string{
				"deb http://ftp.example.org/debian bookworm main contrib non-free-firmware",
				"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://ftp.example.org/debian bookworm-updates main",
				"deb http://security.example.org/debian-security bookworm-security main",
			},
			why: "the host's apt sources list bookworm",
		},
		{
			name:  "Debian 13 host builds bookworm from its mirror with its keyring",
			dir:   "testdata/apt-trixie",
			suite: "bookworm",
			want: []string{
				"deb " + trixieKey + "http://mirror.example.net/debian bookworm main",
				"deb " + trixieKey + "http://mirror.example.net/debian bookworm-updates main",
				"deb " + trixieKey + "http://security.example.net/debian-security bookworm-security main",
			},
			why: "the host's apt sources list trixie, not bookworm: bookworm from the host's Debian mirror",
		},
		{
			name:       "a suite the host does not list, keyring from the keyring directory",
			dir:        "testdata/apt-oneline",
			keyringDir: "testdata/keyrings",
			suite:      "trixie",
			want: []string{
				"deb [signed-by=" + fakeKeyring + "] http://ftp.example.org/debian trixie main",
				"deb [signed-by=" + fakeKeyring + "] http://ftp.example.org/debian trixie-updates main",
				"deb [signed-by=" + fakeKeyring + "] http://security.example.org/debian-security trixie-security main",
			},
			why: "the host's apt sources list bookworm, not trixie: trixie from the host's Debian mirror",
		},
		{
			name:  "a suite the host does not list, no keyring installed",
			dir:   "testdata/apt-oneline",
			suite: "trixie",
			want: []string{
				"deb http://ftp.example.org/debian trixie main",
				"deb http://ftp.example.org/debian trixie-updates main",
				"deb http://security.example.org/debian-security trixie-security main",
			},
			why: "the host's apt sources list bookworm, not trixie: trixie from the host's Debian mirror",
		},
		{
			name:       "mirror given on a bookworm host keeps the host's security entry",
			dir:        "testdata/apt-deb822",
			keyringDir: "testdata/keyrings",
			suite:      "bookworm",
			mirror:     "http://mirror.local/debian",
			want: []string{
				"deb [signed-by=" + fakeKeyring + "] http://mirror.local/debian bookworm main",
				"deb [signed-by=" + fakeKeyring + "] http://mirror.local/debian bookworm-updates main",
				"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security bookworm-security main",
			},
			why: "the mirror http://mirror.local/debian was given",
		},
		{
			name:   "mirror given on a trixie host takes security from its security archive",
			dir:    "testdata/apt-trixie",
			suite:  "bookworm",
			mirror: "https://mirror.local/debian",
			want: []string{
				"deb https://mirror.local/debian bookworm main",
				"deb https://mirror.local/debian bookworm-updates main",
				"deb " + trixieKey + "http://security.example.net/debian-security bookworm-security main",
			},
			why: "the mirror https://mirror.local/debian was given",
		},
		{
			name:       "mirror given on Ubuntu 24.04",
			dir:        "testdata/apt-noble",
			keyringDir: "testdata/keyrings",
			suite:      "bookworm",
			mirror:     "http://mirror.local/debian",
			want: []string{
				"deb [signed-by=" + fakeKeyring + "] http://mirror.local/debian bookworm main",
				"deb [signed-by=" + fakeKeyring + "] http://mirror.local/debian bookworm-updates main",
			},
			why: "the mirror http://mirror.local/debian was given",
		},
		{
			name:  "Ubuntu 24.04 without a mirror",
			dir:   "testdata/apt-noble",
			suite: "bookworm",
			err:   "no Debian mirror in the host's apt sources (testdata/apt-noble) to build bookworm from",
		},
		{
			name:  "Ubuntu 22.04 without a mirror",
			dir:   "testdata/apt-ubuntu",
			suite: "bookworm",
			err:   "no Debian mirror in the host's apt sources (testdata/apt-ubuntu) to build bookworm from",
		},
		{name: "mirror with spaces", dir: "testdata/apt-deb822", suite: "bookworm", mirror: "http://x/debian bookworm contrib",
			err: `mirror "http://x/debian bookworm contrib" is not a URI`},
		{name: "mirror without scheme", dir: "testdata/apt-deb822", suite: "bookworm", mirror: "deb.debian.org/debian",
			err: `mirror "deb.debian.org/debian" is not a URI`},
		{name: "mirror of another scheme", dir: "testdata/apt-deb822", suite: "bookworm", mirror: "ftp://ftp.example.org/debian",
			err: `mirror "ftp://ftp.example.org/debian": want an http, https or file URI`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keyringDir := tt.keyringDir
			if keyringDir == "" {
				keyringDir = t.TempDir()
			}
			b := &Builder{Mirror: tt.mirror, aptDir: tt.dir, keyringDir: keyringDir}
			got, why, err := b.Sources(tt.suite)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("Sources error = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Sources: %v", err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("sources =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if why != tt.why {
				t.Errorf("why = %q, want %q", why, tt.why)
			}
		})
	}
}

func TestNoMirrorIsErrNoMirror(t *testing.T) {
	b := &Builder{aptDir: "testdata/apt-noble", keyringDir: t.TempDir()}
	if _, _, err := b.Sources("bookworm"); !errors.Is(err, ErrNoMirror) {
		t.Errorf("Sources error = %v, want ErrNoMirror", err)
	}
}
