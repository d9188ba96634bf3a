package rootfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/templates"
)

// tinyTemplate's key is a9d95862e7d94a2a (see templates.Template.Key).
var tinyTemplate = templates.Template{
	Name:     "tiny",
	Language: "node",
	Suite:    "bookworm",
	Packages: []string{"nodejs"},
	Limits:   templates.Limits{MemoryMB: 64, Processes: 8, CPUs: 1, DiskMB: 16, OpenFiles: 64, TimeoutMS: 1000},
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLookup(t *testing.T) {
	const complete = `{"template":"tiny","key":"a9d95862e7d94a2a","versions":{"node":"v18.20.4"},"built_at":"2025-05-20T10:00:00Z","size_bytes":1234}`
	tests := []struct {
		name  string
		files map[string]string // relative to CacheDir; "dir/" makes a directory
		want  Image
		err   error
	}{
		{name: "nothing built", err: ErrNotBuilt},
		{
			name:  "tree without metadata",
			files: map[string]string{"rootfs/node-a9d95862e7d94a2a/rootfs/": ""},
			err:   ErrNotBuilt,
		},
		{
			name: "build in progress",
			files: map[string]string{
				"rootfs/node-a9d95862e7d94a2a.tmp-123/rootfs/":    "",
				"rootfs/node-a9d95862e7d94a2a.tmp-123/image.json": complete,
			},
			err: ErrNotBuilt,
		},
		{
			name:  "metadata without tree",
			files: map[string]string{"rootfs/node-a9d95862e7d94a2a/image.json": complete},
			err:   ErrNotBuilt,
		},
		{
			name: "corrupt metadata",
			files: map[string]string{
				"rootfs/node-a9d95862e7d94a2a/rootfs/":    "",
				"rootfs/node-a9d95862e7d94a2a/image.json": `{"template":`,
			},
			err: ErrNotBuilt,
		},
		{
			name: "metadata of another key",
			files: map[string]string{
				"rootfs/node-a9d95862e7d94a2a/rootfs/":    "",
				"rootfs/node-a9d95862e7d94a2a/image.json": `{"template":"tiny","key":"0000000000000000"}`,
			},
			err: ErrNotBuilt,
		},
		{
			name: "complete",
			files: map[string]string{
				"rootfs/node-a9d95862e7d94a2a/rootfs/":    "",
				"rootfs/node-a9d95862e7d94a2a/image.json": complete,
			},
			want: Image{
				Template:  "tiny",
				Key:       "a9d95862e7d94a2a",
				Path:      "rootfs/node-a9d95862e7d94a2a/rootfs",
				Versions:  map[string]string{"node": "v18.20.4"},
				BuiltAt:   time.Date(2025, 5, 20, 10, 0, 0, 0, time.UTC),
				SizeBytes: 1234,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cache := t.TempDir()
			for name, content := range tt.files {
				path := filepath.Join(cache, name)
				if name[len(name)-1] == '/' {
					if err := os.MkdirAll(path, 0o755); err != nil {
						t.Fatal(err)
					}
					continue
				}
				writeFile(t, path, content)
			}
			b := &Builder{CacheDir: cache}
			got, err := b.Lookup(tinyTemplate)
			if !errors.Is(err, tt.err) {
				t.Fatalf("Lookup error = %v, want %v", err, tt.err)
			}
			if tt.err != nil {
				return
			}
			if got.Template != tt.want.Template || got.Key != tt.want.Key || got.SizeBytes != tt.want.SizeBytes ||
				got.Path != filepath.Join(cache, tt.want.Path) || got.Versions["node"] != tt.want.Versions["node"] ||
				!got.BuiltAt.Equal(tt.want.BuiltAt) {
				t.Errorf("Lookup = %+v, want %+v under %s", got, tt.want, cache)
			}
		})
	}
}

func TestLookupWithoutCacheDir(t *testing.T) {
	var b Builder
	if _, err := b.Lookup(tinyTemplate); err == nil || errors.Is(err, ErrNotBuilt) {
		t.Errorf("Lookup without CacheDir = %v, want a configuration error", err)
	}
}

// An image is found by what it holds: a template of another name with the
// same packages (python-slim beside python) uses the image another built.
func TestLookupSharesImagesByKey(t *testing.T) {
	cache := t.TempDir()
	writeFile(t, filepath.Join(cache, "rootfs/node-a9d95862e7d94a2a/image.json"),
		`{"template":"tiny","key":"a9d95862e7d94a2a","versions":{"node":"v18.20.4"}}`)
	if err := os.MkdirAll(filepath.Join(cache, "rootfs/node-a9d95862e7d94a2a/rootfs"), 0o755); err != nil {
		t.Fatal(err)
	}
	twin := tinyTemplate
	twin.Name = "tiny-twin"
	b := &Builder{CacheDir: cache}
	got, err := b.Lookup(twin)
	if err != nil {
		t.Fatalf("Lookup(%s) = %v, want tiny's image", twin.Name, err)
	}
	if want := filepath.Join(cache, "rootfs/node-a9d95862e7d94a2a/rootfs"); got.Path != want || got.Template != "tiny" {
		t.Errorf("Lookup(%s) = %s built for %q, want %s built for %q", twin.Name, got.Path, got.Template, want, "tiny")
	}
}
