package workspace

import (
	"errors"
	"io/fs"
)

var (
	// ErrBadPath means a request's file path is not a clean relative path
	// inside the working directory.
	ErrBadPath = errors.New("bad file path")
	// ErrFileTooLarge means a file is larger than a read may return.
	ErrFileTooLarge = errors.New("file too large")
	// ErrNotRegular means a read named a pipe, a socket or a device.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooManyEntries means a directory holds more entries than a listing
	// may return.
	ErrTooManyEntries = errors.New("too many directory entries")
)

// Escapes reports whether err is os.Root's refusal to leave its directory,
// through ".." or a symbolic link. The os package does not export that
// error; its message is part of its behaviour.
func Escapes(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Err != nil && pe.Err.Error() == "path escapes from parent"
}
