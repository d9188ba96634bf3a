package wire_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/paddock-dev/paddock/runner/wire"
)

// writes records each Write of the underlying writer apart.
type writes struct{ calls [][]byte }

func (w *writes) Write(b []byte) (int, error) {
	w.calls = append(w.calls, bytes.Clone(b))
	return len(b), nil
}

func TestHeldFramesGoOutInOneWrite(t *testing.T) {
	t.Parallel()
	var w writes
	fw := wire.NewWriter(&w)
	fw.Hold()
	fw.Hold() // nested: only the outer Release writes
	if err := fw.Write(wire.TypeEvent, []byte("ab")); err != nil {
		t.Fatal(err)
	}
	if err := fw.Release(); err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(wire.TypeDone, []byte("c")); err != nil {
		t.Fatal(err)
	}
	if len(w.calls) != 0 {
		t.Fatalf("%d writes while held, want 0", len(w.calls))
	}
	if err := fw.Release(); err != nil {
		t.Fatal(err)
	}
	want := [][]byte{{'V', 0, 0, 0, 2, 'a', 'b', 'D', 0, 0, 0, 1, 'c'}}
	if len(w.calls) != 1 || !bytes.Equal(w.calls[0], want[0]) {
		t.Fatalf("writes = %q, want %q", w.calls, want)
	}
	// Released: frames go out one write each again, and a Release with
	// nothing held writes nothing.
	if err := fw.Write(wire.TypeAck, []byte("d")); err != nil {
		t.Fatal(err)
	}
	if err := fw.Release(); err != nil {
		t.Fatal(err)
	}
	fw.Hold()
	if err := fw.Release(); err != nil {
		t.Fatal(err)
	}
	if len(w.calls) != 2 || !bytes.Equal(w.calls[1], []byte{'A', 0, 0, 0, 1, 'd'}) {
		t.Fatalf("writes = %q, want the held pair then A", w.calls)
	}
}

func TestHeldFramesPastTheBoundGoOutEarly(t *testing.T) {
	t.Parallel()
	var w writes
	fw := wire.NewWriter(&w)
	fw.Hold()
	big := bytes.Repeat([]byte{'x'}, 40<<10)
	for range 2 {
		if err := fw.Write(wire.TypeStdout, big); err != nil {
			t.Fatal(err)
		}
	}
	if len(w.calls) != 1 || len(w.calls[0]) != 2*(5+40<<10) {
		t.Fatalf("after 80 KiB held: %d writes, want one of both frames", len(w.calls))
	}
	if err := fw.Write(wire.TypeStdout, []byte("y")); err != nil {
		t.Fatal(err)
	}
	if err := fw.Release(); err != nil {
		t.Fatal(err)
	}
	if len(w.calls) != 2 || !bytes.Equal(w.calls[1], []byte{'O', 0, 0, 0, 1, 'y'}) {
		t.Fatalf("writes after Release: %d, want the last frame alone", len(w.calls))
	}
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("pipe gone") }

func TestReleaseReportsTheWriteError(t *testing.T) {
	t.Parallel()
	fw := wire.NewWriter(failing{})
	fw.Hold()
	if err := fw.Write(wire.TypeDone, []byte("{}")); err != nil {
		t.Fatalf("held write = %v, want nil (the error is Release's)", err)
	}
	if err := fw.Release(); err == nil || err.Error() != "pipe gone" {
		t.Fatalf("Release = %v, want pipe gone", err)
	}
}
