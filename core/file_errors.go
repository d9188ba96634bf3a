package core

import (
	"fmt"

	"github.com/paddock-dev/paddock/runner"
)

// fileRefusal is the meaning of one kind of refused file request.
type fileRefusal struct {
	kind Kind
	code string
	why  string // what was wrong, after "cannot <op> <path>: "
}

// fileRefusals words every kind a sandbox may refuse a file request for.
// Each is the client's doing (a bad name, or the state its own code left
// the files in), so a client error with a code of its own. A full disk is
// KindTooLarge: what
// the request asked to store does not fit in the space the sandbox's
// disk_mb leaves. The message never carries the sandbox's own text, which may
// name Paddock's temporary files.
var fileRefusals = map[runner.FileErrorKind]fileRefusal{
	runner.FileBadPath: {KindInvalid, "invalid_path",
		"the path leads out of the working directory (a symbolic link or \"..\" points outside it)"},
	runner.FileNameTooLong: {KindInvalid, "name_too_long",
		"a name in the path is longer than the sandbox's file system allows (255 bytes)"},
	runner.FileNotDir:     {KindConflict, "not_a_directory", "a part of the path that must be a directory is a file"},
	runner.FileIsDir:      {KindConflict, "is_a_directory", "it is a directory, not a file"},
	runner.FileNotRegular: {KindConflict, "not_a_regular_file", "it is a pipe, socket or device, not a regular file"},
	runner.FileExists:     {KindConflict, "file_exists", "something already exists in its place"},
	runner.FileLoop:       {KindConflict, "symlink_loop", "the path goes through too many symbolic links (a loop)"},
	runner.FilePermission: {KindForbidden, "permission_denied",
		"the sandbox's user is not allowed to (file permissions, or a read-only location)"},
	runner.FileNoSpace: {KindTooLarge, "disk_full",
		"the sandbox's disk is full (its disk_mb limit); delete files or ask for a larger disk_mb"},
	runner.FileNotFound: {KindNotFound, "file_not_found", "no such file or directory"},
	runner.FileTooLarge: {KindInvalid, "file_too_large",
		"the file is larger than a read may return (--max-body)"},
	runner.FileTooManyEntries: {KindInvalid, "too_many_entries",
		"the directory has more than 10000 entries, the most a listing returns"},
}

// describeFileError words a file request the sandbox refused, for
// classify, which checks knownFileKind first.
func describeFileError(e *runner.FileError) *Error {
	r := fileRefusals[e.Kind]
	return &Error{Kind: r.kind, Code: r.code, Message: fmt.Sprintf("cannot %s %s: %s", fileOpWords[e.Op], quotePath(e.Path), r.why)}
}

// knownFileKind reports whether fileRefusals words kind.
func knownFileKind(kind runner.FileErrorKind) bool {
	_, ok := fileRefusals[kind]
	return ok
}

// fileOpWords names each request in a message: "cannot <words> <path>".
var fileOpWords = map[runner.FileOp]string{
	runner.FileWrite:      "write",
	runner.FileRead:       "read",
	runner.FileList:       "list",
	runner.FileRunWrite:   "write the run's file",
	runner.FileCommandDir: "run the command in",
}

// maxQuotedPath bounds how much of a path a message repeats.
const maxQuotedPath = 100

// quotePath quotes p for a message, its first maxQuotedPath bytes when
// longer (a name too long can be 4096 bytes).
func quotePath(p string) string {
	if p == "" {
		return `"."`
	}
	if len(p) <= maxQuotedPath {
		return fmt.Sprintf("%q", p)
	}
	return fmt.Sprintf("%q… (%d bytes)", p[:maxQuotedPath], len(p))
}
