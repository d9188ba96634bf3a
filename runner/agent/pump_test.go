package agent

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestQuotaTake(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		limit    int64
		writes   []int
		wantKeep []int
		wantOver []bool
	}{
		{name: "under", limit: 10, writes: []int{3, 4}, wantKeep: []int{3, 4}, wantOver: []bool{false, false}},
		{name: "exactly", limit: 10, writes: []int{4, 6}, wantKeep: []int{4, 6}, wantOver: []bool{false, false}},
		{name: "one byte over", limit: 10, writes: []int{10, 1}, wantKeep: []int{10, 0}, wantOver: []bool{false, true}},
		{name: "split", limit: 10, writes: []int{8, 5, 5}, wantKeep: []int{8, 2, 0}, wantOver: []bool{false, true, true}},
		{name: "zero limit", limit: 0, writes: []int{1}, wantKeep: []int{0}, wantOver: []bool{true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := quota{limit: tt.limit}
			for i, n := range tt.writes {
				keep, over := q.take(n)
				if keep != tt.wantKeep[i] || over != tt.wantOver[i] {
					t.Errorf("write %d of %d: take = %d, %v; want %d, %v", i, n, keep, over, tt.wantKeep[i], tt.wantOver[i])
				}
			}
		})
	}
}

func TestScanReady(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		input       string
		oneByte     bool
		wantRest    string
		wantDropped string
		wantErr     error
	}{
		{name: "marker only", input: "\x00paddock:ready\x00", wantRest: "", wantDropped: ""},
		{name: "warm-up output", input: "warming\n\x00paddock:ready\x00", wantRest: "", wantDropped: "warming\n"},
		{name: "bytes after", input: "w\x00paddock:ready\x00run", wantRest: "run", wantDropped: "w"},
		{name: "split marker", input: "warming\n\x00paddock:ready\x00run", oneByte: true, wantRest: "", wantDropped: "warming\n"},
		{name: "partial marker then EOF", input: "x\x00paddock:rea", wantDropped: "x\x00paddock:rea", wantErr: ErrNotReady},
		{name: "empty", input: "", wantErr: ErrNotReady},
		{name: "big warm-up output", input: strings.Repeat("w", 100_000) + "\x00paddock:ready\x00", wantDropped: strings.Repeat("w", 100_000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r io.Reader = strings.NewReader(tt.input)
			if tt.oneByte {
				r = iotest.OneByteReader(r)
			}
			var dropped bytes.Buffer
			rest, err := scanReady(r, func(b []byte) { dropped.Write(b) })
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("scanReady error = %v, want %v", err, tt.wantErr)
			}
			if string(rest) != tt.wantRest || dropped.String() != tt.wantDropped {
				t.Errorf("rest %q, dropped %q; want %q, %q", rest, dropped.String(), tt.wantRest, tt.wantDropped)
			}
		})
	}
}

// The drivers must write exactly the marker the agent looks for, once on
// each stream.
func TestDriversWriteMarker(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		want int
	}{
		{name: "driver.py", src: pythonDriver, want: 1}, // in a loop over fds 1 and 2
		{name: "driver.js", src: nodeDriver, want: 2},
	}
	for _, tt := range tests {
		if got := strings.Count(tt.src, `\x00paddock:ready\x00`); got != tt.want {
			t.Errorf("%s writes the marker %d times, want %d", tt.name, got, tt.want)
		}
	}
}
