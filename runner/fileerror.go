package runner

import "fmt"

// FileError is a file request the sandbox refused because of the request
// or of what the sandbox's own files are now (a name too long, a parent
// that is a file, a full disk…): the caller's problem, not Paddock's. It
// is an ErrNotFound when Kind is FileNotFound.
type FileError struct {
	Op   FileOp
	Path string // as the request named it
	Kind FileErrorKind
	// Detail is the sandbox's own description, for logs: it may name
	// Paddock's temporary files and is never shown to the client.
	Detail string
}

// FileOp is the request a FileError refused.
type FileOp string

const (
	FileWrite    FileOp = "write"     // a session's file write
	FileRead     FileOp = "read"      // a session's file read
	FileList     FileOp = "list"      // a session's directory listing
	FileRunWrite FileOp = "run files" // writing a one-shot run's files
)

// FileErrorKind says why a file request was refused.
type FileErrorKind string

const (
	// FileBadPath: not a clean relative path, or it leads out of the
	// working directory (through ".." or a symbolic link).
	FileBadPath FileErrorKind = "bad_path"
	// FileNameTooLong: a name in the path is longer than the file system
	// allows (ENAMETOOLONG).
	FileNameTooLong FileErrorKind = "name_too_long"
	// FileNotDir: a component used as a directory is not one (ENOTDIR).
	FileNotDir FileErrorKind = "not_dir"
	// FileIsDir: a directory where a file was meant (EISDIR).
	FileIsDir FileErrorKind = "is_dir"
	// FileNotRegular: a pipe, socket or device where a file was meant.
	FileNotRegular FileErrorKind = "not_regular"
	// FilePermission: the sandbox user may not (EACCES, EPERM, EROFS).
	FilePermission FileErrorKind = "permission"
	// FileNoSpace: the sandbox's disk is full (ENOSPC, EDQUOT, EFBIG).
	FileNoSpace FileErrorKind = "no_space"
	// FileNotFound: no such file or directory (ENOENT).
	FileNotFound FileErrorKind = "not_found"
	// FileExists: something is in the way (EEXIST, ENOTEMPTY).
	FileExists FileErrorKind = "exists"
	// FileLoop: too many symbolic links, a loop (ELOOP).
	FileLoop FileErrorKind = "loop"
	// FileTooLarge: the file is larger than the read may return.
	FileTooLarge FileErrorKind = "too_large"
	// FileTooManyEntries: the directory has more entries than a listing
	// may return.
	FileTooManyEntries FileErrorKind = "too_many_entries"
)

// FileErrorKinds lists every kind, for tests and for checking a kind read
// off the wire.
var FileErrorKinds = []FileErrorKind{
	FileBadPath, FileNameTooLong, FileNotDir, FileIsDir, FileNotRegular, FilePermission,
	FileNoSpace, FileNotFound, FileExists, FileLoop, FileTooLarge, FileTooManyEntries,
}

func (e *FileError) Error() string {
	return fmt.Sprintf("%s %q: %s: %s", e.Op, e.Path, e.Kind, e.Detail)
}

func (e *FileError) Is(target error) bool {
	return target == ErrNotFound && e.Kind == FileNotFound
}
