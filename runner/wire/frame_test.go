package wire_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/paddock-dev/paddock/runner/wire"
)

func TestWriterEncodes(t *testing.T) {
	t.Parallel()
	long := bytes.Repeat([]byte{'z'}, 258)
	tests := []struct {
		name    string
		typ     wire.Type
		payload []byte
		want    []byte
	}{
		{name: "hello", typ: wire.TypeHello, payload: []byte(`{}`), want: []byte{'H', 0, 0, 0, 2, '{', '}'}},
		{name: "run", typ: wire.TypeRun, payload: []byte(`{"a":1}`), want: []byte{'R', 0, 0, 0, 7, '{', '"', 'a', '"', ':', '1', '}'}},
		{name: "stdout", typ: wire.TypeStdout, payload: []byte("hi"), want: []byte{'O', 0, 0, 0, 2, 'h', 'i'}},
		{name: "stderr", typ: wire.TypeStderr, payload: []byte("oops\n"), want: []byte{'E', 0, 0, 0, 5, 'o', 'o', 'p', 's', '\n'}},
		{name: "exit", typ: wire.TypeExit, payload: []byte("{}"), want: []byte{'X', 0, 0, 0, 2, '{', '}'}},
		{name: "fail", typ: wire.TypeFail, payload: []byte("{}"), want: []byte{'F', 0, 0, 0, 2, '{', '}'}},
		{name: "output file", typ: wire.TypeOutputFile, payload: []byte("{}"), want: []byte{'B', 0, 0, 0, 2, '{', '}'}},
		{name: "output data", typ: wire.TypeOutputData, payload: []byte{0x89, 'P'}, want: []byte{'b', 0, 0, 0, 2, 0x89, 'P'}},
		{name: "empty payload", typ: wire.TypeStdout, payload: []byte{}, want: []byte{'O', 0, 0, 0, 0}},
		{name: "nil payload", typ: wire.TypeStderr, payload: nil, want: []byte{'E', 0, 0, 0, 0}},
		{name: "binary payload", typ: wire.TypeStdout, payload: []byte{0, 0xff, 'H', 0}, want: []byte{'O', 0, 0, 0, 4, 0, 0xff, 'H', 0}},
		{name: "length over one byte", typ: wire.TypeStdout, payload: long, want: append([]byte{'O', 0, 0, 1, 2}, long...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			if err := wire.NewWriter(&buf).Write(tt.typ, tt.payload); err != nil {
				t.Fatalf("Write: %v", err)
			}
			if got := buf.Bytes(); !bytes.Equal(got, tt.want) {
				t.Errorf("Write wrote %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReaderDecodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		stream []byte
		want   []wire.Frame
	}{
		{name: "no frames", stream: []byte{}, want: nil},
		{
			name:   "one frame",
			stream: []byte{'O', 0, 0, 0, 2, 'h', 'i'},
			want:   []wire.Frame{{Type: wire.TypeStdout, Payload: []byte("hi")}},
		},
		{
			name:   "empty payload",
			stream: []byte{'E', 0, 0, 0, 0},
			want:   []wire.Frame{{Type: wire.TypeStderr, Payload: []byte{}}},
		},
		{
			name: "a whole run",
			stream: []byte{
				'H', 0, 0, 0, 2, '{', '}',
				'O', 0, 0, 0, 3, 'o', 'n', 'e',
				'E', 0, 0, 0, 0,
				'E', 0, 0, 0, 1, '!',
				'O', 0, 0, 0, 4, 0, 'X', 0, 0, // a payload that looks like a header is data
				'X', 0, 0, 0, 2, '{', '}',
			},
			want: []wire.Frame{
				{Type: wire.TypeHello, Payload: []byte("{}")},
				{Type: wire.TypeStdout, Payload: []byte("one")},
				{Type: wire.TypeStderr, Payload: []byte{}},
				{Type: wire.TypeStderr, Payload: []byte("!")},
				{Type: wire.TypeStdout, Payload: []byte{0, 'X', 0, 0}},
				{Type: wire.TypeExit, Payload: []byte("{}")},
			},
		},
		{
			name:   "run and fail",
			stream: []byte{'R', 0, 0, 0, 1, 'r', 'F', 0, 0, 0, 1, 'f'},
			want: []wire.Frame{
				{Type: wire.TypeRun, Payload: []byte("r")},
				{Type: wire.TypeFail, Payload: []byte("f")},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := readAll(wire.NewReader(bytes.NewReader(tt.stream)))
			if err != io.EOF {
				t.Fatalf("after %d frames Read returned %v, want io.EOF", len(got), err)
			}
			assertFrames(t, got, tt.want)
		})
	}
}

func TestReaderErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		stream  []byte
		want    []wire.Frame // frames decoded before the error
		wantErr error
	}{
		{name: "clean end after a frame", stream: []byte{'O', 0, 0, 0, 1, 'a'}, want: []wire.Frame{{Type: wire.TypeStdout, Payload: []byte("a")}}, wantErr: io.EOF},
		{name: "type byte only", stream: []byte{'O'}, wantErr: io.ErrUnexpectedEOF},
		{name: "header cut short", stream: []byte{'O', 0, 0, 0}, wantErr: io.ErrUnexpectedEOF},
		{
			name:    "header cut short after a frame",
			stream:  []byte{'O', 0, 0, 0, 1, 'a', 'E', 0},
			want:    []wire.Frame{{Type: wire.TypeStdout, Payload: []byte("a")}},
			wantErr: io.ErrUnexpectedEOF,
		},
		{name: "no payload after header", stream: []byte{'O', 0, 0, 0, 2}, wantErr: io.ErrUnexpectedEOF},
		{name: "payload cut short", stream: []byte{'O', 0, 0, 0, 3, 'a', 'b'}, wantErr: io.ErrUnexpectedEOF},
		{name: "unknown type letter (every upper-case one is taken)", stream: []byte{'x', 0, 0, 0, 1, 'a'}, wantErr: wire.ErrUnknownType},
		{name: "output data", stream: []byte{'b', 0, 0, 0, 1, 0}, want: []wire.Frame{{Type: wire.TypeOutputData, Payload: []byte{0}}}, wantErr: io.EOF},
		{name: "unknown type lower case", stream: []byte{'o', 0, 0, 0, 1, 'a'}, wantErr: wire.ErrUnknownType},
		{name: "zero type byte", stream: []byte{0, 0, 0, 0, 0}, wantErr: wire.ErrUnknownType},
		{name: "unknown type with huge length", stream: []byte{0xff, 0xff, 0xff, 0xff, 0xff}, wantErr: wire.ErrUnknownType},
		{
			name:    "unknown type after a frame",
			stream:  []byte{'X', 0, 0, 0, 0, '?', 0, 0, 0, 0},
			want:    []wire.Frame{{Type: wire.TypeExit, Payload: []byte{}}},
			wantErr: wire.ErrUnknownType,
		},
		{name: "one byte over the limit", stream: []byte{'R', 0x04, 0, 0, 1}, wantErr: wire.ErrTooLarge},
		{name: "largest length", stream: []byte{'O', 0xff, 0xff, 0xff, 0xff}, wantErr: wire.ErrTooLarge},
		// Allocates MaxPayload once: the limit itself is accepted.
		{name: "exactly the limit, cut short", stream: []byte{'R', 0x04, 0, 0, 0, 'x'}, wantErr: io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := readAll(wire.NewReader(bytes.NewReader(tt.stream)))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("after %d frames Read returned %v, want %v", len(got), err, tt.wantErr)
			}
			if tt.wantErr == io.EOF && err != io.EOF {
				t.Errorf("Read returned %#v, want io.EOF itself", err)
			}
			assertFrames(t, got, tt.want)
		})
	}
}

// headerOnly serves one frame header and fails the test if anything reads
// beyond it.
type headerOnly struct {
	t      *testing.T
	header []byte
	done   bool
}

func (h *headerOnly) Read(p []byte) (int, error) {
	if h.done {
		h.t.Errorf("Read past the header")
		return 0, io.ErrUnexpectedEOF
	}
	h.done = true
	return copy(p, h.header), nil
}

// Not parallel: it measures the process's allocations.
func TestReaderRejectsTooLargeBeforeAllocating(t *testing.T) {
	tests := []struct {
		name   string
		header []byte
	}{
		{name: "limit plus one", header: []byte{'R', 0x04, 0, 0, 1}},
		{name: "largest length", header: []byte{'O', 0xff, 0xff, 0xff, 0xff}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := wire.NewReader(&headerOnly{t: t, header: tt.header})
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := r.Read()
			runtime.ReadMemStats(&after)
			if !errors.Is(err, wire.ErrTooLarge) {
				t.Fatalf("Read returned %v, want ErrTooLarge", err)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
				t.Errorf("Read allocated %d bytes before rejecting the frame", n)
			}
		})
	}
}

// countingWriter keeps the first bytes written and counts the rest.
type countingWriter struct {
	head []byte
	n    int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if room := 5 - len(c.head); room > 0 {
		c.head = append(c.head, p[:min(room, len(p))]...)
	}
	c.n += len(p)
	return len(p), nil
}

func TestWriterLimit(t *testing.T) {
	t.Parallel()
	big := make([]byte, wire.MaxPayload+1) // 64 MiB, allocated once
	tests := []struct {
		name     string
		payload  []byte
		wantErr  error
		wantHead []byte
		wantN    int
	}{
		{name: "exactly the limit", payload: big[:64<<20], wantHead: []byte{'R', 0x04, 0, 0, 0}, wantN: 5 + 64<<20},
		{name: "one byte over", payload: big, wantErr: wire.ErrTooLarge, wantHead: nil, wantN: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c countingWriter
			err := wire.NewWriter(&c).Write(wire.TypeRun, tt.payload)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Write returned %v, want %v", err, tt.wantErr)
			}
			if !bytes.Equal(c.head, tt.wantHead) || c.n != tt.wantN {
				t.Errorf("Write wrote %d bytes starting %q, want %d starting %q", c.n, c.head, tt.wantN, tt.wantHead)
			}
		})
	}
}

// yieldingWriter appends without locking and yields inside every call, so
// frames from concurrent Writes interleave unless Writer serialises them
// (and -race reports the unsynchronised append).
type yieldingWriter struct{ buf []byte }

func (y *yieldingWriter) Write(p []byte) (int, error) {
	runtime.Gosched()
	y.buf = append(y.buf, p...)
	return len(p), nil
}

func TestWriterConcurrent(t *testing.T) {
	t.Parallel()
	const writers, frames = 16, 64
	var out yieldingWriter
	w := wire.NewWriter(&out)
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for s := range frames {
				typ := wire.TypeStdout
				if g%2 == 1 {
					typ = wire.TypeStderr
				}
				if err := w.Write(typ, concurrentPayload(g, s)); err != nil {
					t.Errorf("writer %d frame %d: %v", g, s, err)
					return
				}
			}
		})
	}
	wg.Wait()

	got, err := readAll(wire.NewReader(bytes.NewReader(out.buf)))
	if err != io.EOF {
		t.Fatalf("after %d frames Read returned %v, want io.EOF", len(got), err)
	}
	if len(got) != writers*frames {
		t.Fatalf("decoded %d frames, want %d", len(got), writers*frames)
	}
	next := make([]int, writers) // each writer's frames arrive in its order
	for i, f := range got {
		var g, s int
		if _, err := fmt.Sscanf(string(f.Payload), "g%d s%d ", &g, &s); err != nil || g < 0 || g >= writers {
			t.Fatalf("frame %d: payload %q is not a writer's frame", i, f.Payload)
		}
		if s != next[g] || !bytes.Equal(f.Payload, concurrentPayload(g, s)) {
			t.Fatalf("frame %d: got %q, want writer %d's frame %d", i, f.Payload, g, next[g])
		}
		if wantType := wire.Type("OE"[g%2]); f.Type != wantType {
			t.Errorf("frame %d: type %c, want %c", i, f.Type, wantType)
		}
		next[g]++
	}
}

// concurrentPayload is "gGG sSS " padded to a length that varies by frame
// with the writer's letter.
func concurrentPayload(g, s int) []byte {
	head := fmt.Sprintf("g%02d s%02d ", g, s)
	return []byte(head + strings.Repeat(string(rune('a'+g)), (g*7+s*13)%300))
}

func readAll(r *wire.Reader) ([]wire.Frame, error) {
	var frames []wire.Frame
	for {
		f, err := r.Read()
		if err != nil {
			return frames, err
		}
		frames = append(frames, f)
	}
}

func assertFrames(t *testing.T, got, want []wire.Frame) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("decoded %d frames %q, want %d %q", len(got), got, len(want), want)
	}
	for i := range want {
		if got[i].Type != want[i].Type || !bytes.Equal(got[i].Payload, want[i].Payload) {
			t.Errorf("frame %d = %c %q, want %c %q", i, got[i].Type, got[i].Payload, want[i].Type, want[i].Payload)
		}
	}
}
