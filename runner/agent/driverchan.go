package agent

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/paddock-dev/paddock/runner/wire"
)

// The driver channel: the agent writes requests on the interpreter's fd 3
// and the driver writes reports on its fd 4. Both directions carry frames
// of a 4-byte big-endian length followed by that many bytes of JSON, one
// object per frame, each with an "op".
//
//	agent → driver  {"op":"reseed"}                                Python, before the first request: reseed now
//	                {"op":"run","code":…,"args":[…],"env":{…},"fresh":B}   one-shot; fd 3 is closed after it
//	                {"op":"kernel","env":{…},"source":…,"introspect":…,"fresh":B}  become a kernel (source: kernel.py / kernel.js;
//	                                                               introspect: Node's kernel_introspect.js)
//	                {"op":"execute","seq":S,"key":K,"count":N,"code":…,"env":{…},"stdin":B}
//	                {"op":"interrupt","seq":S}                      stop cell S, now or as it starts
//	                {"op":"complete"|"inspect"|"is_complete","rid":R,"key":Q,"code":…,"cursor_pos":N,"detail_level":D}
//	                                                               a question about code (see kernel_ask.go)
//	                {"op":"input_reply","seq":S,"key":K,"value":…,"error":…}   the answer to cell S's input
//	                one byte, unframed                             one-shot: a hint was read (see interpreter.hints)
//	driver → agent  {"op":"reseeded"}                              the reseed is done
//	                {"op":"limit","limit":"processes"|"disk"}      one-shot: a hint that the program is dying of
//	                                                               that limit's error; see limitReason
//	                {"op":"ready"}                                 kernel mode is on
//	                {"op":"event","seq":S,"key":K,"type":…,…}      an output of cell S (wire.Event fields)
//	                {"op":"done","seq":S,"key":K,"status":"ok"|"error"|"interrupted","error":{…}}
//	                {"op":"input","seq":S,"key":K,"prompt":…,"password":B}   cell S reads a line of input
//	                {"op":"answer","rid":R,"key":Q,"answer":{…}}    the answer to question R (wire.Answer)
//
// A one-shot's fd 3 stays open after the request, for the acknowledgements.
//
// fresh says the driver reseeded after the sandbox's last restore (see
// session.refresh), so it need not reseed again before the request.
//
// Every byte on fd 4 comes from inside the interpreter, where user code runs
// too: the agent bounds each frame and treats a malformed one as the loss of
// the kernel. K is a random key the agent makes for each cell; the driver
// puts the running cell's key in every frame, and the agent drops an event
// or a done without it (see cell). A one-shot's exit code and reason never
// come from fd 4: the agent takes them from the interpreter's wait status.
const driverHeader = 4

// maxDriverFrame bounds a frame the driver sends; an event must fit in one
// wire frame once the agent adds its ID.
const maxDriverFrame = wire.MaxPayload - 4096

// Driver channel operations.
const (
	opReseed    = "reseed"
	opReseeded  = "reseeded"
	opRun       = "run"
	opKernel    = "kernel"
	opExecute   = "execute"
	opInterrupt = "interrupt"
	opLimit     = "limit"
	opReady     = "ready"
	opEvent     = "event"
	opDone      = "done"
	opInput     = "input"
	opInputRep  = "input_reply"
	opAnswer    = "answer"
)

// driverRequest is one frame the agent sends on fd 3.
type driverRequest struct {
	Op     string            `json:"op"`
	Code   string            `json:"code,omitempty"`
	Args   []string          `json:"args,omitempty"`
	Env    map[string]string `json:"env,omitempty"`
	Seq    uint64            `json:"seq,omitempty"`
	Key    string            `json:"key,omitempty"`
	Count  int               `json:"count,omitempty"`
	Source string            `json:"source,omitempty"`
	// Introspect is the Node kernel's answering code (kernel_introspect.js).
	Introspect string `json:"introspect,omitempty"`
	Fresh      bool   `json:"fresh,omitempty"`
	Stdin      bool   `json:"stdin,omitempty"`
	// A question about code (complete, inspect, is_complete).
	RID         uint64 `json:"rid,omitempty"`
	CursorPos   int    `json:"cursor_pos,omitempty"`
	DetailLevel int    `json:"detail_level,omitempty"`
	// An input reply.
	Value string `json:"value,omitempty"`
	Error string `json:"error,omitempty"`
}

// driverReport is one frame the driver sends on fd 4. An event carries the
// fields of wire.Event; the agent sets ID and ExecutionCount itself.
type driverReport struct {
	Op     string `json:"op"`
	Seq    uint64 `json:"seq"`
	Key    string `json:"key"`    // event, done: the cell's key
	Limit  string `json:"limit"`  // limit: the limit hinted at
	Status string `json:"status"` // done
	// input: the prompt and whether it is a password.
	Prompt   string `json:"prompt"`
	Password bool   `json:"password"`
	// answer: the question's number and the interpreter's answer.
	RID    uint64       `json:"rid"`
	Answer *wire.Answer `json:"answer"`
	wire.Event
}

// encodeDriverFrame renders req as one frame, ready for a single write.
func encodeDriverFrame(req driverRequest) ([]byte, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if uint64(len(body)) > math.MaxUint32 {
		return nil, fmt.Errorf("driver request of %d bytes: %w", len(body), wire.ErrTooLarge)
	}
	frame := make([]byte, driverHeader+len(body))
	binary.BigEndian.PutUint32(frame, uint32(len(body)))
	copy(frame[driverHeader:], body)
	return frame, nil
}

// driverReader decodes the driver's frames. It is not safe for concurrent
// use.
type driverReader struct {
	r   *bufio.Reader
	max uint32 // the largest frame accepted
}

// reportBuffer fits a one-shot hint or a reseed report whole, and bounds a
// one-shot's frames.
const reportBuffer = 256

func newDriverReaderSize(r io.Reader, size int) *driverReader {
	return &driverReader{r: bufio.NewReaderSize(r, size), max: maxDriverFrame}
}

// ready says whether the next report is already read in full, so that next
// returns it without waiting on the driver.
func (d *driverReader) ready() bool {
	b := d.r.Buffered()
	if b < driverHeader {
		return false
	}
	hdr, err := d.r.Peek(driverHeader)
	if err != nil {
		return false
	}
	return uint64(b) >= driverHeader+uint64(binary.BigEndian.Uint32(hdr))
}

// next returns the next report. It returns io.EOF at a clean end between
// frames, and an error wrapping ErrDriverProtocol for a frame the agent
// cannot accept.
func (d *driverReader) next() (driverReport, error) {
	var hdr [driverHeader]byte
	if _, err := io.ReadFull(d.r, hdr[:]); err != nil {
		return driverReport{}, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > d.max {
		return driverReport{}, fmt.Errorf("%w: frame of %d bytes", ErrDriverProtocol, n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(d.r, body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return driverReport{}, err
	}
	var rep driverReport
	if err := json.Unmarshal(body, &rep); err != nil {
		return driverReport{}, fmt.Errorf("%w: %v", ErrDriverProtocol, err)
	}
	return rep, nil
}
