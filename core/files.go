package core

import (
	"context"
	"fmt"

	"github.com/paddock-dev/paddock/runner"
)

// WriteFile writes content as the file path (relative to the working
// directory, see CheckPath) of the caller's session id. Content over
// Config.MaxFileBytes is KindTooLarge.
func (s *Service) WriteFile(ctx context.Context, c Caller, id, path string, content []byte) (err error) {
	defer func() { s.metrics.done(c.Door, "write_file", err) }()
	if err := s.sessionsFor(c); err != nil {
		return err
	}
	if _, err := checkSessionPath("path", path, true); err != nil {
		return err
	}
	if int64(len(content)) > s.cfg.MaxFileBytes {
		return &Error{Kind: KindTooLarge, Code: "file_too_large",
			Message: fmt.Sprintf("the file has %d bytes, more than the %d a session file may have", len(content), s.cfg.MaxFileBytes)}
	}
	return s.fail(s.kernels.WriteFile(ctx, c.Tenant, id, path, content))
}

// ReadFile returns the file path of the caller's session id, at most
// maxBytes of it (0: Config.MaxFileBytes, which it may not exceed): a
// larger file is KindInvalid ("file_too_large").
func (s *Service) ReadFile(ctx context.Context, c Caller, id, path string, maxBytes int64) (_ []byte, err error) {
	defer func() { s.metrics.done(c.Door, "read_file", err) }()
	if err := s.sessionsFor(c); err != nil {
		return nil, err
	}
	if _, err := checkSessionPath("path", path, true); err != nil {
		return nil, err
	}
	if maxBytes <= 0 || maxBytes > s.cfg.MaxFileBytes {
		maxBytes = s.cfg.MaxFileBytes
	}
	data, err := s.kernels.ReadFile(ctx, c.Tenant, id, path, maxBytes)
	if err != nil {
		return nil, s.fail(err)
	}
	return data, nil
}

// ListFiles lists the directory dir ("" or "." for the working
// directory) of the caller's session id; never nil.
func (s *Service) ListFiles(ctx context.Context, c Caller, id, dir string) (_ []runner.FileInfo, err error) {
	defer func() { s.metrics.done(c.Door, "list_files", err) }()
	if err := s.sessionsFor(c); err != nil {
		return nil, err
	}
	if _, err := checkSessionPath("list", dir, false); err != nil {
		return nil, err
	}
	files, err := s.kernels.ListFiles(ctx, c.Tenant, id, dir)
	if err != nil {
		return nil, s.fail(err)
	}
	if files == nil {
		files = []runner.FileInfo{}
	}
	return files, nil
}
