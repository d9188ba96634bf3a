package runnertest

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/paddock-dev/paddock/runner"
)

// WriteFile calls WriteFileFunc or stores content in the in-memory working
// directory. A path that is empty, absolute, has a NUL byte or a ".."
// component is refused with a runner.FileError, as the agent would.
func (k *Kernel) WriteFile(ctx context.Context, p string, content []byte) error {
	if k.isLost() {
		return k.lostErr()
	}
	if k.WriteFileFunc != nil {
		return k.WriteFileFunc(ctx, p, content)
	}
	clean, err := cleanPath(runner.FileWrite, p)
	if err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.files[clean] = append([]byte(nil), content...)
	return nil
}

// ReadFile calls ReadFileFunc or reads the in-memory file; a runner.FileError
// when it is missing, has more than maxBytes (when maxBytes > 0) or the
// path is refused.
func (k *Kernel) ReadFile(ctx context.Context, p string, maxBytes int64) ([]byte, error) {
	if k.isLost() {
		return nil, k.lostErr()
	}
	if k.ReadFileFunc != nil {
		return k.ReadFileFunc(ctx, p, maxBytes)
	}
	clean, err := cleanPath(runner.FileRead, p)
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	b, ok := k.files[clean]
	switch {
	case !ok:
		return nil, &runner.FileError{Op: runner.FileRead, Path: p, Kind: runner.FileNotFound, Detail: "fake kernel: no " + clean}
	case maxBytes > 0 && int64(len(b)) > maxBytes:
		return nil, &runner.FileError{Op: runner.FileRead, Path: p, Kind: runner.FileTooLarge,
			Detail: fmt.Sprintf("fake kernel: %s is larger than %d bytes", clean, maxBytes)}
	}
	return append([]byte(nil), b...), nil
}

// ListFiles calls ListFilesFunc or lists the in-memory directory dir (""
// or "." is the working directory), sorted by name; every file reports
// FileMTime. A directory with nothing in it is not found (a runner.FileError).
func (k *Kernel) ListFiles(ctx context.Context, dir string) ([]runner.FileInfo, error) {
	if k.isLost() {
		return nil, k.lostErr()
	}
	if k.ListFilesFunc != nil {
		return k.ListFilesFunc(ctx, dir)
	}
	prefix := ""
	if dir != "" && dir != "." {
		clean, err := cleanPath(runner.FileList, dir)
		if err != nil {
			return nil, err
		}
		prefix = clean + "/"
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	byName := map[string]runner.FileInfo{}
	for p, b := range k.files {
		rest, ok := strings.CutPrefix(p, prefix)
		if !ok {
			continue
		}
		if name, _, isDir := strings.Cut(rest, "/"); isDir {
			byName[name] = runner.FileInfo{Name: name, IsDir: true, Mode: "drwxr-xr-x", MTime: FileMTime}
		} else {
			byName[name] = runner.FileInfo{Name: name, Size: int64(len(b)), Mode: "-rw-r--r--", MTime: FileMTime}
		}
	}
	if len(byName) == 0 && prefix != "" {
		return nil, &runner.FileError{Op: runner.FileList, Path: dir, Kind: runner.FileNotFound, Detail: "fake kernel: no " + dir}
	}
	out := make([]runner.FileInfo, 0, len(byName))
	for _, fi := range byName {
		out = append(out, fi)
	}
	slices.SortFunc(out, func(a, b runner.FileInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func cleanPath(op runner.FileOp, p string) (string, error) {
	var why string
	switch {
	case p == "":
		why = "empty path"
	case strings.IndexByte(p, 0) >= 0:
		why = "path has a NUL byte"
	case strings.HasPrefix(p, "/"):
		why = "absolute path"
	case slices.Contains(strings.Split(p, "/"), ".."):
		why = "path leaves the working directory"
	case path.Clean(p) == ".":
		why = "path names the working directory"
	}
	if why != "" {
		return "", &runner.FileError{Op: op, Path: p, Kind: runner.FileBadPath, Detail: "fake kernel: " + why}
	}
	return path.Clean(p), nil
}
