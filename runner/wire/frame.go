package wire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Type is a frame's kind.
type Type byte

const (
	TypeHello  Type = 'H' // agent → host: ready, JSON Hello
	TypeRun    Type = 'R' // host → agent: JSON Run
	TypeStdout Type = 'O' // agent → host: raw stdout bytes
	TypeStderr Type = 'E' // agent → host: raw stderr bytes
	TypeExit   Type = 'X' // agent → host: JSON Exit
	TypeFail   Type = 'F' // agent → host: JSON Fail, the agent could not run the request

	// A run's output files (see output.go), after its output, before Exit.
	TypeOutputFile Type = 'B' // agent → host: JSON OutputFile
	TypeOutputData Type = 'b' // agent → host: raw bytes of the last OutputFile

	// Kernel mode (see kernel.go). Requests carry an ID that their reply
	// echoes.
	TypeKernel    Type = 'K' // host → agent: JSON KernelOpen; reply Ack
	TypeExecute   Type = 'C' // host → agent: JSON Execute; then Events, Stdout/Stderr, one Done
	TypeEvent     Type = 'V' // agent → host: JSON Event of the running cell
	TypeDone      Type = 'D' // agent → host: JSON Done, the cell ended
	TypeInterrupt Type = 'I' // host → agent: JSON Request; reply Ack
	TypeRestart   Type = 'S' // host → agent: JSON Request; reply Ack once the new interpreter is ready
	TypeFileWrite Type = 'W' // host → agent: JSON FileWrite; reply Ack
	TypeFileRead  Type = 'G' // host → agent: JSON FileRead; reply Ack with Content
	TypeFileList  Type = 'L' // host → agent: JSON FileRead (path only); reply Ack with Entries
	TypeAck       Type = 'A' // agent → host: JSON Ack
	TypeLost      Type = 'Z' // agent → host: JSON Lost, the interpreter died; state is gone

	// Commands beside a kernel (see command.go).
	TypeCommand       Type = 'M' // host → agent: JSON Command; reply Ack (PID), then CommandOutput frames, one CommandEnd
	TypeCommandOutput Type = 'U' // agent → host: a command's output, binary (see CommandOutput)
	TypeCommandEnd    Type = 'N' // agent → host: JSON CommandEnd, the command is over
	TypeCommandKill   Type = 'J' // host → agent: JSON Request with the command's ID; no reply but its CommandEnd

	// Introspection and input (see introspect.go).
	TypeIntrospect   Type = 'Q' // host → agent: JSON Introspect; reply Ack with Answer
	TypeInputRequest Type = 'T' // agent → host: JSON InputRequest of the running cell
	TypeInputReply   Type = 'Y' // host → agent: JSON InputReply; no reply

	// Liveness, used after a sandbox is restored from a snapshot.
	TypePing Type = 'P' // host → agent: any payload; the agent echoes the frame
)

// MaxPayload bounds one frame's payload. A run request carries its files,
// so this is above the API's request-body limit.
const MaxPayload = 64 << 20

const headerSize = 5

var (
	// ErrTooLarge means a frame declared a payload over MaxPayload.
	ErrTooLarge = errors.New("frame payload too large")
	// ErrUnknownType means a frame's type byte is not one of the Type values.
	ErrUnknownType = errors.New("unknown frame type")
)

func (t Type) valid() bool {
	switch t {
	case TypeHello, TypeRun, TypeStdout, TypeStderr, TypeExit, TypeFail, TypeOutputFile, TypeOutputData,
		TypeKernel, TypeExecute, TypeEvent, TypeDone, TypeInterrupt, TypeRestart,
		TypeFileWrite, TypeFileRead, TypeFileList, TypeAck, TypeLost, TypePing,
		TypeCommand, TypeCommandOutput, TypeCommandEnd, TypeCommandKill,
		TypeIntrospect, TypeInputRequest, TypeInputReply:
		return true
	}
	return false
}

// Frame is one decoded frame. Payload is owned by the caller.
type Frame struct {
	Type    Type
	Payload []byte
}

// Writer writes frames; it is safe for concurrent use. Between Hold and
// Release its frames are gathered and then written together, in one write
// of the underlying writer.
type Writer struct {
	mu   sync.Mutex
	w    io.Writer
	held int    // Holds not yet released
	buf  []byte // frames written while held
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write sends one frame. While the Writer is held, the frame joins the
// others held and an error in writing them is Release's.
func (w *Writer) Write(t Type, payload []byte) error {
	if len(payload) > MaxPayload {
		return fmt.Errorf("writing %c frame of %d bytes: %w", t, len(payload), ErrTooLarge)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held > 0 {
		w.buf = appendFrame(w.buf, t, payload)
		if len(w.buf) < heldKeep {
			return nil
		}
		return w.flushLocked() // a long burst goes out in parts
	}
	_, err := w.w.Write(appendFrame(make([]byte, 0, headerSize+len(payload)), t, payload))
	return err
}

// Hold gathers the frames written from now on until the matching Release.
// It is meant for a burst of frames known to be ready, such as a cell's
// last event and its end: one write instead of one per frame.
func (w *Writer) Hold() {
	w.mu.Lock()
	w.held++
	w.mu.Unlock()
}

// Release ends a Hold; the last one writes the frames gathered.
func (w *Writer) Release() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held == 0 {
		return nil
	}
	w.held--
	if w.held > 0 || len(w.buf) == 0 {
		return nil
	}
	return w.flushLocked()
}

func (w *Writer) flushLocked() error {
	_, err := w.w.Write(w.buf)
	if cap(w.buf) > 2*heldKeep {
		w.buf = nil
	} else {
		w.buf = w.buf[:0]
	}
	return err
}

// heldKeep is how many bytes of held frames a Writer gathers before it
// writes them out anyway.
const heldKeep = 64 << 10

func appendFrame(b []byte, t Type, payload []byte) []byte {
	b = append(b, byte(t), 0, 0, 0, 0)
	binary.BigEndian.PutUint32(b[len(b)-4:], uint32(len(payload)))
	return append(b, payload...)
}

// Reader decodes frames. It is not safe for concurrent use.
type Reader struct {
	r *bufio.Reader
}

// NewReader returns a Reader on r.
func NewReader(r io.Reader) *Reader { return &Reader{r: bufio.NewReaderSize(r, 64<<10)} }

// Read returns the next frame. It returns io.EOF at a clean end between
// frames and io.ErrUnexpectedEOF inside one.
func (r *Reader) Read() (Frame, error) {
	var hdr [headerSize]byte
	if _, err := io.ReadFull(r.r, hdr[:]); err != nil {
		return Frame{}, err
	}
	t := Type(hdr[0])
	if !t.valid() {
		return Frame{}, fmt.Errorf("%w 0x%02x", ErrUnknownType, hdr[0])
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n > MaxPayload {
		return Frame{}, fmt.Errorf("%c frame of %d bytes: %w", t, n, ErrTooLarge)
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(r.r, payload); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return Frame{}, err
	}
	return Frame{Type: t, Payload: payload}, nil
}
