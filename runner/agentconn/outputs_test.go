package agentconn

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/paddock-dev/paddock/runner"
	"github.com/paddock-dev/paddock/runner/wire"
)

// outFrame is one frame a scripted agent sends: an OutputFile entry, or
// OutputData bytes.
type outFrame struct {
	entry *wire.OutputFile
	data  string
}

func entry(pattern, path string, size int64, code string) outFrame {
	return outFrame{entry: &wire.OutputFile{Pattern: pattern, Path: path, Size: size, Mode: "-rw-r--r--", Code: code}}
}

func data(s string) outFrame { return outFrame{data: s} }

// The host keeps of the agent's output files only what answers the
// request, under its caps, whatever the agent sends.
func TestRunOutputsUnderTheHostsCaps(t *testing.T) {
	patterns := []string{"out/*.png", "log.txt"}
	tests := []struct {
		name      string
		maxBytes  int64
		maxFiles  int
		frames    []outFrame
		die       bool // the agent dies after the frames instead of exiting
		want      []runner.Output
		truncated bool
	}{
		{
			name:   "files in chunks and a pattern matching nothing",
			frames: []outFrame{entry("out/*.png", "out/a.png", 6, ""), data("\x89PN"), data("G\r\n"), entry("log.txt", "", 0, "not_found")},
			want: []runner.Output{
				{Pattern: "out/*.png", Path: "out/a.png", Size: 6, Mode: "-rw-r--r--", Content: []byte("\x89PNG\r\n")},
				{Pattern: "log.txt", Mode: "-rw-r--r--", Error: runner.OutputNotFound},
			},
		},
		{
			name:   "an empty file",
			frames: []outFrame{entry("log.txt", "log.txt", 0, "")},
			want:   []runner.Output{{Pattern: "log.txt", Path: "log.txt", Mode: "-rw-r--r--", Content: []byte{}}},
		},
		{
			name:     "content past the byte cap",
			maxBytes: 8,
			frames: []outFrame{entry("out/*.png", "out/a.png", 5, ""), data("12345"),
				entry("out/*.png", "out/b.png", 5, ""), data("123"), data("45"), entry("log.txt", "log.txt", 3, ""), data("abc")},
			want: []runner.Output{
				{Pattern: "out/*.png", Path: "out/a.png", Size: 5, Mode: "-rw-r--r--", Content: []byte("12345")},
				{Pattern: "out/*.png", Path: "out/b.png", Size: 5, Mode: "-rw-r--r--", Error: runner.OutputTooLarge},
				{Pattern: "log.txt", Path: "log.txt", Size: 3, Mode: "-rw-r--r--", Content: []byte("abc")},
			},
			truncated: true,
		},
		{
			name:     "entries past the count",
			maxFiles: 2,
			frames: []outFrame{entry("out/*.png", "out/a.png", 1, ""), data("a"), entry("out/*.png", "out/b.png", 1, ""), data("b"),
				entry("out/*.png", "out/c.png", 1, ""), data("c"), entry("log.txt", "log.txt", 1, ""), data("l")},
			want: []runner.Output{
				{Pattern: "out/*.png", Path: "out/a.png", Size: 1, Mode: "-rw-r--r--", Content: []byte("a")},
				{Pattern: "out/*.png", Path: "out/b.png", Size: 1, Mode: "-rw-r--r--", Content: []byte("b")},
				{Pattern: "out/*.png", Path: "out/c.png", Error: runner.OutputTooManyFiles},
			},
			truncated: true,
		},
		{
			name: "entries no pattern of the request can match",
			frames: []outFrame{
				entry("*", "secret", 1, ""), data("s"), // not a pattern asked for
				entry("out/*.png", "etc/passwd", 1, ""), data("p"), // not matched by its pattern
				entry("out/*.png", "out/../x.png", 1, ""), data("x"), // not clean
				entry("out/*.png", "out/a.txt", 1, ""), data("t"),
				entry("out/*.png", "out/a.png", 1, "bogus"), // no such code
				entry("log.txt", "log.txt", 0, "not_found"), // not_found names no file
				data("stray"),
				entry("out/*.png", "out", 0, "symlink"), // a link on the way: kept
			},
			want: []runner.Output{{Pattern: "out/*.png", Path: "out", Mode: "-rw-r--r--", Error: runner.OutputSymlink}},
		},
		{
			name:   "content after a refused entry, or short of its size",
			frames: []outFrame{entry("log.txt", "log.txt", 0, "permission"), data("leak"), entry("out/*.png", "out/a.png", 9, ""), data("short")},
			want: []runner.Output{
				{Pattern: "log.txt", Path: "log.txt", Mode: "-rw-r--r--", Error: runner.OutputPermission},
				{Pattern: "out/*.png", Path: "out/a.png", Size: 5, Mode: "-rw-r--r--", Error: runner.OutputUnreadable},
			},
		},
		{
			name:   "the sandbox dies in the middle of a file",
			frames: []outFrame{entry("log.txt", "log.txt", 2, ""), data("ok"), entry("out/*.png", "out/a.png", 100, ""), data("half")},
			die:    true,
			want: []runner.Output{
				{Pattern: "log.txt", Path: "log.txt", Size: 2, Mode: "-rw-r--r--", Content: []byte("ok")},
				{Pattern: "out/*.png", Path: "out/a.png", Size: 4, Mode: "-rw-r--r--", Error: runner.OutputUnreadable},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, a := connect(t)
			go func() {
				var run wire.Run
				_ = json.Unmarshal(a.expect(wire.TypeRun).Payload, &run)
				if !reflect.DeepEqual(run.Outputs, patterns) || run.MaxOutputBytes != tt.maxBytes || run.MaxOutputFiles != tt.maxFiles {
					t.Errorf("agent got outputs %q, %d bytes, %d files", run.Outputs, run.MaxOutputBytes, run.MaxOutputFiles)
				}
				for _, f := range tt.frames {
					if f.entry != nil {
						a.send(wire.TypeOutputFile, *f.entry)
					} else {
						_ = a.out.Write(wire.TypeOutputData, []byte(f.data))
					}
				}
				if tt.die {
					_ = a.outW.Close()
					return
				}
				a.send(wire.TypeExit, wire.Exit{Reason: "ok"})
			}()
			res, err := c.Run(t.Context(), runner.RunRequest{Code: "x", Timeout: time.Minute,
				Outputs: patterns, MaxOutputBytes: tt.maxBytes, MaxOutputFiles: tt.maxFiles}, nil)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if !reflect.DeepEqual(res.Outputs, tt.want) || res.OutputsTruncated != tt.truncated {
				t.Errorf("outputs (truncated %v):\n%+v\nwant (truncated %v):\n%+v", res.OutputsTruncated, res.Outputs, tt.truncated, tt.want)
			}
		})
	}
}
