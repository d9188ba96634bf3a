package agent

import (
	"errors"
	"io/fs"
	"syscall"

	"github.com/paddock-dev/paddock/runner/agent/workspace"
	"github.com/paddock-dev/paddock/runner/wire"
)

// The file requests of kernel mode. They are served by the agent itself,
// inside the working directory, also while a cell runs.

func (k *kernel) writeFile(f wire.Frame) error {
	var req wire.FileWrite
	if ok, err := k.decode(f, &req); !ok {
		return err
	}
	return k.s.ack(fileAck(req.ID, k.s.files.Replace(req.Path, req.Content)))
}

func (k *kernel) readFile(f wire.Frame) error {
	var req wire.FileRead
	if ok, err := k.decode(f, &req); !ok {
		return err
	}
	content, err := k.s.files.Read(req.Path, req.Max)
	a := fileAck(req.ID, err)
	a.Content = content
	return k.s.ack(a)
}

func (k *kernel) listFiles(f wire.Frame) error {
	var req wire.FileRead
	if ok, err := k.decode(f, &req); !ok {
		return err
	}
	entries, err := k.s.files.List(req.Path)
	a := fileAck(req.ID, err)
	a.Entries = entries
	return k.s.ack(a)
}

// fileAck answers request id that ended with err.
func fileAck(id uint64, err error) wire.Ack {
	a := wire.Ack{ID: id}
	if err == nil {
		return a
	}
	a.Error = err.Error()
	a.Code = fileErrCode(err)
	a.NotFound = a.Code == wire.FileErrNotFound
	a.BadRequest = a.Code != "" && !a.NotFound
	return a
}

// fileErrCode classifies err as one of the wire's FileErr codes when the
// request or the state of the user's files caused it, or "" when the
// agent itself failed.
func fileErrCode(err error) string {
	switch {
	case errors.Is(err, ErrBadPath), workspace.Escapes(err):
		return wire.FileErrBadPath
	case errors.Is(err, ErrFileTooLarge):
		return wire.FileErrTooLarge
	case errors.Is(err, ErrTooManyEntries):
		return wire.FileErrTooManyEntries
	case errors.Is(err, ErrNotRegular):
		return wire.FileErrNotRegular
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		if errors.Is(err, fs.ErrPermission) { // mayRead's refusal
			return wire.FileErrPermission
		}
		return ""
	}
	switch errno {
	case syscall.ENAMETOOLONG:
		return wire.FileErrNameTooLong
	case syscall.ENOTDIR:
		return wire.FileErrNotDir
	case syscall.EISDIR:
		return wire.FileErrIsDir
	case syscall.ENXIO, syscall.ENODEV: // opening a socket, or a device without a driver
		return wire.FileErrNotRegular
	case syscall.ELOOP:
		return wire.FileErrLoop
	case syscall.EACCES, syscall.EPERM, syscall.EROFS:
		return wire.FileErrPermission
	case syscall.ENOSPC, syscall.EDQUOT, syscall.EFBIG:
		return wire.FileErrNoSpace
	case syscall.ENOENT:
		return wire.FileErrNotFound
	case syscall.EEXIST, syscall.ENOTEMPTY:
		return wire.FileErrExists
	}
	return ""
}
