package agent

import (
	"errors"
	"io/fs"
	"syscall"

	"github.com/paddock-dev/paddock/runner/wire"
)

// The file requests of kernel mode. They are served by the agent itself,
// inside the working directory, also while a cell runs.

func (k *kernel) writeFile(f wire.Frame) error {
	var req wire.FileWrite
	if ok, err := k.decode(f, &req); !ok {
		return err
	}
	return k.s.ack(fileAck(req.ID, k.s.files.replace(req.Path, req.Content)))
}

func (k *kernel) readFile(f wire.Frame) error {
	var req wire.FileRead
	if ok, err := k.decode(f, &req); !ok {
		return err
	}
	content, err := k.s.files.read(req.Path, req.Max)
	a := fileAck(req.ID, err)
	a.Content = content
	return k.s.ack(a)
}

func (k *kernel) listFiles(f wire.Frame) error {
	var req wire.FileRead
	if ok, err := k.decode(f, &req); !ok {
		return err
	}
	entries, err := k.s.files.list(req.Path)
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
	switch {
	case errors.Is(err, fs.ErrNotExist):
		a.NotFound = true
	case refusedPath(err):
		a.BadRequest = true
	}
	return a
}

// refusedPath reports whether err blames the request's path: malformed,
// escaping the working directory, or naming the wrong kind of file.
func refusedPath(err error) bool {
	for _, target := range []error{ErrBadPath, ErrFileTooLarge, ErrNotRegular, ErrTooManyEntries, syscall.ENOTDIR, syscall.EISDIR, syscall.ELOOP, syscall.EEXIST, syscall.ENOTEMPTY} {
		if errors.Is(err, target) {
			return true
		}
	}
	return escapes(err)
}

// escapes reports whether err is os.Root's refusal to leave its directory,
// through ".." or a symbolic link. The os package does not export that
// error; its message is part of its behaviour.
func escapes(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Err != nil && pe.Err.Error() == "path escapes from parent"
}
