package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// runFlags is what `paddock run` was asked.
type runFlags struct {
	remote   remoteFlags
	code     string
	language string
	template string
	files    multiFlag
	outputs  multiFlag
	outDir   string
	stdin    bool
	timeout  time.Duration
	source   string   // the program's file, when not -c
	args     []string // after "--": the program's arguments
}

// parseRunFlags parses `paddock run` arguments; the program comes from
// -c or from the one file named.
func parseRunFlags(args []string, w io.Writer) (runFlags, error) {
	var f runFlags
	fs := newClientFlags("run", "FILE | -c CODE [flags] [-- ARGS...]\n\nRuns the program once and exits with its exit code (docs/client.md lists the others).", w)
	f.remote.register(fs)
	fs.StringVar(&f.code, "c", "", "the program's code, instead of a FILE")
	fs.StringVar(&f.language, "language", "", "python or node; by default inferred from FILE's extension, python with -c")
	fs.StringVar(&f.template, "template", "", "template to run on (default: the server picks one for the language)")
	fs.Var(&f.files, "file", "upload this local file into the sandbox's workspace (repeatable)")
	fs.Var(&f.outputs, "output", "hand back workspace files matching this glob, saved under --out (repeatable)")
	fs.StringVar(&f.outDir, "out", ".", "directory to save --output files in")
	fs.BoolVar(&f.stdin, "stdin", false, "send this command's stdin as the program's stdin")
	fs.DurationVar(&f.timeout, "timeout", 0, "wall-time limit of the program (default: the server's)")
	// Flags may come after FILE as well as before it; what follows "--"
	// is the program's arguments.
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return f, err
		}
		if used := len(args) - fs.NArg(); used > 0 && args[used-1] == "--" {
			f.args = fs.Args()
			break
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
	f.remote.defaultToken()
	switch {
	case f.code != "" && len(rest) > 0:
		return f, fmt.Errorf("give a FILE or -c CODE, not both (got -c and %q)", rest[0])
	case f.code == "" && len(rest) == 0:
		return f, errors.New("give a FILE to run or -c CODE")
	case len(rest) > 1:
		return f, fmt.Errorf("one FILE only, got %d (upload others with --file)", len(rest))
	case len(rest) == 1:
		f.source = rest[0]
	}
	if f.language == "" && f.template == "" {
		lang, err := inferLanguage(f.source)
		if err != nil {
			return f, err
		}
		f.language = lang
	}
	return f, nil
}

// inferLanguage names the language of a program file by its extension;
// -c CODE (no file) is python unless --language says otherwise.
func inferLanguage(file string) (string, error) {
	if file == "" {
		return "python", nil // -c CODE without --language
	}
	switch strings.ToLower(filepath.Ext(file)) {
	case ".py":
		return "python", nil
	case ".js", ".mjs", ".cjs":
		return "node", nil
	}
	return "", fmt.Errorf("cannot infer the language of %q from its extension (.py is python, .js/.mjs node): give --language", file)
}

// runBody is the JSON of POST /v1/run as the API takes it.
type runBody struct {
	Language  string     `json:"language,omitempty"`
	Template  string     `json:"template,omitempty"`
	Code      string     `json:"code"`
	Files     []fileBody `json:"files,omitempty"`
	Outputs   []string   `json:"outputs,omitempty"`
	Stdin     string     `json:"stdin,omitempty"`
	Args      []string   `json:"args,omitempty"`
	TimeoutMS int64      `json:"timeout_ms,omitempty"`
}

type fileBody struct {
	Path     string `json:"path"`
	Content  string `json:"content"`
	Encoding string `json:"encoding"`
}

// runAnswer is the part of a run's answer the client reads.
type runAnswer struct {
	Stdout        string   `json:"stdout"`
	StdoutBase64  string   `json:"stdout_base64"`
	Stderr        string   `json:"stderr"`
	StderrBase64  string   `json:"stderr_base64"`
	ExitCode      int      `json:"exit_code"`
	Reason        string   `json:"reason"`
	LimitsReached []string `json:"limits_reached"`
	Outputs       []struct {
		Pattern string  `json:"pattern"`
		Path    string  `json:"path"`
		Content *string `json:"content"`
		Error   *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"outputs"`
	OutputsTruncated bool `json:"outputs_truncated"`
}

// buildRunBody reads the program, the uploads and stdin into a request.
func buildRunBody(f runFlags, stdin io.Reader) (runBody, error) {
	b := runBody{Language: f.language, Template: f.template, Code: f.code, Outputs: f.outputs,
		Args: f.args, TimeoutMS: f.timeout.Milliseconds()}
	if f.source != "" {
		src, err := os.ReadFile(f.source)
		if err != nil {
			return b, err
		}
		b.Code = string(src)
	}
	for _, p := range f.files {
		content, err := os.ReadFile(p)
		if err != nil {
			return b, err
		}
		b.Files = append(b.Files, fileBody{Path: workspacePath(p), Content: base64.StdEncoding.EncodeToString(content), Encoding: "base64"})
	}
	if f.stdin {
		in, err := io.ReadAll(stdin)
		if err != nil {
			return b, fmt.Errorf("reading stdin: %w", err)
		}
		b.Stdin = string(in)
	}
	return b, nil
}

// workspacePath is where a local file lands in the workspace: at its
// relative path when that stays inside, else under its base name.
func workspacePath(local string) string {
	p := filepath.ToSlash(filepath.Clean(local))
	if path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") {
		return path.Base(p)
	}
	return p
}

// clientRun is `paddock run`: it streams the program's output to this
// command's stdout and stderr as it comes and exits with the program's
// exit code, or a code of its own for a Paddock reason (runExit). With
// --json it asks for the plain answer and prints it as the server sent it.
func clientRun(ctx context.Context, args []string, cio clientIO) int {
	f, err := parseRunFlags(args, cio.stderr)
	if err != nil {
		return usageExit(cio.stderr, err)
	}
	body, err := buildRunBody(f, cio.stdin)
	if err != nil {
		fmt.Fprintln(cio.stderr, "paddock:", err)
		return exitLocal
	}
	c := newAPIClient(f.remote)
	var ans runAnswer
	if f.remote.json {
		raw, err := c.call(ctx, "POST", "/v1/run", body, &ans)
		if err != nil {
			return reportErr(ctx, cio.stderr, err)
		}
		fmt.Fprintf(cio.stdout, "%s\n", strings.TrimRight(string(raw), "\n"))
	} else {
		ans, err = streamRun(ctx, c, body, cio)
		if err != nil {
			return reportErr(ctx, cio.stderr, err)
		}
		if ans.Reason != "ok" && ans.Reason != "error" {
			fmt.Fprintf(cio.stderr, "paddock: the run ended: %s%s\n", ans.Reason, limitsNote(ans.LimitsReached))
		}
	}
	if len(f.outputs) > 0 {
		if err := saveOutputs(f.outDir, ans, cio.stderr); err != nil {
			fmt.Fprintln(cio.stderr, "paddock:", err)
			return exitLocal
		}
	}
	return runExit(ans.Reason, ans.ExitCode)
}

// reportErr prints err and returns its exit code; after Ctrl-C, whatever
// the failure looked like, the code is exitInterrupted.
func reportErr(ctx context.Context, w io.Writer, err error) int {
	if ctx.Err() != nil {
		fmt.Fprintln(w, "paddock: interrupted")
		return exitInterrupted
	}
	fmt.Fprintln(w, "paddock:", err)
	return exitOf(err)
}

func limitsNote(limits []string) string {
	if len(limits) == 0 {
		return ""
	}
	return " (limits reached: " + strings.Join(limits, ", ") + ")"
}

// runChunk is a stdout or stderr event of a streamed run; base64, when
// set, holds the chunk's exact bytes.
type runChunk struct {
	Text   string `json:"text"`
	Base64 string `json:"base64"`
}

// runEnd is a streamed run's end event: the plain answer, or the error
// that ended the run after the stream began.
type runEnd struct {
	runAnswer
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// streamRun posts the run asking for NDJSON, writes each chunk to
// cio.stdout or cio.stderr as it arrives, and returns the end event's
// answer. Unknown event types are skipped, so that a newer server may
// add some.
func streamRun(ctx context.Context, c *apiClient, body runBody, cio clientIO) (runAnswer, error) {
	rc, err := c.stream(ctx, "POST", "/v1/run", body)
	if err != nil {
		return runAnswer{}, err
	}
	defer rc.Close()
	var end runEnd
	err = readEvents(rc, func(ev streamEvent) (bool, error) {
		switch ev.Type {
		case "stdout", "stderr":
			var ch runChunk
			if err := ev.decode(&ch); err != nil {
				return false, err
			}
			w := cio.stdout
			if ev.Type == "stderr" {
				w = cio.stderr
			}
			writeStream(w, ch.Text, ch.Base64)
		case "end":
			return true, ev.decode(&end)
		}
		return false, nil
	})
	if err != nil {
		return runAnswer{}, err
	}
	if end.Error != nil {
		return runAnswer{}, &apiError{exitServer, fmt.Sprintf("POST /v1/run: the run failed after it began: %s: %s", end.Error.Code, end.Error.Message)}
	}
	return end.runAnswer, nil
}

// writeStream writes a stream's exact bytes when the answer carries them.
func writeStream(w io.Writer, text, b64 string) {
	if b64 != "" {
		if b, err := base64.StdEncoding.DecodeString(b64); err == nil {
			_, _ = w.Write(b)
			return
		}
	}
	_, _ = io.WriteString(w, text)
}

// saveOutputs writes each returned file under dir at its workspace path
// and names it on w; a file the server refused is named with its reason.
// A path from the server never leads outside dir: it is taken as
// relative to dir with every ".." that would climb out dropped.
func saveOutputs(dir string, ans runAnswer, w io.Writer) error {
	for _, o := range ans.Outputs {
		if o.Error != nil {
			fmt.Fprintf(w, "paddock: output %s: %s: %s\n", firstNonEmpty(o.Path, o.Pattern), o.Error.Code, o.Error.Message)
			continue
		}
		if o.Content == nil {
			continue
		}
		dst, err := inside(dir, o.Path)
		if err != nil {
			return err
		}
		content, err := base64.StdEncoding.DecodeString(*o.Content)
		if err != nil {
			return fmt.Errorf("output %s: %w", o.Path, err)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, content, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(w, "paddock: saved %s\n", dst)
	}
	if ans.OutputsTruncated {
		fmt.Fprintln(w, "paddock: some outputs were left out (a cap was reached)")
	}
	return nil
}

// inside is the local path under dir of a server-sent relative path p.
func inside(dir, p string) (string, error) {
	rel := path.Clean("/" + strings.ReplaceAll(p, "\\", "/"))[1:] // "/.." cleans to "/"
	if rel == "" {
		return "", fmt.Errorf("output path %q names no file", p)
	}
	return filepath.Join(dir, filepath.FromSlash(rel)), nil
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
