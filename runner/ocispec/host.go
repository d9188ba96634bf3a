package ocispec

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
)

// NewID returns a fresh sandbox id: "pd-" and 16 hex digits. Every id
// has the same length, so no id is a prefix of another.
func NewID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "pd-" + hex.EncodeToString(b[:]), nil
}

// InstallAgent copies the agent binary src into dir as AgentName, the
// host directory a runtime mounts read-only at AgentDir. The copy is
// renamed into place whole; the binary and dir end root-owned and
// world-readable, since every sandbox's user reads them.
func InstallAgent(src, dir string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	dst := filepath.Join(dir, AgentName)
	tmp := dst + ".tmp"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o555)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		return errors.Join(err, out.Close())
	}
	if err := out.Close(); err != nil {
		return err
	}
	// A umask may have narrowed the mode OpenFile gave.
	if err := os.Chmod(tmp, 0o555); err != nil {
		return err
	}
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	return os.Chmod(dir, 0o755)
}
