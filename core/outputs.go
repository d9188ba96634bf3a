package core

import (
	"fmt"

	"github.com/paddock-dev/paddock/runner"
)

// Limits on a run's output files.
const (
	maxOutputPatterns = 32
	// maxOutputFiles bounds the entries of a run's outputs; past it one
	// more, too_many_files, names the first file left out.
	maxOutputFiles = 100
	// maxOutputWalk is the agent's bound on the directory entries a run's
	// patterns read, for the message.
	maxOutputWalk = 10_000
)

// describeOutputs words each refused entry of outputs for the client;
// budget is the run's cap on their content together.
func describeOutputs(outputs []runner.Output, budget int64) {
	for i := range outputs {
		o := &outputs[i]
		o.Message = outputMessage(*o, budget)
	}
}

// outputMessage words o's error, or is empty for a file returned. It
// never repeats the sandbox's own text.
func outputMessage(o runner.Output, budget int64) string {
	switch o.Error {
	case "":
		return ""
	case runner.OutputNotFound:
		return "no file matches the pattern"
	case runner.OutputSymlink:
		return "it is a symbolic link, which is not followed"
	case runner.OutputIsDir:
		return "it is a directory; a pattern such as \"dir/*\" names its files"
	case runner.OutputNotRegular:
		return "it is a pipe, socket or device, not a regular file"
	case runner.OutputPermission:
		return "the sandbox's user may not read it"
	case runner.OutputTooLarge:
		return fmt.Sprintf("it has %d bytes: with the files before it, more than the run's cap of %d bytes (max_output_bytes)", o.Size, budget)
	case runner.OutputTooManyFiles:
		return fmt.Sprintf("a run returns at most %d files: this one and any after it are left out", maxOutputFiles)
	case runner.OutputTooManyEntries:
		return fmt.Sprintf("matching the pattern would read more than the %d directory entries a run's outputs may", maxOutputWalk)
	}
	return "the file could not be read"
}
