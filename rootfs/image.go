package rootfs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/paddock-dev/paddock/templates"
)

// An image directory holds the root filesystem and, beside it, the
// metadata file that marks the image complete:
//
//	<language>-<key>/rootfs/      the tree the sandbox sees
//	<language>-<key>/image.json   metadata, written last
const (
	treeDir      = "rootfs"
	metadataFile = "image.json"
)

// metadata records how an image was built. Template is the template
// whose build made it; any template with the same Key may use it.
type metadata struct {
	Template     string            `json:"template"`
	Key          string            `json:"key"`
	Recipe       int               `json:"recipe"`
	Suite        string            `json:"suite"`
	Packages     []string          `json:"packages"`
	StubPackages []string          `json:"stub_packages,omitempty"`
	Sources      []string          `json:"sources"`
	Versions     map[string]string `json:"versions"`
	BuiltAt      time.Time         `json:"built_at"`
	BuildSeconds float64           `json:"build_seconds"`
	SizeBytes    int64             `json:"size_bytes"`
}

// lookup returns the complete image of t in dir, or ErrNotBuilt.
func lookup(dir string, t templates.Template) (Image, error) {
	key := t.Key()
	notBuilt := func(why string) (Image, error) {
		return Image{}, fmt.Errorf("%w: %s (key %s): %s", ErrNotBuilt, t.Name, key, why)
	}
	data, err := os.ReadFile(filepath.Join(dir, metadataFile))
	if errors.Is(err, fs.ErrNotExist) {
		return notBuilt("no image at " + dir)
	}
	if err != nil {
		return Image{}, fmt.Errorf("reading image metadata: %w", err)
	}
	var m metadata
	if err := json.Unmarshal(data, &m); err != nil {
		return notBuilt("unreadable metadata: " + err.Error())
	}
	if m.Key != key {
		return notBuilt(fmt.Sprintf("metadata is for %s (key %s)", m.Template, m.Key))
	}
	tree := filepath.Join(dir, treeDir)
	fi, err := os.Stat(tree)
	if err != nil || !fi.IsDir() {
		return notBuilt("no root filesystem at " + tree)
	}
	return Image{
		Template:  m.Template,
		Key:       m.Key,
		Path:      tree,
		Versions:  m.Versions,
		BuiltAt:   m.BuiltAt,
		SizeBytes: m.SizeBytes,
	}, nil
}

// writeMetadata writes m into dir and flushes it to disk.
func writeMetadata(dir string, m metadata) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding image metadata: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, metadataFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("writing image metadata: %w", err)
	}
	_, werr := f.Write(append(data, '\n'))
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return fmt.Errorf("writing image metadata: %w", err)
	}
	return nil
}

// syncDir flushes a directory's entries (after a rename) to disk.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
