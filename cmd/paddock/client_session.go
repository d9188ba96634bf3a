package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// sessionFlags is what `paddock session` was asked.
type sessionFlags struct {
	remote   remoteFlags
	language string
	template string
	outDir   string
	timeout  time.Duration
	ttl      time.Duration
}

func parseSessionFlags(args []string, w io.Writer) (sessionFlags, error) {
	var f sessionFlags
	fs := newClientFlags("session", "[flags] < cells\n\nCells come from stdin and end with an empty line; %quit, %restart, %help are commands.", w)
	f.remote.register(fs)
	fs.StringVar(&f.language, "language", "", "python or node (default python, unless --template names one)")
	fs.StringVar(&f.template, "template", "", "template to open the session on (default: the server's for the language)")
	fs.StringVar(&f.outDir, "out", ".", "directory to save rich outputs (images, HTML...) in")
	fs.DurationVar(&f.timeout, "timeout", 0, "wall-time limit of each cell (default: the server's)")
	fs.DurationVar(&f.ttl, "ttl", 0, "how long the session may stay idle before the server ends it (default: the server's)")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	f.remote.defaultToken()
	if fs.NArg() > 0 {
		return f, fmt.Errorf("session takes no arguments, got %q (cells come from stdin)", fs.Arg(0))
	}
	if f.language == "" && f.template == "" {
		f.language = "python"
	}
	return f, nil
}

// sessionDesc is the part of a session's description the client reads.
type sessionDesc struct {
	ID             string `json:"id"`
	Template       string `json:"template"`
	ExecutionCount int    `json:"execution_count"`
}

// cellEnd is the end event of a streamed cell.
type cellEnd struct {
	ExecutionCount  int    `json:"execution_count"`
	Status          string `json:"status"`
	Reason          string `json:"reason"`
	Message         string `json:"message"`
	StateLost       bool   `json:"state_lost"`
	StateLostReason string `json:"state_lost_reason"`
	KernelRestarted bool   `json:"kernel_restarted"`
}

// cellResult is a result event: display_data, or the cell's value (Main).
type cellResult struct {
	Data map[string]any `json:"data"`
	Main bool           `json:"main"`
}

type cellError struct {
	Name      string   `json:"name"`
	Value     string   `json:"value"`
	Traceback []string `json:"traceback"`
}

// clientSession is `paddock session`: it opens a session, runs each cell
// read from stdin on it, and deletes it at end of input, on %quit or on
// Ctrl-C. A cell is a block of lines ended by an empty line (or the end
// of input); a cell whose first line starts with % is a command.
func clientSession(ctx context.Context, args []string, cio clientIO) int {
	f, err := parseSessionFlags(args, cio.stderr)
	if err != nil {
		return usageExit(cio.stderr, err)
	}
	if err := os.MkdirAll(f.outDir, 0o755); err != nil {
		fmt.Fprintln(cio.stderr, "paddock:", err)
		return exitLocal
	}
	c := newAPIClient(f.remote)
	var sess sessionDesc
	_, err = c.call(ctx, http.MethodPost, "/v1/sessions", map[string]any{
		"language": f.language, "template": f.template, "ttl_s": int64(f.ttl / time.Second)}, &sess)
	if err != nil {
		return reportErr(ctx, cio.stderr, err)
	}
	defer func() {
		// The session goes even after Ctrl-C, so not with ctx.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if _, err := c.call(dctx, http.MethodDelete, "/v1/sessions/"+sess.ID, nil, nil); err != nil {
			fmt.Fprintf(cio.stderr, "paddock: deleting session %s: %v\n", sess.ID, err)
		}
	}()
	tty := isTerminal(cio.stdin)
	if tty {
		fmt.Fprintf(cio.stderr, "session %s on %s; a cell ends with an empty line, %%help lists commands, Ctrl-D quits\n", sess.ID, sess.Template)
	}
	s := &sessionLoop{c: c, f: f, cio: cio, id: sess.ID, next: sess.ExecutionCount + 1}
	cells := newCellReader(cio.stdin)
	for {
		first := fmt.Sprintf("In [%d]: ", s.next)
		if tty {
			fmt.Fprint(cio.stdout, first)
		}
		cell, err := readCellCtx(ctx, cells, tty, cio.stdout, first)
		if ctx.Err() != nil {
			fmt.Fprintln(cio.stderr, "paddock: interrupted")
			return exitInterrupted
		}
		if err != nil && !errors.Is(err, io.EOF) {
			fmt.Fprintln(cio.stderr, "paddock: reading stdin:", err)
			return exitLocal
		}
		if strings.TrimSpace(cell) != "" {
			if quit, code := s.cell(ctx, cell); quit {
				return code
			}
		}
		if err != nil { // EOF
			if tty {
				fmt.Fprintln(cio.stdout)
			}
			return exitOK
		}
	}
}

// readCellCtx reads a cell, giving up when ctx ends (the read itself
// goes on in the background: stdin cannot be interrupted).
func readCellCtx(ctx context.Context, cells *cellReader, tty bool, prompt io.Writer, first string) (string, error) {
	type read struct {
		cell string
		err  error
	}
	ch := make(chan read, 1)
	go func() {
		cell, err := cells.next(func(continued bool) {
			switch {
			case !tty:
			case continued:
				fmt.Fprint(prompt, "   ...: ")
			default:
				fmt.Fprint(prompt, first)
			}
		})
		ch <- read{cell, err}
	}()
	select {
	case r := <-ch:
		return r.cell, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// cellReader splits its input into cells: blocks of lines ended by an
// empty line or the end of input. Blank lines before a cell are skipped;
// a line of only spaces inside one is kept (Python needs some). A
// command (a first line starting with %) is a cell of its own line.
type cellReader struct{ r *bufio.Reader }

func newCellReader(r io.Reader) *cellReader { return &cellReader{bufio.NewReader(r)} }

// next returns the next cell, and io.EOF with the last one (which may
// be empty). prompt is called before each further line is read:
// continued says the cell has begun.
func (c *cellReader) next(prompt func(continued bool)) (string, error) {
	var lines []string
	for {
		line, err := c.r.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.TrimSpace(line) == "" && len(lines) == 0 && err == nil:
			prompt(false) // nothing typed yet
			continue
		case line == "" && err == nil: // only a truly empty line: one of spaces stays in the cell
			return strings.Join(lines, "\n"), nil
		case len(lines) == 0 && strings.HasPrefix(line, "%"):
			return line, err
		}
		if line != "" || err == nil {
			lines = append(lines, line)
		}
		if err != nil {
			return strings.Join(lines, "\n"), err
		}
		prompt(true)
	}
}

// sessionLoop runs cells on one session.
type sessionLoop struct {
	c    *apiClient
	f    sessionFlags
	cio  clientIO
	id   string
	next int // the execution count the next cell is expected to get
}

const sessionHelp = `commands (a cell of one line):
  %quit, %exit   delete the session and quit (so do Ctrl-D and Ctrl-C)
  %restart       start over on a fresh kernel: variables and files are gone
  %help          this list
`

// cell runs one cell or command; quit says the loop must end with code.
func (s *sessionLoop) cell(ctx context.Context, cell string) (quit bool, code int) {
	if strings.HasPrefix(cell, "%") {
		switch strings.TrimSpace(cell) {
		case "%quit", "%exit":
			return true, exitOK
		case "%help":
			_, _ = io.WriteString(s.cio.stderr, sessionHelp)
		case "%restart":
			var info sessionDesc
			if _, err := s.c.call(ctx, http.MethodPost, "/v1/sessions/"+s.id+"/restart", nil, &info); err != nil {
				return true, reportErr(ctx, s.cio.stderr, err)
			}
			s.next = info.ExecutionCount + 1
			fmt.Fprintln(s.cio.stderr, "paddock: restarted on a fresh kernel")
		default:
			fmt.Fprintf(s.cio.stderr, "paddock: unknown command %q\n%s", strings.Fields(cell)[0], sessionHelp)
		}
		return false, 0
	}
	body := map[string]any{"code": cell}
	if s.f.timeout > 0 {
		body["timeout_ms"] = s.f.timeout.Milliseconds()
	}
	rc, err := s.c.stream(ctx, http.MethodPost, "/v1/sessions/"+s.id+"/execute", body)
	if err != nil {
		return true, reportErr(ctx, s.cio.stderr, err)
	}
	defer rc.Close()
	var (
		end     cellEnd
		k       int
		results []cellResult
		raw     []json.RawMessage // the events, for --json
	)
	err = readEvents(rc, func(ev streamEvent) (bool, error) {
		raw = append(raw, json.RawMessage(strings.TrimSpace(string(ev.raw))))
		switch ev.Type {
		case "stdout", "stderr":
			var ch runChunk
			if err := ev.decode(&ch); err != nil {
				return false, err
			}
			w := s.cio.stdout
			if ev.Type == "stderr" {
				w = s.cio.stderr
			}
			if !s.f.remote.json {
				_, _ = io.WriteString(w, ch.Text)
			}
		case "result":
			var r cellResult
			if err := ev.decode(&r); err != nil {
				return false, err
			}
			results = append(results, r)
		case "error":
			var e cellError
			if err := ev.decode(&e); err != nil {
				return false, err
			}
			if !s.f.remote.json {
				printCellError(s.cio.stderr, e)
			}
		case "end":
			return true, ev.decode(&end)
		}
		return false, nil
	})
	if err != nil {
		return true, reportErr(ctx, s.cio.stderr, err)
	}
	n := end.ExecutionCount
	if n == 0 {
		n = s.next
	}
	for _, r := range results {
		saved, err := saveRich(s.f.outDir, n, &k, r.Data)
		if err != nil {
			fmt.Fprintln(s.cio.stderr, "paddock:", err)
			return true, exitLocal
		}
		if s.f.remote.json {
			continue
		}
		if text, ok := r.Data["text/plain"].(string); ok && (r.Main || len(saved) == 0) {
			if r.Main {
				fmt.Fprintf(s.cio.stdout, "Out[%d]: %s\n", n, text)
			} else {
				fmt.Fprintln(s.cio.stdout, text)
			}
		}
		for _, p := range saved {
			fmt.Fprintf(s.cio.stdout, "[saved %s]\n", p)
		}
	}
	if s.f.remote.json {
		b, _ := json.Marshal(raw)
		fmt.Fprintf(s.cio.stdout, "%s\n", b)
	}
	s.next = n + 1
	if end.Reason != "ok" && end.Reason != "error" && end.Reason != "" {
		fmt.Fprintf(s.cio.stderr, "paddock: the cell ended: %s%s\n", end.Reason, prefixed(": ", end.Message))
	}
	if end.StateLost {
		if end.KernelRestarted {
			fmt.Fprintf(s.cio.stderr, "paddock: the session's state is lost (%s); it goes on with a fresh kernel: variables and files are gone\n", end.StateLostReason)
			s.next = 1
		} else {
			fmt.Fprintf(s.cio.stderr, "paddock: the session is lost (%s)\n", end.StateLostReason)
			return true, exitSandboxError
		}
	}
	return false, 0
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

func printCellError(w io.Writer, e cellError) {
	if len(e.Traceback) > 0 {
		fmt.Fprintln(w, strings.Join(e.Traceback, "\n"))
		return
	}
	fmt.Fprintf(w, "%s: %s\n", e.Name, e.Value)
}

// richExt is the file extension of each rich media type the client saves;
// others get .bin (or .txt for text/*, .json for */*+json).
var richExt = map[string]string{
	"image/png":              ".png",
	"image/jpeg":             ".jpg",
	"image/gif":              ".gif",
	"image/svg+xml":          ".svg",
	"text/html":              ".html",
	"text/markdown":          ".md",
	"text/latex":             ".tex",
	"application/json":       ".json",
	"application/javascript": ".js",
	"application/pdf":        ".pdf",
}

func extOf(mime string) string {
	if e, ok := richExt[mime]; ok {
		return e
	}
	switch {
	case strings.HasSuffix(mime, "+json"):
		return ".json"
	case strings.HasPrefix(mime, "text/"):
		return ".txt"
	}
	return ".bin"
}

// saveRich writes every media type of data but text/plain to its own file
// in dir, named out-<n>-<k><ext> with k counting the cell's files from 1,
// and returns their paths. The names are the client's own: nothing the
// server sends chooses where a file goes.
func saveRich(dir string, n int, k *int, data map[string]any) ([]string, error) {
	mimes := make([]string, 0, len(data))
	for m := range data {
		if m != "text/plain" {
			mimes = append(mimes, m)
		}
	}
	slices.Sort(mimes)
	var saved []string
	for _, m := range mimes {
		content, err := richBytes(m, data[m])
		if err != nil {
			return saved, err
		}
		*k++
		p := filepath.Join(dir, fmt.Sprintf("out-%d-%d%s", n, *k, extOf(m)))
		if err := os.WriteFile(p, content, 0o644); err != nil {
			return saved, err
		}
		saved = append(saved, p)
	}
	return saved, nil
}

// richBytes is the content of one media type as Jupyter carries it:
// binary types (images but SVG, PDF) as base64 text, JSON types as JSON,
// text as a string.
func richBytes(mime string, v any) ([]byte, error) {
	s, isString := v.(string)
	if !isString || strings.HasSuffix(mime, "json") {
		return json.MarshalIndent(v, "", "  ")
	}
	if (strings.HasPrefix(mime, "image/") && mime != "image/svg+xml") || mime == "application/pdf" {
		b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(s), ""))
		if err != nil {
			return nil, fmt.Errorf("%s output is not base64: %v", mime, err)
		}
		return b, nil
	}
	return []byte(s), nil
}

// isTerminal reports whether r is a terminal, as an interactive stdin is.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
