package kernels

import (
	"context"

	"github.com/paddock-dev/paddock/runner"
)

// File operations run beside a running cell: each is its own request to
// the kernel, which resolves paths inside the sandbox and refuses those
// leaving the working directory; a *runner.FileError says why a request
// was refused (a missing file is also runner.ErrNotFound).

// WriteFile writes content to path in the owner's session id.
func (m *Manager) WriteFile(ctx context.Context, owner, id, path string, content []byte) error {
	s, l, err := m.pinAwake(ctx, owner, id)
	if err != nil {
		return err
	}
	defer m.unpin(s)
	return m.kernelErr(s, "writing a file in", l.k.WriteFile(ctx, path, content))
}

// ReadFile reads path, of at most maxBytes, from the owner's session id.
func (m *Manager) ReadFile(ctx context.Context, owner, id, path string, maxBytes int64) ([]byte, error) {
	s, l, err := m.pinAwake(ctx, owner, id)
	if err != nil {
		return nil, err
	}
	defer m.unpin(s)
	b, err := l.k.ReadFile(ctx, path, maxBytes)
	return b, m.kernelErr(s, "reading a file in", err)
}

// ListFiles lists the directory dir ("" is the working directory) of the
// owner's session id.
func (m *Manager) ListFiles(ctx context.Context, owner, id, dir string) ([]runner.FileInfo, error) {
	s, l, err := m.pinAwake(ctx, owner, id)
	if err != nil {
		return nil, err
	}
	defer m.unpin(s)
	files, err := l.k.ListFiles(ctx, dir)
	return files, m.kernelErr(s, "listing files in", err)
}
