package api

import (
	"encoding/base64"
	"errors"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/paddock-dev/paddock/policy"
	"github.com/paddock-dev/paddock/runner"
)

// toRunRequest checks req against the API's limits and returns the pool
// template to run it on and the runner's request.
func (s *server) toRunRequest(req runRequest) (string, runner.RunRequest, error) {
	var out runner.RunRequest
	tgt, err := s.targetFor(req.Language)
	if err != nil {
		return "", out, err
	}
	switch {
	case req.Code == nil:
		return "", out, invalid("invalid_request", "code is required")
	case *req.Code == "":
		return "", out, invalid("invalid_request", "code must not be empty")
	}
	out.Code = *req.Code

	if err := policy.Optional("timeout_ms", req.TimeoutMS, s.cfg.MaxTimeout.Milliseconds(), tgt.defaultTimeout.Milliseconds()); err != nil {
		return "", out, outOfRange(err)
	}
	switch {
	case req.TimeoutMS == 0:
		out.Timeout = tgt.defaultTimeout
	default:
		out.Timeout = time.Duration(req.TimeoutMS) * time.Millisecond
	}

	maxOut := s.cfg.MaxOutputBytes
	if err := policy.Optional("max_output_bytes", req.MaxOutputBytes, maxOut, -1); err != nil {
		return "", out, outOfRange(err)
	}
	switch {
	case req.MaxOutputBytes == 0:
		out.MaxStdout, out.MaxStderr = maxOut, maxOut
	default:
		out.MaxStdout, out.MaxStderr = req.MaxOutputBytes, req.MaxOutputBytes
	}

	if out.Files, err = toFiles(req.Files); err != nil {
		return "", out, err
	}
	if out.Args, err = checkArgs(req.Args); err != nil {
		return "", out, err
	}
	if out.Env, err = checkEnv(req.Env); err != nil {
		return "", out, err
	}
	if req.Stdin != "" {
		out.Stdin = []byte(req.Stdin)
	}
	return tgt.template, out, nil
}

// outOfRange is a policy refusal as the API's 400 invalid_request, with
// its message.
func outOfRange(err error) error {
	return invalid("invalid_request", "%s", err.Error())
}

// targetFor returns where runs of language go.
func (s *server) targetFor(language string) (target, error) {
	known := strings.Join(s.languages, ", ")
	if language == "" {
		return target{}, invalid("invalid_request", "language is required (one of: %s)", known)
	}
	tgt, ok := s.byLang[language]
	if !ok {
		return target{}, invalid("unknown_language", "unknown language %q (known: %s)", language, known)
	}
	return tgt, nil
}

func toFiles(files []fileRequest) ([]runner.File, error) {
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
		var content []byte
		switch f.Encoding {
		case "", "utf8":
			content = []byte(f.Content)
		case "base64":
			if content, err = base64.StdEncoding.DecodeString(f.Content); err != nil {
				var corrupt base64.CorruptInputError
				if errors.As(err, &corrupt) {
					return nil, invalid("invalid_request", "files[%d].content is not valid base64 (bad input at offset %d)", i, int64(corrupt))
				}
				return nil, invalid("invalid_request", "files[%d].content is not valid base64", i)
			}
		default:
			return nil, invalid("invalid_request", `files[%d].encoding must be "utf8" or "base64", got %q`, i, f.Encoding)
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
