package agentconn

import (
	"cmp"
	"encoding/json"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/wire"
)

// outputGrace is how long the host waits for the rest of a run once its
// first output file arrives: the agent reads the files after the program
// is over, possibly at its wall-time limit.
const outputGrace = 10 * time.Second

// outputs gathers a run's output files. The agent runs inside the sandbox
// beside the user's code, so nothing it sends is taken on its word: every
// entry must answer one of the request's patterns with a path that
// pattern can match, content counts against the request's byte cap as it
// arrives, and the entries against the request's count.
type outputs struct {
	patterns []string
	maxBytes int64
	maxFiles int

	list    []runner.Output
	sizes   []int64 // the size each entry announced
	open    bool    // the last entry takes the content frames that follow
	used    int64   // content bytes kept
	dropped int     // entries and frames refused, for the log
	begun   bool    // an entry arrived, valid or not
}

func newOutputs(req runner.RunRequest) *outputs {
	return &outputs{patterns: req.Outputs,
		maxBytes: cmp.Or(req.MaxOutputBytes, wire.DefaultOutputBytes),
		maxFiles: cmp.Or(req.MaxOutputFiles, wire.DefaultOutputFiles)}
}

// entry takes an OutputFile frame.
func (o *outputs) entry(payload []byte) {
	o.begun, o.open = true, false
	var e wire.OutputFile
	if err := json.Unmarshal(payload, &e); err != nil || !o.valid(e) {
		o.dropped++
		return
	}
	switch n := len(o.list); {
	case n > o.maxFiles:
		o.dropped++ // the agent was told to stop at the entry past the cap
		return
	case n == o.maxFiles:
		e = wire.OutputFile{Pattern: e.Pattern, Path: e.Path, Code: wire.OutputErrTooManyFiles}
	}
	out := runner.Output{Pattern: e.Pattern, Path: e.Path, Mode: e.Mode, Error: runner.OutputError(e.Code)}
	if e.Code == "" {
		out.Content = []byte{}
		o.open = true
	}
	if e.Code == wire.OutputErrTooLarge {
		out.Size = max(e.Size, 0) // the sandbox's word, for the message only
	}
	o.list = append(o.list, out)
	o.sizes = append(o.sizes, e.Size)
}

// data takes an OutputData frame: content of the last entry. Past the
// byte cap the entry loses its content and is too large.
func (o *outputs) data(chunk []byte) {
	if !o.open {
		o.dropped++
		return
	}
	last := &o.list[len(o.list)-1]
	if o.used+int64(len(chunk)) > o.maxBytes {
		o.used -= int64(len(last.Content))
		last.Size = int64(len(last.Content) + len(chunk))
		last.Content, last.Error = nil, runner.OutputTooLarge
		o.open = false
		return
	}
	o.used += int64(len(chunk))
	last.Content = append(last.Content, chunk...)
}

// result is the entries received, each returned file's size its content's.
// A file whose content did not all arrive as announced (the sandbox died,
// or the agent broke the protocol) is unreadable.
func (o *outputs) result() ([]runner.Output, bool) {
	truncated := false
	for i := range o.list {
		e := &o.list[i]
		if e.Error == "" {
			e.Size = int64(len(e.Content))
			if e.Size != o.sizes[i] {
				e.Content, e.Error = nil, runner.OutputUnreadable
			}
		}
		truncated = truncated || e.Error.Truncated()
	}
	return o.list, truncated
}

// valid checks that e could answer one of the request's patterns.
func (o *outputs) valid(e wire.OutputFile) bool {
	if !slices.Contains(o.patterns, e.Pattern) || len(e.Mode) > len("-rwxrwxrwx") {
		return false
	}
	code := runner.OutputError(e.Code)
	if e.Code != "" && !slices.Contains(runner.OutputErrors, code) {
		return false
	}
	switch code {
	case runner.OutputNotFound, runner.OutputTooManyEntries:
		return e.Path == ""
	case runner.OutputTooManyFiles:
		return e.Path == "" || canMatch(e.Pattern, e.Path, true)
	case runner.OutputSymlink: // also a link on the way to a match
		return canMatch(e.Pattern, e.Path, true)
	}
	return canMatch(e.Pattern, e.Path, false)
}

// canMatch reports whether p, a clean relative path, is matched by
// pattern, or with prefix by its leading components.
func canMatch(pattern, p string, prefix bool) bool {
	if p == "" || p == "." || path.Clean(p) != p || strings.HasPrefix(p, "/") {
		return false
	}
	pats, names := strings.Split(pattern, "/"), strings.Split(p, "/")
	if len(names) > len(pats) || (!prefix && len(names) != len(pats)) {
		return false
	}
	for i, name := range names {
		if ok, err := path.Match(pats[i], name); !ok || err != nil || name == ".." {
			return false
		}
	}
	return true
}
