package core

import (
	"encoding/base64"
	"errors"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/paddock-dev/paddock/runner"
)

// Messages name the fields as /v1 does (timeout_ms, files[i].path, …):
// every door's tools describe the same fields.

// milliseconds is d in whole milliseconds, a fraction rounded away from
// zero, so that no non-zero duration reads as 0 (the default).
func milliseconds(d time.Duration) int64 {
	ms := d.Milliseconds()
	switch rem := d % time.Millisecond; {
	case rem > 0:
		ms++
	case rem < 0:
		ms--
	}
	return ms
}

// seconds is d in whole seconds, a fraction rounded away from zero.
func seconds(d time.Duration) int64 {
	s := int64(d / time.Second)
	switch rem := d % time.Second; {
	case rem > 0:
		s++
	case rem < 0:
		s--
	}
	return s
}

// decodeFiles checks files: at most maxFiles, each path a clean relative
// file path named once, each content decoded as its encoding says.
func decodeFiles(files []File) ([]runner.File, error) {
	if len(files) > maxFiles {
		return nil, invalid("invalid_request", "too many files: %d (at most %d)", len(files), maxFiles)
	}
	if len(files) == 0 {
		return nil, nil
	}
	out := make([]runner.File, 0, len(files))
	seen := make(map[string]int, len(files))
	for i, f := range files {
		p, err := cleanFilePath(f.Path)
		if err != nil {
			return nil, invalid("invalid_path", "files[%d].path %s", i, err)
		}
		if j, dup := seen[p]; dup {
			return nil, invalid("invalid_path", "files[%d].path %q is the same file as files[%d].path", i, f.Path, j)
		}
		seen[p] = i
		content := f.Content
		switch f.Encoding {
		case "", "utf8":
		case "base64":
			content = make([]byte, base64.StdEncoding.DecodedLen(len(f.Content)))
			n, err := base64.StdEncoding.Decode(content, f.Content)
			if err != nil {
				var corrupt base64.CorruptInputError
				if errors.As(err, &corrupt) {
					return nil, invalid("invalid_request", "files[%d].content is not valid base64 (bad input at offset %d)", i, int64(corrupt))
				}
				return nil, invalid("invalid_request", "files[%d].content is not valid base64", i)
			}
			content = content[:n]
		default:
			return nil, invalid("invalid_request", `files[%d].encoding must be "utf8" or "base64", got %q`, i, f.Encoding)
		}
		if content == nil {
			content = []byte{}
		}
		out = append(out, runner.File{Path: p, Content: content})
	}
	return out, nil
}

// cleanFilePath checks that p names a file inside the working directory and
// returns it cleaned. Its errors complete the phrase "files[i].path …".
func cleanFilePath(p string) (string, error) {
	switch {
	case p == "":
		return "", errors.New("must not be empty")
	case len(p) > maxPathLen:
		return "", errors.New("is too long (at most 4096 bytes)")
	case strings.IndexByte(p, 0) >= 0:
		return "", errors.New("must not contain a NUL byte")
	case strings.HasPrefix(p, "/"):
		return "", errors.New("must be relative to the working directory")
	case slices.Contains(strings.Split(p, "/"), ".."):
		return "", errors.New(`must not contain ".." components`)
	}
	clean := path.Clean(p)
	if clean == "." || strings.HasSuffix(p, "/") {
		return "", errors.New("must name a file, not a directory")
	}
	return clean, nil
}

// checkOutputs checks a run's output patterns: at most maxOutputPatterns,
// each a path as cleanFilePath accepts it (it must also be clean) that is
// a well-formed path.Match pattern. An empty list is nil.
func checkOutputs(patterns []string) ([]string, error) {
	if len(patterns) > maxOutputPatterns {
		return nil, invalid("invalid_request", "too many outputs: %d (at most %d)", len(patterns), maxOutputPatterns)
	}
	for i, p := range patterns {
		clean, err := cleanFilePath(p)
		if err == nil && clean != p {
			err = errors.New(`must be a clean path: no empty or "." components`)
		}
		if err == nil {
			if _, merr := path.Match(p, ""); merr != nil {
				err = errors.New("is not a valid pattern (path.Match syntax: *, ?, [a-z], \\ escapes)")
			}
		}
		if err != nil {
			return nil, invalid("invalid_path", "outputs[%d] %s", i, err)
		}
	}
	if len(patterns) == 0 {
		return nil, nil
	}
	return patterns, nil
}

func checkArgs(args []string) ([]string, error) {
	if len(args) > maxArgs {
		return nil, invalid("invalid_request", "too many args: %d (at most %d)", len(args), maxArgs)
	}
	for i, a := range args {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, invalid("invalid_request", "args[%d] must not contain a NUL byte", i)
		}
	}
	return args, nil
}

// checkEnv checks env's size, keys and values; an empty env is nil.
func checkEnv(env map[string]string) (map[string]string, error) {
	if len(env) > maxEnv {
		return nil, invalid("invalid_request", "too many env entries: %d (at most %d)", len(env), maxEnv)
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys) // report the same first problem every time
	for _, k := range keys {
		switch {
		case k == "":
			return nil, invalid("invalid_request", "env keys must not be empty")
		case strings.ContainsRune(k, '='):
			return nil, invalid("invalid_request", "env key %q must not contain '='", k)
		case strings.IndexByte(k, 0) >= 0:
			return nil, invalid("invalid_request", "env key %q must not contain a NUL byte", k)
		case strings.IndexByte(env[k], 0) >= 0:
			return nil, invalid("invalid_request", "env[%q] must not contain a NUL byte", k)
		}
	}
	if len(env) == 0 {
		return nil, nil
	}
	return env, nil
}

// CheckPath refuses what no file in a session's working directory can be
// named by, as WriteFile and ReadFile do (a door may check before it
// reads a body). The agent in the sandbox checks the same, then resolves
// the path and refuses any that leads out (through a symbolic link).
func CheckPath(p string) error {
	_, err := checkSessionPath("path", p, true)
	return err
}

// checkSessionPath checks p, named param in messages ("path" for a file,
// "list" for a directory to list). A file (required) is never the working
// directory; a directory to list may be "" or ".".
func checkSessionPath(param, p string, required bool) (string, error) {
	switch {
	case p == "" && required:
		return "", invalid("invalid_path", "%s is required (a path relative to the session's working directory)", param)
	case len(p) > maxPathLen:
		return "", invalid("invalid_path", "%s is too long (at most %d bytes)", param, maxPathLen)
	case strings.IndexByte(p, 0) >= 0:
		return "", invalid("invalid_path", "%s must not contain a NUL byte", param)
	case strings.HasPrefix(p, "/"):
		return "", invalid("invalid_path", "%s must be relative to the session's working directory, not absolute", param)
	case slices.Contains(strings.Split(p, "/"), ".."):
		return "", invalid("invalid_path", `%s must not contain ".." components`, param)
	case p == "." && required:
		return "", invalid("invalid_path", "%s must name a file, not the working directory", param)
	case p != "" && path.Clean(p) != p:
		return "", invalid("invalid_path", `%s must be a clean path: no empty or "." components, no trailing slash`, param)
	}
	return p, nil
}
