package agent

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestQuietFileReadsAndWritesAPipe(t *testing.T) {
	r, w, err := os.Pipe() // non-blocking and pollable, as the agent's own
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	qr, qw := Quiet(r), Quiet(w)
	if _, ok := qr.(*quietFile); !ok {
		t.Fatalf("Quiet(pipe) = %T, want *quietFile", qr)
	}
	// More than a pipe holds: the writer waits in the poller for room
	// while the reader drains.
	want := bytes.Repeat([]byte("0123456789abcdef"), 32<<10) // 512 KiB
	go func() {
		if _, err := qw.Write(want); err != nil {
			t.Error(err)
		}
		w.Close()
	}()
	got, err := io.ReadAll(qr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, want the %d written", len(got), len(want))
	}
	if n, err := qr.Read(make([]byte, 4)); n != 0 || err != io.EOF {
		t.Fatalf("read after the end = %d, %v, want 0, EOF", n, err)
	}
}

func TestQuietFileKeepsTheFilesDeadline(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	q := Quiet(r)
	if err := r.SetReadDeadline(time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Read(make([]byte, 4)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline = %v, want os.ErrDeadlineExceeded", err)
	}
}

func TestQuietLeavesABlockingFileAsItIs(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if q := Quiet(f); q != io.ReadWriter(f) {
		t.Fatalf("Quiet(regular file) = %T, want the file itself", q)
	}
}
