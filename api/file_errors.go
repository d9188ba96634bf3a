package api

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/paddock-dev/paddock/runner"
)

// describeFileError words a file request the sandbox refused, for
// describeError: every kind is the client's (a bad name, or the state its
// own code left the files in), so a 4xx with a code of its own. A full
// disk is 413: what the request asked to store does not fit in the space
// the sandbox's disk_mb leaves. The body never carries the sandbox's own
// text, which may name Paddock's temporary files.
func describeFileError(e *runner.FileError) (int, errorBody) {
	what := fmt.Sprintf("%s %s", fileOpWords[e.Op], quotePath(e.Path))
	switch e.Kind {
	case runner.FileBadPath:
		return http.StatusBadRequest, errorBody{"invalid_path", "cannot " + what +
			": the path leads out of the working directory (a symbolic link or \"..\" points outside it)"}
	case runner.FileNameTooLong:
		return http.StatusBadRequest, errorBody{"name_too_long", "cannot " + what +
			": a name in the path is longer than the sandbox's file system allows (255 bytes)"}
	case runner.FileNotDir:
		return http.StatusConflict, errorBody{"not_a_directory", "cannot " + what +
			": a part of the path that must be a directory is a file"}
	case runner.FileIsDir:
		return http.StatusConflict, errorBody{"is_a_directory", "cannot " + what + ": it is a directory, not a file"}
	case runner.FileNotRegular:
		return http.StatusConflict, errorBody{"not_a_regular_file", "cannot " + what +
			": it is a pipe, socket or device, not a regular file"}
	case runner.FileExists:
		return http.StatusConflict, errorBody{"file_exists", "cannot " + what + ": something already exists in its place"}
	case runner.FileLoop:
		return http.StatusConflict, errorBody{"symlink_loop", "cannot " + what +
			": the path goes through too many symbolic links (a loop)"}
	case runner.FilePermission:
		return http.StatusForbidden, errorBody{"permission_denied", "cannot " + what +
			": the sandbox's user is not allowed to (file permissions, or a read-only location)"}
	case runner.FileNoSpace:
		return http.StatusRequestEntityTooLarge, errorBody{"disk_full", "cannot " + what +
			": the sandbox's disk is full (its disk_mb limit); delete files or ask for a larger disk_mb"}
	case runner.FileNotFound:
		return http.StatusNotFound, errorBody{"file_not_found", "cannot " + what + ": no such file or directory"}
	case runner.FileTooLarge:
		return http.StatusBadRequest, errorBody{"file_too_large", "cannot " + what +
			": the file is larger than a read may return (--max-body)"}
	case runner.FileTooManyEntries:
		return http.StatusBadRequest, errorBody{"too_many_entries", "cannot " + what +
			": the directory has more than 10000 entries, the most a listing returns"}
	}
	// Not reached: describeError checks knownFileKind first.
	return http.StatusInternalServerError, errorBody{"internal", "internal error"}
}

// knownFileKind reports whether describeFileError words kind.
func knownFileKind(kind runner.FileErrorKind) bool {
	return slices.Contains(runner.FileErrorKinds, kind)
}

// fileOpWords names each request in a message: "cannot <words> <path>".
var fileOpWords = map[runner.FileOp]string{
	runner.FileWrite:    "write",
	runner.FileRead:     "read",
	runner.FileList:     "list",
	runner.FileRunWrite: "write the run's file",
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
