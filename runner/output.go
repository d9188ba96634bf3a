package runner

// Output is one entry of a run's Outputs: a file the program left in the
// working directory and a pattern of RunRequest.Outputs matched, returned
// (Error empty) or refused (Error says why); or a pattern's own entry
// (Path empty): it matched nothing, or its walk read too many entries.
type Output struct {
	// Pattern is the request's pattern this entry answers.
	Pattern string
	// Path is the file, relative to the working directory.
	Path string
	// Size is the file's size in bytes: len(Content) for a file returned,
	// the size the sandbox reported for one too large.
	Size int64
	// Mode is the file's type and permissions as ls -l shows them
	// ("-rw-r--r--"); empty when unknown.
	Mode string
	// Content is the file's bytes; nil unless the file is returned.
	Content []byte
	// Error is why the file is not returned; empty when it is.
	Error OutputError
	// Message words Error for the client (set by the core); the sandbox's
	// own text is never shown.
	Message string
}

// OutputError says why an Output carries no content.
type OutputError string

const (
	// OutputNotFound: the pattern matched nothing (Path is empty).
	OutputNotFound OutputError = "not_found"
	// OutputSymlink: the match is a symbolic link, which is not followed
	// (as the file, or as a directory on the way to it).
	OutputSymlink OutputError = "symlink"
	// OutputIsDir: the match is a directory.
	OutputIsDir OutputError = "is_dir"
	// OutputNotRegular: the match is a pipe, socket or device.
	OutputNotRegular OutputError = "not_regular"
	// OutputPermission: the sandbox's user may not read the file.
	OutputPermission OutputError = "permission"
	// OutputTooLarge: the file is larger than what is left of the run's
	// output file budget (RunRequest.MaxOutputBytes).
	OutputTooLarge OutputError = "too_large"
	// OutputTooManyFiles: the run already lists as many entries as it may
	// (RunRequest.MaxOutputFiles); this one is the first left out, and no
	// more follow.
	OutputTooManyFiles OutputError = "too_many_files"
	// OutputTooManyEntries: matching the pattern would read more
	// directory entries than a run's outputs may (Path is empty).
	OutputTooManyEntries OutputError = "too_many_entries"
	// OutputUnreadable: reading the file failed for another reason.
	OutputUnreadable OutputError = "unreadable"
)

// OutputErrors lists every OutputError, for tests and for checking one
// read off the wire.
var OutputErrors = []OutputError{
	OutputNotFound, OutputSymlink, OutputIsDir, OutputNotRegular, OutputPermission,
	OutputTooLarge, OutputTooManyFiles, OutputTooManyEntries, OutputUnreadable,
}

// Truncated reports whether e is a cap leaving out what the program wrote.
func (e OutputError) Truncated() bool {
	return e == OutputTooLarge || e == OutputTooManyFiles || e == OutputTooManyEntries
}
