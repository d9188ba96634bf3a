package wire_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/paddock-dev/paddock/runner/wire"
)

// FuzzReader decodes arbitrary bytes. The seeds are in
// testdata/fuzz/FuzzReader. Every frame the Reader returns must re-encode to
// exactly the bytes it was read from, and the Reader must stop with one of
// its documented errors for the reason the remaining bytes give.
func FuzzReader(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		r := wire.NewReader(bytes.NewReader(data))
		off := 0 // bytes of data accounted for by decoded frames
		for {
			fr, err := r.Read()
			if err != nil {
				checkStop(t, data[off:], err)
				return
			}
			if len(fr.Payload) > wire.MaxPayload {
				t.Fatalf("frame at %d: payload of %d bytes is over MaxPayload", off, len(fr.Payload))
			}

			var enc bytes.Buffer
			if err := wire.NewWriter(&enc).Write(fr.Type, fr.Payload); err != nil {
				t.Fatalf("frame at %d: re-encoding %c frame: %v", off, fr.Type, err)
			}
			if !bytes.HasPrefix(data[off:], enc.Bytes()) {
				t.Fatalf("frame at %d: re-encodes to %q, input has %q", off, enc.Bytes(), data[off:min(len(data), off+enc.Len())])
			}
			off += enc.Len()

			again := wire.NewReader(&enc)
			back, err := again.Read()
			if err != nil {
				t.Fatalf("frame at %d: decoding its re-encoding: %v", off, err)
			}
			if back.Type != fr.Type || !bytes.Equal(back.Payload, fr.Payload) {
				t.Fatalf("frame at %d: round trip gave %c %q, want %c %q", off, back.Type, back.Payload, fr.Type, fr.Payload)
			}
			if _, err := again.Read(); err != io.EOF {
				t.Fatalf("frame at %d: after the round-tripped frame Read returned %v, want io.EOF", off, err)
			}
		}
	})
}

// checkStop checks that err is the right reason for the Reader to stop
// with rest undecoded.
func checkStop(t *testing.T, rest []byte, err error) {
	t.Helper()
	var want error
	switch {
	case len(rest) == 0:
		want = io.EOF
	case len(rest) < 5: // the whole header is read before it is checked
		want = io.ErrUnexpectedEOF
	case !validType(rest[0]):
		want = wire.ErrUnknownType
	case binary.BigEndian.Uint32(rest[1:5]) > wire.MaxPayload:
		want = wire.ErrTooLarge
	default:
		want = io.ErrUnexpectedEOF // the declared payload runs past the end
	}
	if !errors.Is(err, want) {
		t.Fatalf("Read stopped with %v before %q, want %v", err, rest[:min(len(rest), 16)], want)
	}
	if want == io.EOF && err != io.EOF {
		t.Fatalf("Read returned %#v, want io.EOF itself", err)
	}
}

func validType(b byte) bool {
	switch b {
	case 'H', 'R', 'O', 'E', 'X', 'F', 'B', 'b', // one-shot
		'K', 'C', 'V', 'D', 'I', 'S', 'W', 'G', 'L', 'A', 'Z', // kernel mode
		'M', 'U', 'N', 'J', // commands beside a kernel
		'Q', 'T', 'Y', // questions and stdin of a kernel
		'P': // liveness after a restore
		return true
	}
	return false
}
