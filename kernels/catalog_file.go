package kernels

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// FileCatalog keeps session records as files, one per session, under Dir
// (made 0700, each file 0600), for a server without a history database.
type FileCatalog struct{ Dir string }

const catalogExt = ".json"

func (c FileCatalog) path(id string) (string, error) {
	if _, err := hex.DecodeString(id); err != nil || id == "" {
		return "", fmt.Errorf("session id %q is not hex", id)
	}
	return filepath.Join(c.Dir, id+catalogExt), nil
}

// Load reads every record; a file that cannot be read is an error, one
// that is not a record's (by its name) is left alone.
func (c FileCatalog) Load(context.Context) (map[string][]byte, error) {
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(c.Dir)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), catalogExt)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if _, err := c.path(id); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(c.Dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out[id] = b
	}
	return out, nil
}

// Save writes id's record whole or not at all (a temporary file renamed
// over the old one).
func (c FileCatalog) Save(_ context.Context, id string, doc []byte) error {
	p, err := c.path(id)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, doc, 0o600); err != nil {
		return errors.Join(err, os.Remove(tmp))
	}
	return os.Rename(tmp, p)
}

// Remove deletes id's record; one that is not there is no error.
func (c FileCatalog) Remove(_ context.Context, id string) error {
	p, err := c.path(id)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
