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
				"deb http://deb.debian.org/debian bookworm main",
				"deb http://deb.debian.org/debian bookworm-updates main",
				"deb http://deb.debian.org/debian-security bookworm-security main",
				"deb https://mirror.example.org/debian/ trixie main contrib",
				"deb https://mirror2.example.org/debian trixie main contrib",
			},
		},
		{
			name: "one-line with options and comments",
			dir:  "testdata/apt-oneline",
			want: []string{
				"deb http://ftp.example.org/debian bookworm main contrib non-free-firmware",
				"deb http://ftp.example.org/debian bookworm-updates main",
				"deb http://security.example.org/debian-security bookworm-security main",
				"deb http://ftp.example.org/debian bookworm main contrib non-free-firmware",
				"deb https://packages.example.com/apt cloud-sdk-bookworm main",
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

// errBadMirror marks cases that expect a rejected Builder.Mirror.
var errBadMirror = errors.New("bad mirror")

func TestSuiteSources(t *testing.T) {
	tests := []struct {
		name   string
		dir    string
		suite  string
		mirror string
		want   []string
		err    error
	}{
		{
			name:  "deb822 bookworm with updates and security",
			dir:   "testdata/apt-deb822",
			suite: "bookworm",
			want: []string{
				"deb http://deb.debian.org/debian bookworm main",
				"deb http://deb.debian.org/debian bookworm-updates main",
				"deb http://deb.debian.org/debian-security bookworm-security main",
			},
		},
		{
			name:  "deb822 trixie without updates",
			dir:   "testdata/apt-deb822",
			suite: "trixie",
			want: []string{
				"deb https://mirror.example.org/debian/ trixie main contrib",
				"deb https://mirror2.example.org/debian trixie main contrib",
			},
		},
		{
			name:  "one-line duplicates dropped",
			dir:   "testdata/apt-oneline",
			suite: "bookworm",
			want: []string{
				"deb http://ftp.example.org/debian bookworm main contrib non-free-firmware",
				"deb http://ftp.example.org/debian bookworm-updates main",
				"deb http://security.example.org/debian-security bookworm-security main",
			},
		},
		{
			name:   "mirror override keeps host security",
			dir:    "testdata/apt-deb822",
			suite:  "bookworm",
			mirror: "http://mirror.local/debian",
			want: []string{
				"deb http://mirror.local/debian bookworm main",
				"deb http://mirror.local/debian bookworm-updates main",
				"deb http://deb.debian.org/debian-security bookworm-security main",
			},
		},
		{
			name:   "mirror override on a host without Debian",
			dir:    "testdata/apt-ubuntu",
			suite:  "bookworm",
			mirror: "http://mirror.local/debian",
			want: []string{
				"deb http://mirror.local/debian bookworm main",
				"deb http://mirror.local/debian bookworm-updates main",
			},
		},
		{name: "host without Debian", dir: "testdata/apt-ubuntu", suite: "bookworm", err: ErrNoSource},
		{name: "mirror with spaces", dir: "testdata/apt-deb822", suite: "bookworm", mirror: "http://x/debian bookworm contrib", err: errBadMirror},
		{name: "mirror without scheme", dir: "testdata/apt-deb822", suite: "bookworm", mirror: "deb.debian.org/debian", err: errBadMirror},
		{name: "suite not served", dir: "testdata/apt-oneline", suite: "bullseye", err: ErrNoSource},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &Builder{Mirror: tt.mirror, aptDir: tt.dir}
			got, err := b.sources(tt.suite)
			if tt.err == errBadMirror {
				if err == nil || !strings.Contains(err.Error(), "is not a URI") {
					t.Errorf("sources error = %v, want a bad mirror error", err)
				}
				return
			}
			if !errors.Is(err, tt.err) {
				t.Fatalf("sources error = %v, want %v", err, tt.err)
			}
			if !slices.Equal(lines(got), tt.want) {
				t.Errorf("sources =\n%s\nwant\n%s", strings.Join(lines(got), "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
