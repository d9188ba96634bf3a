package wire

// Output files: a Run may name patterns of files to return. Once the
// program is over the agent answers each pattern, in order, before the
// Exit frame: one OutputFile frame per entry, and, after an entry without
// a Code, the file's bytes in OutputData frames (raw, each at most
// OutputChunk bytes) until the next OutputFile or the Exit. The host
// checks every entry and counts every byte against the Run's caps itself.

// OutputFile is one entry of a run's outputs: a file a pattern matched,
// whose content follows unless Code says why not, or, with Path empty,
// the pattern's own error.
type OutputFile struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path,omitempty"`
	Size    int64  `json:"size,omitempty"`
	Mode    string `json:"mode,omitempty"`
	Code    string `json:"code,omitempty"` // one of the OutputErr codes, or empty
}

// OutputChunk bounds one OutputData frame.
const OutputChunk = 256 << 10

// The caps of a Run whose MaxOutputBytes or MaxOutputFiles is zero.
const (
	DefaultOutputBytes = 1 << 20
	DefaultOutputFiles = 100
)

// The codes of an OutputFile that carries no content, as runner's
// OutputError spells them.
const (
	OutputErrNotFound       = "not_found"        // the pattern matched nothing
	OutputErrSymlink        = "symlink"          // a symbolic link, not followed
	OutputErrIsDir          = "is_dir"           // a directory
	OutputErrNotRegular     = "not_regular"      // a pipe, socket or device
	OutputErrPermission     = "permission"       // the user may not read it
	OutputErrTooLarge       = "too_large"        // over what is left of MaxOutputBytes
	OutputErrTooManyFiles   = "too_many_files"   // the entries are at MaxOutputFiles
	OutputErrTooManyEntries = "too_many_entries" // the walk read too many directory entries
	OutputErrUnreadable     = "unreadable"       // reading failed for another reason
)

// OutputErrCodes lists every code.
var OutputErrCodes = []string{
	OutputErrNotFound, OutputErrSymlink, OutputErrIsDir, OutputErrNotRegular, OutputErrPermission,
	OutputErrTooLarge, OutputErrTooManyFiles, OutputErrTooManyEntries, OutputErrUnreadable,
}
