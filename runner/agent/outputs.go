package agent

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"

	"github.com/paddock-dev/paddock/runner/agent/workspace"
	"github.com/paddock-dev/paddock/runner/wire"
)

// A run's output files. Once the program is over, and every user process
// killed, the agent answers the run's patterns in order (wire/output.go).
// Nothing runs in the working directory any more, but user code may have
// left symbolic links, pipes or huge files there: the walk never follows a
// link, descends only into real directories, opens only regular files the
// user may read, reads at most what is left of the byte budget, and reads
// at most maxOutputWalk directory entries in all.

// maxOutputWalk bounds the directory entries one run's patterns may read.
const maxOutputWalk = workspace.MaxListEntries

// errWalkTooLong stops a pattern whose walk would read too many entries.
var errWalkTooLong = errors.New("too many directory entries to match")

// checkPattern accepts what checkPath accepts that is also a well-formed
// path.Match pattern.
func checkPattern(p string) error {
	if err := workspace.CheckPath(p); err != nil {
		return err
	}
	if _, err := path.Match(p, ""); err != nil {
		return fmt.Errorf("pattern %q: %v: %w", p, err, ErrBadPath)
	}
	return nil
}

// outputWalk answers one run's patterns.
type outputWalk struct {
	w     workspace.Dir
	send  func(wire.OutputFile, []byte) error
	room  int64 // content bytes left
	left  int   // entries left
	walk  int   // directory entries left to read
	seen  map[string]bool
	ended bool // an entry past the cap was sent: nothing more follows
}

// sendOutputs answers req's patterns on the session's writer.
func (s *session) sendOutputs(req wire.Run) error {
	if len(req.Outputs) == 0 {
		return nil
	}
	o := &outputWalk{
		w:    s.files,
		send: s.sendOutput,
		room: cmp.Or(req.MaxOutputBytes, wire.DefaultOutputBytes),
		left: cmp.Or(req.MaxOutputFiles, wire.DefaultOutputFiles),
		walk: maxOutputWalk,
		seen: make(map[string]bool),
	}
	for _, p := range req.Outputs {
		if err := o.pattern(p); err != nil || o.ended {
			return err
		}
	}
	return nil
}

// sendOutput sends one entry, and its content in chunks when it has no
// code.
func (s *session) sendOutput(e wire.OutputFile, content []byte) error {
	if err := writeJSON(s.w, wire.TypeOutputFile, e); err != nil {
		return fmt.Errorf("sending output file: %w", err)
	}
	for len(content) > 0 {
		n := min(len(content), wire.OutputChunk)
		if err := s.w.Write(wire.TypeOutputData, content[:n]); err != nil {
			return fmt.Errorf("sending output file: %w", err)
		}
		content = content[n:]
	}
	return nil
}

// match is a path a pattern matched, as lstat(2) describes it: the file
// the whole pattern names, or a symbolic link the pattern names literally
// where it needs a directory.
type match struct {
	path string
	info fs.FileInfo
}

// pattern answers p: each match not answered before, or p's own error.
func (o *outputWalk) pattern(p string) error {
	var matches []match
	err := o.glob(".", strings.Split(p, "/"), &matches)
	if errors.Is(err, errWalkTooLong) {
		return o.emit(wire.OutputFile{Pattern: p, Code: wire.OutputErrTooManyEntries}, nil)
	}
	if len(matches) == 0 {
		return o.emit(wire.OutputFile{Pattern: p, Code: wire.OutputErrNotFound}, nil)
	}
	for _, m := range matches {
		if o.seen[m.path] {
			continue
		}
		o.seen[m.path] = true
		if err := o.answer(p, m); err != nil || o.ended {
			return err
		}
	}
	return nil
}

// glob appends to out the paths beneath dir that match the pattern's
// components comps, in lexical order. A link is never followed: as the
// last component it is a match (refused), and where the pattern needs a
// directory it is one when the pattern names it literally ("out" of
// "out/*.png"), else it is passed over as files are.
func (o *outputWalk) glob(dir string, comps []string, out *[]match) error {
	comp, rest := comps[0], comps[1:]
	names, literal := []string{comp}, !hasMeta(comp)
	if !literal {
		listed, err := o.readDir(dir)
		if err != nil {
			return err
		}
		names = names[:0]
		for _, name := range listed {
			if ok, _ := path.Match(comp, name); ok {
				names = append(names, name)
			}
		}
	}
	for _, name := range names {
		p := path.Join(dir, name)
		fi, err := o.w.Lstat(p)
		if err != nil {
			continue // nothing there, so no match
		}
		link := fi.Mode()&fs.ModeSymlink != 0
		switch {
		case len(rest) == 0, link && literal:
			*out = append(*out, match{path: p, info: fi})
		case fi.IsDir():
			if err := o.glob(p, rest, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// hasMeta reports whether comp holds any of path.Match's special
// characters.
func hasMeta(comp string) bool {
	return strings.ContainsAny(comp, `*?[\`)
}

// readDir returns the names in the directory dir, sorted, charging them
// to the walk; a directory it cannot read has none.
func (o *outputWalk) readDir(dir string) ([]string, error) {
	d, err := o.w.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY)
	if err != nil {
		return nil, nil
	}
	defer d.Close()
	names, err := d.Readdirnames(o.walk + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, nil
	}
	if len(names) > o.walk {
		return nil, errWalkTooLong
	}
	o.walk -= len(names)
	slices.Sort(names)
	return names, nil
}

// answer sends the entry for the match m of pattern p: the file with its
// content, or why not.
func (o *outputWalk) answer(p string, m match) error {
	e := wire.OutputFile{Pattern: p, Path: m.path, Mode: workspace.LsMode(m.info.Mode())}
	mode := m.info.Mode()
	switch {
	case mode&fs.ModeSymlink != 0:
		e.Code = wire.OutputErrSymlink
	case mode.IsDir():
		e.Code = wire.OutputErrIsDir
	case !mode.IsRegular():
		e.Code = wire.OutputErrNotRegular
	case o.w.MayRead(m.info) != nil:
		e.Code = wire.OutputErrPermission
	case m.info.Size() > o.room:
		e.Code, e.Size = wire.OutputErrTooLarge, m.info.Size()
	}
	if e.Code != "" {
		return o.emit(e, nil)
	}
	content, code := o.read(m)
	e.Code, e.Size = code, int64(len(content))
	if code == wire.OutputErrTooLarge {
		e.Size = m.info.Size()
	}
	return o.emit(e, content)
}

// read returns the content of the regular file m, at most o.room bytes,
// or the code of why not.
func (o *outputWalk) read(m match) ([]byte, string) {
	// Non-blocking: should the file have become a pipe, opening it must
	// not wait for a writer.
	f, err := o.w.OpenFile(m.path, os.O_RDONLY|syscall.O_NONBLOCK)
	if err != nil {
		return nil, openCode(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, wire.OutputErrUnreadable
	}
	if !os.SameFile(fi, m.info) {
		return nil, wire.OutputErrSymlink // the path now leads elsewhere
	}
	b, err := io.ReadAll(io.LimitReader(f, o.room+1))
	switch {
	case err != nil:
		return nil, wire.OutputErrUnreadable
	case int64(len(b)) > o.room:
		return nil, wire.OutputErrTooLarge
	}
	return b, ""
}

// openCode is the code of a failed open of a match.
func openCode(err error) string {
	switch {
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return wire.OutputErrPermission
	case errors.Is(err, syscall.ELOOP), errors.Is(err, ErrBadPath), workspace.Escapes(err):
		return wire.OutputErrSymlink
	case errors.Is(err, syscall.ENXIO), errors.Is(err, syscall.ENODEV):
		return wire.OutputErrNotRegular
	}
	return wire.OutputErrUnreadable
}

// emit sends e, unless the entries are at their cap: then the first entry
// past it goes out as too_many_files, and nothing after it.
func (o *outputWalk) emit(e wire.OutputFile, content []byte) error {
	if o.left == 0 {
		o.ended = true
		return o.send(wire.OutputFile{Pattern: e.Pattern, Path: e.Path, Code: wire.OutputErrTooManyFiles}, nil)
	}
	o.left--
	o.room -= int64(len(content))
	return o.send(e, content)
}
