package wire

// The codes of a file request that failed because of the request or of
// the sandbox's files, in Ack.Code and Fail.Code. An error without a code
// is the agent's own failure.
const (
	FileErrBadPath        = "bad_path"         // not clean, or leads out of the working directory
	FileErrNameTooLong    = "name_too_long"    // ENAMETOOLONG
	FileErrNotDir         = "not_dir"          // ENOTDIR
	FileErrIsDir          = "is_dir"           // EISDIR
	FileErrNotRegular     = "not_regular"      // a pipe, socket or device (ENXIO, ENODEV)
	FileErrPermission     = "permission"       // EACCES, EPERM, EROFS
	FileErrNoSpace        = "no_space"         // ENOSPC, EDQUOT, EFBIG
	FileErrNotFound       = "not_found"        // ENOENT
	FileErrExists         = "exists"           // EEXIST, ENOTEMPTY
	FileErrLoop           = "loop"             // ELOOP
	FileErrTooLarge       = "too_large"        // larger than the read may return
	FileErrTooManyEntries = "too_many_entries" // more entries than a listing may return
)

// FileErrCodes lists every code.
var FileErrCodes = []string{
	FileErrBadPath, FileErrNameTooLong, FileErrNotDir, FileErrIsDir, FileErrNotRegular, FileErrPermission,
	FileErrNoSpace, FileErrNotFound, FileErrExists, FileErrLoop, FileErrTooLarge, FileErrTooManyEntries,
}
