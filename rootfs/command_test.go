package rootfs

import (
	"slices"
	"strings"
	"testing"

	"github.com/paddock-dev/paddock/templates"
)

func TestMmdebstrapArgs(t *testing.T) {
	sources := []source{
		{uri: "http://deb.debian.org/debian", suite: "bookworm", components: []string{"main"}},
		{uri: "http://deb.debian.org/debian-security", suite: "bookworm-security", components: []string{"main", "contrib"}},
	}
	filters := []string{
		"--dpkgopt=path-exclude=/usr/share/doc/*",
		"--dpkgopt=path-include=/usr/share/doc/*/copyright",
		"--dpkgopt=path-exclude=/usr/share/man/*",
		"--dpkgopt=path-exclude=/usr/share/info/*",
		"--dpkgopt=path-exclude=/usr/share/locale/*",
		"--dpkgopt=path-include=/usr/share/locale/locale.alias",
		"--dpkgopt=path-exclude=/usr/share/lintian/*",
	}
	tests := []struct {
		name     string
		template templates.Template
		stubDir  string
		want     []string
	}{
		{
			name:     "packages sorted, no stubs",
			template: templates.Template{Suite: "bookworm", Packages: []string{"nodejs", "ca-certificates"}},
			want: slices.Concat([]string{
				"--variant=minbase",
				"--mode=root",
				"--format=directory",
				"--include=ca-certificates,nodejs",
				"--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr",
				`--aptopt=Acquire::Languages "none"`,
			}, filters, []string{
				"--",
				"bookworm",
				"/cache/rootfs/node-1234.tmp-1/rootfs",
				"deb http://deb.debian.org/debian bookworm main",
				"deb http://deb.debian.org/debian-security bookworm-security main contrib",
			}),
		},
		{
			name: "stubs copied into the chroot's /tmp",
			template: templates.Template{
				Suite:        "bookworm",
				Packages:     []string{"python3-scipy", "python3"},
				StubPackages: []string{"unicode-data", "python3-pythran"},
			},
			stubDir: "/tmp/paddock-stubs-42",
			want: slices.Concat([]string{
				"--variant=minbase",
				"--mode=root",
				"--format=directory",
				"--include=python3,python3-scipy",
				"--include=/tmp/paddock-stubs-42/python3-pythran_stub_all.deb",
				"--include=/tmp/paddock-stubs-42/unicode-data_stub_all.deb",
				`--setup-hook=mkdir -p "$1/tmp"`,
				"--setup-hook=copy-in /tmp/paddock-stubs-42 /tmp",
				"--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr",
				`--aptopt=Acquire::Languages "none"`,
			}, filters, []string{
				"--",
				"bookworm",
				"/cache/rootfs/node-1234.tmp-1/rootfs",
				"deb http://deb.debian.org/debian bookworm main",
				"deb http://deb.debian.org/debian-security bookworm-security main contrib",
			}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mmdebstrapArgs(tt.template, "/cache/rootfs/node-1234.tmp-1/rootfs", sources, tt.stubDir)
			if !slices.Equal(got, tt.want) {
				t.Errorf("args =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
